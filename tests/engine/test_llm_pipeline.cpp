// LLM nodes through the host: a whole pipeline against the loopback server — secrets never written
// anywhere, a killed run resumed without repeating finished calls.
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdlib>
#include <thread>

#include "test_llm_server.h"
#include "test_support.h"

using namespace testsupport;
using nlohmann::json;
using evalgraph::testing::Fault;
using evalgraph::testing::Rule;
using evalgraph::testing::ServerOptions;
using evalgraph::testing::TestLlmServer;

namespace {
std::string pipeline(const TestLlmServer &srv, const std::string &out_dir, const std::string &extra = "") {
  return "name: llm\ndataset: {path: data.csv}\n"
         "providers:\n  judge:\n    base_url: " + srv.base_url() + "\n    model: m\n    api_key_env: EG_TEST_SECRET_KEY\n"
         "    max_attempts: 2\n    backoff_initial_s: 0.01\n" + extra +
         "nodes:\n  - id: j\n    uses: test.needs_llm\n"
         "sinks:\n  - uses: sink.jsonl\n    with: {file: out.jsonl}\n  - uses: sink.csv\n    with: {file: out.csv}\n"
         "output: {dir: " + out_dir + "}\n";
}
}  // namespace

TEST_CASE("an API key never appears in any file a run writes, nor in its output", "[llm][secrets]") {
  const std::string key = "sk-EVALGRAPH-RECOGNISABLE-7f3a9c";
  setenv("EG_TEST_SECRET_KEY", key.c_str(), 1);
  TestLlmServer srv;
  Rule echo;  // the server echoes the Authorization header in its error message
  echo.match = "leak";
  echo.fault = Fault::http_status;
  echo.status = 401;
  echo.error_message = "invalid key {auth}";
  srv.add_rule(echo);
  Rule ok;
  ok.reply = "answer to {last_user}";
  srv.add_rule(ok);
  TempDir d;
  d.write("data.csv", "text\nhello\nplease leak the key\nbye\n");
  d.write("p.yaml", pipeline(srv, "out"));
  auto r = run_cmd("EG_TEST_SECRET_KEY=" + key + " " +
                   evalgraph_cmd("run --cache " + (d.path / "cache.sqlite").string() + " " + (d.path / "p.yaml").string()));
  INFO(r.output);
  CHECK(r.exit_code == 1);  // the leaking record failed
  CHECK_THAT(r.output, Catch::Contains("invalid key Bearer ***"));
  CHECK(r.output.find(key) == std::string::npos);
  // Every request carried the key (so it was really in play) ...
  REQUIRE(srv.request_count() == 3);
  for (const auto &req : srv.requests()) CHECK(req.headers.at("authorization") == "Bearer " + key);
  // ... and no file under the test folder (results, cache, logs) holds it.
  std::size_t files = 0;
  for (const auto &e : std::filesystem::recursive_directory_iterator(d.path)) {
    if (!e.is_regular_file()) continue;
    ++files;
    INFO(e.path());
    CHECK(read_file(e.path()).find(key) == std::string::npos);
  }
  CHECK(files >= 8);  // pipeline, data, out.jsonl, out.csv, run.json, run.log, pipeline.yaml, cache
  unsetenv("EG_TEST_SECRET_KEY");
}

TEST_CASE("a killed LLM run resumes without repeating finished calls and equals an uninterrupted run", "[llm][resume]") {
  setenv("EG_TEST_SECRET_KEY", "k", 1);
  ServerOptions so;
  so.latency_ms = 20;
  TestLlmServer srv(so);
  Rule ok;
  ok.reply = "reply: {last_user}";
  srv.add_rule(ok);
  TempDir d;
  std::string data = "text\n";
  for (int i = 0; i < 120; ++i) data += "question " + std::to_string(i) + "\n";
  d.write("data.csv", data);
  d.write("clean.yaml", pipeline(srv, "clean"));
  d.write("killed.yaml", pipeline(srv, "killed"));

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
  // Every call answered before the kill came from the run's call log; only calls still in flight at the
  // kill (at most a chunk of 5 per worker) can have been sent twice.
  CHECK(srv.request_count() >= 120);
  CHECK(srv.request_count() <= 130);
  CHECK(read_file(run_dir / "out.jsonl") == read_file(clean_dir / "out.jsonl"));
  CHECK(read_file(run_dir / "out.csv") == read_file(clean_dir / "out.csv"));
  unsetenv("EG_TEST_SECRET_KEY");
}

TEST_CASE("LLM-bound nodes keep many calls in flight with a single worker", "[llm]") {
  setenv("EG_TEST_SECRET_KEY", "k", 1);
  ServerOptions so;
  so.latency_ms = 50;
  TestLlmServer srv(so);
  TempDir d;
  std::string data = "text\n";
  for (int i = 0; i < 64; ++i) data += "q" + std::to_string(i) + "\n";
  d.write("data.csv", data);
  d.write("p.yaml", pipeline(srv, "out", "    max_in_flight: 16\n"));
  auto r = run_cmd("EG_TEST_SECRET_KEY=k " + evalgraph_cmd("run -q -j 1 --no-cache " + (d.path / "p.yaml").string()));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(srv.request_count() == 64);
  CHECK(srv.max_concurrency() == 16);  // the provider's limit, not the one worker, bounds the calls
  unsetenv("EG_TEST_SECRET_KEY");
}
