// A budget buys finished records (#39): under a budget the engine admits records only as far as the money left
// can finish them, so a run stopped by its budget has written every record it paid for (but at most a chunk), and
// the run's call log holds every answered call whatever the cache setting: a resume with or without the cache
// sends exactly the calls never answered (the server's requests counted).
#include <algorithm>
#include <catch2/catch.hpp>
#include <set>
#include <string>
#include <vector>

#include "llm_fixture.h"
#include "test_support.h"

using namespace testsupport;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {
// 200 records, two LLM nodes each (the second reads the first's answer); every call is its own prompt and costs
// about $0.01 (6 + 4 words at $1000 per million tokens).
std::string two_call_pipeline(const TestLlmServer &srv) {
  return "name: buys\ndataset: {path: data.csv}\nproviders:\n  judge:\n    base_url: " + srv.base_url() +
         "\n    model: m\n    api_key_env: EG_TEST_SECRET_KEY\n"
         "    price: {input_per_mtok: 1000, output_per_mtok: 1000}\n"
         "nodes:\n  - {id: first, uses: test.needs_llm}\n  - {id: second, uses: test.needs_llm, inputs: {text: "
         "first.answer}}\n"
         "sinks:\n  - uses: sink.jsonl\n    with: {file: out.jsonl}\noutput: {dir: out}\n";
}

std::size_t line_count(const std::string &s) { return static_cast<std::size_t>(std::count(s.begin(), s.end(), '\n')); }

std::set<std::string> bodies_sent(const TestLlmServer &srv) {
  std::set<std::string> out;
  for (const auto &r : srv.requests()) out.insert(r.body);
  return out;
}

// The budget-stopped first session, with `cache_flags`; returns its run folder.
fs::path stopped_session(LlmServer &srv, TempDir &d, const std::string &cache_flags) {
  auto r = run_cmd(evalgraph_cmd("run " + cache_flags + " --max-cost 0.8 " + (d.path / "p.yaml").string()));
  INFO(r.output);
  REQUIRE(r.exit_code == 5);
  CHECK_THAT(r.output, Catch::Contains("budget reached"));
  const fs::path run_dir = last_line(r.output);
  const std::size_t sent = srv.request_count(), written = line_count(read_file(run_dir / "out.jsonl.partial"));
  INFO("requests " << sent << ", records written " << written);
  CHECK(sent < 400);
  CHECK(sent >= 50);                    // most of the $0.80 was spent
  CHECK(written * 2 + 2 * 16 >= sent);  // what was paid for was written, but at most one chunk (16 records)
  CHECK(written >= 16);
  return run_dir;
}
}  // namespace

TEST_CASE("budget: every record paid for is written, and --no-cache --resume sends only the calls never answered",
          "[budget][llm]") {
  ServerOptions o;
  o.latency_ms = 20;
  o.default_reply = "re {last_user}";
  LlmServer srv(o);
  TempDir d;
  d.write("data.csv", text_csv(200, [](int i) { return "question number " + std::to_string(i) + " about things"; }));
  d.write("p.yaml", two_call_pipeline(srv));
  for (const bool cached : {false, true}) {
    DYNAMIC_SECTION("first session " << (cached ? "with a cache" : "--no-cache")) {
      const std::string first = cached ? "--cache " + (d.path / "c.sqlite").string() : "--no-cache";
      const fs::path run_dir = stopped_session(srv, d, first);
      const std::set<std::string> answered = bodies_sent(srv);
      const std::size_t first_requests = srv.request_count();
      srv.reset_counters();
      auto resumed = run_cmd(evalgraph_cmd("run --no-cache --resume " + run_dir.string() + " --max-cost 100"));
      INFO(resumed.output);
      REQUIRE(resumed.exit_code == 0);
      CHECK(srv.request_count() + first_requests == 400);  // exactly the calls never answered
      for (const auto &b : bodies_sent(srv)) CHECK(answered.count(b) == 0);
      CHECK(line_count(read_file(run_dir / "out.jsonl")) == 200);
    }
  }
}
