// LLM nodes through the host: a whole pipeline against the loopback server — secrets never written
// anywhere, a killed run resumed without repeating finished calls.
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <thread>

#include "llm_fixture.h"
#include "test_support.h"

using namespace testsupport;
using nlohmann::json;

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
  LlmServer srv(0, 2, key);
  Rule echo;  // the server echoes the Authorization header in its error message
  echo.match = "leak";
  echo.fault = Fault::http_status;
  echo.status = 401;
  echo.error_message = "invalid key {auth}";
  srv.add_rule(echo);
  srv.reply_all("answer to {last_user}");
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
}

TEST_CASE("a killed LLM run resumes without repeating finished calls and equals an uninterrupted run", "[llm][resume]") {
  LlmServer srv(20);
  srv.reply_all("reply: {last_user}");
  TempDir d;
  d.write("data.csv", text_csv(120, [](int i) { return "question " + std::to_string(i); }));
  // Two calls in flight (20 ms each): the run takes ~1.2 s, so the kill below lands in its middle. With the
  // provider's default window the whole run could finish before three chunks are seen in the journal.
  write_clean_and_killed(d, [&](const std::string &dir) { return pipeline(srv, dir, "    max_in_flight: 2\n"); });
  const auto [clean_dir, run_dir] = clean_then_killed(srv, d, "-j 2 --chunk-size 5 --no-cache", 120, 3);
  std::size_t before = srv.request_count();
  REQUIRE(before >= 15);
  REQUIRE(before < 120);

  auto resumed = run_cmd("EG_TEST_SECRET_KEY=k " + evalgraph_cmd("run -q --no-cache --resume " + run_dir.string()));
  INFO(resumed.output);
  REQUIRE(resumed.exit_code == 0);
  // Every call answered before the kill came from the run's call log; only calls still in flight at the
  // kill (at most max_in_flight = 2) can have been sent twice.
  CHECK(srv.request_count() >= 120);
  CHECK(srv.request_count() <= 130);
  CHECK(read_file(run_dir / "out.jsonl") == read_file(clean_dir / "out.jsonl"));
  CHECK(read_file(run_dir / "out.csv") == read_file(clean_dir / "out.csv"));
}

TEST_CASE("LLM-bound nodes keep many calls in flight with a single worker", "[llm]") {
  LlmServer srv(50);
  TempDir d;
  d.write("data.csv", text_csv(64, [](int i) { return "q" + std::to_string(i); }));
  d.write("p.yaml", pipeline(srv, "out", "    max_in_flight: 16\n"));
  auto r = run_cmd("EG_TEST_SECRET_KEY=k " + evalgraph_cmd("run -q -j 1 --no-cache " + (d.path / "p.yaml").string()));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(srv.request_count() == 64);
  CHECK(srv.max_concurrency() == 16);  // the provider's limit, not the one worker, bounds the calls
}

namespace {
// The last message's text of a recorded chat request.
std::string last_content(const evalgraph::testing::RecordedRequest &req) {
  json b = json::parse(req.body, nullptr, false);
  if (b.is_discarded() || !b.contains("messages") || b["messages"].empty()) return "";
  return b["messages"].back().value("content", "");
}

// Two LLM nodes in a chain: a reads the record's text, b reads a's answer. A fixed window (adaptive: false): these
// tests are about the engine's dataflow, and the adaptive window would move with this machine's load (a 5 ms call
// that takes 40 ms reads as a queue; tests/llm/test_llm_rate.cpp tests the window).
std::string chain_pipeline(const TestLlmServer &srv, const std::string &out_dir, int max_in_flight,
                           const std::string &third = "") {
  return "name: chain\ndataset: {path: data.csv}\n"
         "providers:\n  judge:\n    base_url: " +
         srv.base_url() +
         "\n    model: m\n    api_key_env: EG_TEST_SECRET_KEY\n"
         "    max_in_flight: " +
         std::to_string(max_in_flight) +
         "\n    adaptive: false\n"
         "nodes:\n  - {id: a, uses: test.needs_llm}\n  - {id: b, uses: test.needs_llm, inputs: {text: a.answer}}\n" +
         third +
         "sinks:\n  - uses: sink.jsonl\n    with: {file: out.jsonl}\n"
         "output: {dir: " +
         out_dir + "}\n";
}
}  // namespace

TEST_CASE("a record's second LLM call goes out while slow first calls of other records are still waiting", "[llm][dataflow]") {
  // No barrier between nodes: the first node answers slowly for some records; the others' second calls must
  // not wait for those answers. (Ordering of events the server saw, not speed: the slow answers take 1.5 s,
  // the others 5 ms.)
  LlmServer srv(5);
  Rule slow;
  slow.match = "^slow";  // the first node's message of a slow record; the second node's starts "answer to"
  slow.regex = true;
  slow.latency_ms = 1500;
  slow.reply = "answer to {last_user}";
  srv.add_rule(slow);
  srv.reply_all("answer to {last_user}");
  TempDir d;
  const int n = 40;
  d.write("data.csv", text_csv(n, [](int i) { return (i % 10 == 2 ? "slow " : "fast ") + std::to_string(i); }));
  d.write("p.yaml", chain_pipeline(srv, "out", 8));
  auto r = run_cmd("EG_TEST_SECRET_KEY=k " + evalgraph_cmd("run -q -j 1 --no-cache " + (d.path / "p.yaml").string()));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  REQUIRE(srv.request_count() == 2 * n);

  double slow_first_end = 1e9;  // when the first slow first-node call came back
  std::vector<double> fast_second;  // arrivals of second-node calls of fast records after the first slow one
  for (const auto &req : srv.requests()) {
    std::string c = last_content(req);
    if (c.rfind("slow ", 0) == 0) slow_first_end = std::min(slow_first_end, req.t_s + 1.5);
  }
  for (const auto &req : srv.requests()) {
    std::string c = last_content(req);
    if (c.rfind("answer to fast ", 0) == 0 && std::stoi(c.substr(15)) > 2) fast_second.push_back(req.t_s);
  }
  REQUIRE(fast_second.size() == 34);  // 3..39 but 12, 22, 32
  std::size_t before = 0;
  for (double t : fast_second) before += t < slow_first_end ? 1 : 0;
  INFO("second calls of later fast records before the slow first calls ended: " << before << " of 34");
  CHECK(before >= 17);  // with a barrier per chunk: 0 (all 40 records are one chunk)

  // The records still come out complete and in input order.
  std::filesystem::path run_dir = r.output.substr(0, r.output.size() - 1);
  auto recs = read_jsonl(run_dir / "out.jsonl");
  REQUIRE(recs.size() == static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    CHECK(recs[static_cast<std::size_t>(i)]["text"] == (i % 10 == 2 ? "slow " : "fast ") + std::to_string(i));
    CHECK(recs[static_cast<std::size_t>(i)]["b"]["answer"] ==
          "answer to answer to " + std::string(i % 10 == 2 ? "slow " : "fast ") + std::to_string(i));
  }
}

TEST_CASE("waiting first LLM calls go out before the next calls of records already under way", "[llm][dataflow]") {
  // The record with the most LLM work left goes first: with one call in flight, the server sees every record's
  // first call before any second call (depth-first, r0's second call would follow its first at once, and at
  // the end of a run a slow first call would be followed by a second one). Order, not speed.
  LlmServer srv(10);
  srv.reply_all("answer to {last_user}");
  TempDir d;
  const int n = 12;
  d.write("data.csv", text_csv(n, [](int i) { return "q" + std::to_string(i); }));
  d.write("p.yaml", chain_pipeline(srv, "out", 1));
  auto r = run_cmd("EG_TEST_SECRET_KEY=k " + evalgraph_cmd("run -q -j 1 --no-cache " + (d.path / "p.yaml").string()));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const auto reqs = srv.requests();
  REQUIRE(reqs.size() == 2 * n);
  std::string order;
  for (const auto &req : reqs) order += last_content(req).rfind("answer to ", 0) == 0 ? '2' : '1';
  CHECK(order == std::string(n, '1') + std::string(n, '2'));
  std::filesystem::path run_dir = r.output.substr(0, r.output.size() - 1);
  auto recs = read_jsonl(run_dir / "out.jsonl");
  REQUIRE(recs.size() == static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) CHECK(recs[static_cast<std::size_t>(i)]["b"]["answer"] == "answer to answer to q" + std::to_string(i));
}

TEST_CASE("the server never sees more than the provider's max_in_flight, and default flags fill that window", "[llm][dataflow]") {
  LlmServer srv(20, 4);
  srv.reply_all("answer to {last_user}");
  TempDir d;
  std::string data = "text,other\n";
  for (int i = 0; i < 120; ++i) data += "q" + std::to_string(i) + ",o" + std::to_string(i) + "\n";
  d.write("data.csv", data);
  // Three LLM nodes: a chain a -> b and c beside them, on one provider with a window of 6.
  d.write("p.yaml", chain_pipeline(srv, "out", 6, "  - {id: c, uses: test.needs_llm, inputs: {text: other}}\n"));
  auto r = run_cmd("EG_TEST_SECRET_KEY=k " + evalgraph_cmd("run -q --no-cache " + (d.path / "p.yaml").string()));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(srv.request_count() == 360);
  CHECK(srv.max_concurrency() <= 6);
  CHECK(srv.max_concurrency() == 6);  // no second knob holds the window below the provider's

  // --llm-concurrency is a global cap below the providers' windows.
  srv.reset_counters();
  d.write("q.yaml", chain_pipeline(srv, "capped", 6));
  auto c = run_cmd("EG_TEST_SECRET_KEY=k " + evalgraph_cmd("run -q --no-cache --llm-concurrency 2 " + (d.path / "q.yaml").string()));
  INFO(c.output);
  REQUIRE(c.exit_code == 0);
  CHECK(srv.request_count() == 240);
  CHECK(srv.max_concurrency() <= 2);
}

TEST_CASE("a sequence node after an LLM node sees its whole group in order, with a small window", "[llm][dataflow]") {
  LlmServer srv(2);
  srv.reply_all("{last_user}");
  TempDir d;
  std::string data = "conv,turn,text\n";
  for (int g = 0; g < 6; ++g)
    for (int t = 3; t >= 1; --t) data += "g" + std::to_string(g) + "," + std::to_string(t) + ",t" + std::to_string(t) + "\n";
  d.write("data.csv", data);
  d.write("p.yaml", "name: seq\ndataset: {path: data.csv}\nreplications: 2\n"
                    "providers:\n  judge:\n    base_url: " + srv.base_url() + "\n    model: m\n    api_key_env: EG_TEST_SECRET_KEY\n"
                    "nodes:\n  - {id: a, uses: test.needs_llm}\n"
                    "  - {id: s, uses: test.seq, inputs: {text: a.answer}, group_by: conv, order_by: turn}\n"
                    "sinks:\n  - uses: sink.jsonl\n    with: {file: out.jsonl}\noutput: {dir: out}\n");
  auto r = run_cmd("EG_TEST_SECRET_KEY=k " + evalgraph_cmd("run -q --no-cache --chunk-size 2 --window 4 " + (d.path / "p.yaml").string()));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  std::filesystem::path run_dir = r.output.substr(0, r.output.size() - 1);
  auto recs = read_jsonl(run_dir / "out.jsonl");
  REQUIRE(recs.size() == 36);  // 18 records, 2 replications each
  // run.json states the schedule the run had (bench/pipeline_bench.sh replays its draws under it).
  std::ifstream run_json(run_dir / "run.json");
  auto schedule = nlohmann::json::parse(run_json)["schedule"];
  CHECK(schedule["chunk_size"] == 2);
  CHECK(schedule["window"] == 4);
  CHECK(schedule["llm_threads"].get<int>() > 8);  // the provider's window (max_in_flight 8 by default) and spares
  for (std::size_t i = 0; i < recs.size(); ++i) {
    INFO(recs[i].dump());
    CHECK(recs[i]["s"]["group_size"] == 3);
    const int turn = std::stoi(recs[i]["turn"].get<std::string>());
    CHECK(recs[i]["s"]["position"] == turn - 1);
    CHECK(recs[i]["s"]["running"] == std::string("t1+t2+t3").substr(0, static_cast<std::size_t>(3 * turn - 1)));
  }
  CHECK(recs[0]["_replication"] == 0);
  CHECK(recs[3]["_replication"] == 1);  // a group's replications follow each other
}
