// evalgraph.chat from a python node against the loopback server: the provider's window kept full (the GIL is
// released while a call waits), the cache, errors per record, and kill -9 + resume repeating no finished call.
#include <catch2/catch.hpp>

#include <chrono>
#include <thread>

#include "llm_fixture.h"
#include "python_fixture.h"
#include "test_llm_server.h"

using namespace testsupport;
using nlohmann::json;
using evalgraph::testing::Fault;
using evalgraph::testing::Rule;
using evalgraph::testing::TestLlmServer;

namespace {

const char *kJudge = R"(import evalgraph

@evalgraph.node(outputs={"verdict": str, "good": bool}, calls_llm=True)
def judge(answer: str, *, provider: str = "judge", temperature: float = 0.0):
    """Asks the judge whether the answer is good."""
    text = evalgraph.chat(provider=provider, prompt="Is this good? " + answer, system="You grade answers.",
                          temperature=temperature, max_tokens=5)
    return {"verdict": text, "good": text.startswith("yes")}
)";

std::string judge_pipeline(const TestLlmServer &srv, const std::string &out, int max_in_flight,
                           const std::string &with_extra = "") {
  return "name: judge\ndataset: {path: data.jsonl, format: jsonl}\n"
         "providers:\n  judge:\n    base_url: " + srv.base_url() + "\n    model: m\n    api_key_env: EG_TEST_SECRET_KEY\n"
         "    max_in_flight: " + std::to_string(max_in_flight) + "\n    max_attempts: 2\n    backoff_initial_s: 0.01\n"
         "nodes:\n  - id: j\n    uses: python\n    inputs: {answer: text}\n    with: {file: judge.py, function: judge" +
         with_extra + "}\nsinks:\n  - uses: sink.jsonl\n    with: {file: out.jsonl}\noutput: {dir: " + out + "}\n";
}

std::string data(int n) {
  std::string s;
  for (int i = 0; i < n; ++i) s += "{\"text\": \"answer " + std::to_string(i) + "\"}\n";
  return s;
}

}  // namespace

TEST_CASE("python: evalgraph.chat keeps the provider's window full with one worker, then the cache answers", "[python][llm]") {
  LlmServer srv(50);
  Rule yes;
  yes.match = "answer 1";
  yes.reply = "yes, {last_user}";
  srv.add_rule(yes);
  srv.reply_all("no");
  TempDir d;
  d.write("data.jsonl", data(64));
  d.write("judge.py", kJudge);
  d.write("p.yaml", judge_pipeline(srv, "out", 16));
  const std::string cache = (d.path / "cache.sqlite").string();
  auto t0 = std::chrono::steady_clock::now();
  auto r = run_cmd("EG_TEST_SECRET_KEY=k " + evalgraph_cmd("run -q -j 1 --cache " + cache + " " + (d.path / "p.yaml").string()));
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(srv.request_count() == 64);
  CHECK(srv.max_concurrency() == 16);  // 16 calls waited at once: the GIL was not held while they waited
  // (No bound on the wall time here: the interpreter's start alone took up to 10 s on a loaded build machine;
  // bench/python_bench.sh measures the judge against N*L/C.)
  INFO("wall " << s << " s");
  std::filesystem::path dir = r.output.substr(0, r.output.size() - 1);
  auto out = read_jsonl(dir / "out.jsonl");
  REQUIRE(out.size() == 64);
  CHECK(out[1]["j"]["good"] == true);
  CHECK(out[1]["j"]["verdict"] == "yes, Is this good? answer 1");
  CHECK(out[2]["j"] == json({{"verdict", "no"}, {"good", false}}));
  // The request as the script built it: system + user message, the options, no model (the provider's).
  json body = json::parse(srv.requests().front().body);
  CHECK(body["messages"][0] == json({{"role", "system"}, {"content", "You grade answers."}}));
  CHECK(body["max_tokens"] == 5);
  CHECK(body["temperature"] == 0.0);
  auto info = json::parse(read_file(dir / "run.json"));
  CHECK(info["llm"]["judge"]["calls"] == 64);
  CHECK(info["nodes"]["j"]["described"]["calls_llm"] == true);

  // The same run again: every answer from the cache, no request sent.
  srv.reset_counters();
  auto again = run_cmd("EG_TEST_SECRET_KEY=k " + evalgraph_cmd("run -q -j 1 --cache " + cache + " " + (d.path / "p.yaml").string()));
  REQUIRE(again.exit_code == 0);
  CHECK(srv.request_count() == 0);
  std::filesystem::path dir2 = again.output.substr(0, again.output.size() - 1);
  CHECK(read_file(dir2 / "out.jsonl") == read_file(dir / "out.jsonl"));
  CHECK(json::parse(read_file(dir2 / "run.json"))["llm"]["judge"]["cache_hits"] == 64);
}

TEST_CASE("python: a failed chat fails its record with ChatError, other records go on", "[python][llm][errors]") {
  LlmServer srv(0);
  Rule bad;
  bad.match = "answer 2";
  bad.fault = Fault::http_500;
  srv.add_rule(bad);
  srv.reply_all("yes");
  TempDir d;
  d.write("data.jsonl", data(4));
  d.write("judge.py", kJudge);
  d.write("p.yaml", judge_pipeline(srv, "out", 4));
  d.write("other.yaml", judge_pipeline(srv, "out", 4, ", provider: nobody"));
  auto r = pytest::run(d, "p.yaml", "--no-cache");
  INFO(r.output);
  CHECK(r.exit_code == 1);
  auto out = read_jsonl(r.dir / "out.jsonl");
  REQUIRE(out.size() == 4);
  CHECK(out[0]["j"]["good"] == true);
  CHECK_THAT(out[2]["_errors"]["j"].get<std::string>(), Catch::StartsWith("error: ChatError: "));
  CHECK_THAT(out[2]["_errors"]["j"].get<std::string>(), Catch::Contains("500"));
  CHECK_THAT(out[2]["_errors"]["j"].get<std::string>(), Catch::EndsWith("(at judge.py:6 in judge)"));
  auto o = pytest::run(d, "other.yaml", "--no-cache");
  CHECK(o.exit_code == 1);
  auto other = read_jsonl(o.dir / "out.jsonl");
  REQUIRE(other.size() == 4);
  INFO(other[0].dump());
  CHECK_THAT(other[0]["_errors"]["j"].get<std::string>(), Catch::StartsWith("error: ChatError: "));
  CHECK_THAT(other[0]["_errors"]["j"].get<std::string>(), Catch::Contains("nobody"));
}

TEST_CASE("python: a killed run with a Python judge resumes without repeating a finished call", "[python][llm][resume]") {
  LlmServer srv(20);
  srv.reply_all("yes {last_user}");
  TempDir d;
  d.write("data.jsonl", data(120));
  d.write("judge.py", kJudge);
  d.write("clean.yaml", judge_pipeline(srv, "clean", 2));
  d.write("killed.yaml", judge_pipeline(srv, "killed", 2));
  auto clean = run_cmd("EG_TEST_SECRET_KEY=k " + evalgraph_cmd("run -q -j 2 --chunk-size 5 --no-cache " + (d.path / "clean.yaml").string()));
  REQUIRE(clean.exit_code == 0);
  std::filesystem::path clean_dir = clean.output.substr(0, clean.output.size() - 1);
  REQUIRE(srv.request_count() == 120);
  srv.reset_counters();

  auto started = run_cmd("(EG_TEST_SECRET_KEY=k " + evalgraph_cmd("run -q -j 2 --chunk-size 5 --no-cache " + (d.path / "killed.yaml").string()) +
                         " > " + (d.path / "pid.out").string() + " 2>&1 & echo $!)");
  std::string pid = started.output.substr(0, started.output.find('\n'));
  std::filesystem::path run_dir;
  for (int i = 0; i < 1000; ++i) {  // kill once a few chunks are journaled (bounded wait)
    if (std::filesystem::exists(d.path / "killed"))
      for (auto &e : std::filesystem::directory_iterator(d.path / "killed")) run_dir = e.path();
    std::string j = run_dir.empty() ? "" : read_file(run_dir / "progress" / "journal.jsonl");
    std::size_t chunks = 0;
    for (std::size_t p = j.find("_chunk_end"); p != std::string::npos; p = j.find("_chunk_end", p + 1)) ++chunks;
    if (chunks >= 3) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  run_cmd("kill -9 " + pid);
  std::size_t before = srv.request_count();
  REQUIRE(before >= 15);
  REQUIRE(before < 120);

  auto resumed = run_cmd("EG_TEST_SECRET_KEY=k " + evalgraph_cmd("run -q --no-cache --resume " + run_dir.string()));
  INFO(resumed.output);
  REQUIRE(resumed.exit_code == 0);
  // Answered calls come from the run's call log; only those in flight at the kill (max_in_flight = 2) repeat.
  CHECK(srv.request_count() >= 120);
  CHECK(srv.request_count() <= 130);  // (the bound of the engine's own resume test)
  CHECK(read_file(run_dir / "out.jsonl") == read_file(clean_dir / "out.jsonl"));
}
