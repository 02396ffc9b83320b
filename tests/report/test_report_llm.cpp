// How fast each LLM provider was driven, where a user sees it (#39): the end-of-run summary's provider lines
// (cli/summary/provider_summary.h) on crafted stats, and a run against the loopback test server whose stderr
// summary, run.json and report.html ("LLM providers": the providers' rate figures and timelines in eg-final, the
// section's script) agree; a run without LLM has none of it.
#include <fmt/format.h>

#include <catch2/catch.hpp>

#include "summary/provider_summary.h"
#include "test_llm_server.h"
#include "test_support.h"

using namespace testsupport;
using evalgraph::summary::provider_lines;
using nlohmann::json;

namespace {

json script_json_element(const std::string &html, const std::string &id) {
  const std::string open = "id=\"" + id + "\">";
  auto a = html.find(open);
  if (a == std::string::npos) return nullptr;
  a += open.size();
  return json::parse(html.substr(a, html.find("</script>", a) - a));
}

}  // namespace

TEST_CASE("run summary: one readable line per provider for its calls, one for how fast it was driven",
          "[report][llm]") {
  json s = {{"calls", 1000},
            {"http_requests", 990},
            {"cache_hits", 7},
            {"merged", 3},
            {"retries", 14},
            {"errors", 2},
            {"malformed_responses", 0},
            {"prompt_tokens", 52000},
            {"completion_tokens", 9000},
            {"latency_mean_s", 0.8125},
            {"usage_estimated_calls", 0}};
  s["rate"] = {{"adaptive", true},
               {"ceiling", 256},
               {"window", 40},
               {"concurrency", {{"min", 1}, {"median", 30}, {"max", 64}}},
               {"limit", "latency"},
               {"held_s", {{"demand", 1.0}, {"latency", 12.34}, {"ceiling", 0.0}}},
               {"capacity_wait_s", 3.21},
               {"http_429", 12},
               {"http_503", 0}};
  CHECK(provider_lines("openai", s) ==
        "  provider openai: 1000 calls (990 HTTP requests, 7 cache hits, 3 merged with an identical call), 2 failed, "
        "14 retries; "
        "52000 prompt + 9000 completion tokens; mean latency 0.81 s\n"
        "    concurrency min/median/max 1/30/64 (adaptive, ceiling 256), held by latency (the adaptive window) for "
        "12.3 s; "
        "12 × 429, 3.2 s waiting for capacity\n");
  // A fixed window, a 503, tokens counted by us, malformed answers, and a run that never filled the window.
  s["rate"]["adaptive"] = false;
  s["rate"]["ceiling"] = 8;
  s["rate"]["limit"] = "none";
  s["rate"]["http_503"] = 2;
  s["usage_estimated_calls"] = 5;
  s["malformed_responses"] = 4;
  s["merged"] = 0;
  const std::string two = provider_lines("local", s);
  CHECK_THAT(two, Catch::Contains("(990 HTTP requests, 7 cache hits), 2 failed, 14 retries, 4 malformed answers;"));
  CHECK_THAT(two, Catch::Contains("completion tokens (counted by us for 5 calls);"));
  CHECK_THAT(two,
             Catch::Contains(
                 "(fixed window of 8), never held back (fewer calls ready than the window); 12 × 429, 2 × 503, 3.2 s"));
  s["rate"]["limit"] = "tokens";
  s["rate"]["held_s"]["tokens"] = 4.0;
  CHECK_THAT(provider_lines("p", s), Catch::Contains("held by the tokens limit for 4.0 s;"));
  // Not called: one short line; stats without "rate" (an older run.json): the first line only.
  CHECK(provider_lines("idle", json{{"calls", 0}, {"rate", s["rate"]}}) == "  provider idle: not called\n");
  s.erase("rate");
  CHECK(provider_lines("old", s).find("concurrency") == std::string::npos);
}

TEST_CASE("LLM providers: the summary line, run.json and report.html show each provider's concurrency, limit and 429s",
          "[report][llm]") {
  evalgraph::testing::TestLlmServer srv;
  evalgraph::testing::Rule ok;
  ok.reply = "reply to {last_user}";
  ok.latency_ms = 100;
  evalgraph::testing::Rule refuse = ok;  // q7's first request is refused (429, retry after 1 s), then answered
  refuse.match = "q7";
  refuse.fault = evalgraph::testing::Fault::http_429;
  refuse.fault_times = 1;
  refuse.retry_after = "1";
  srv.add_rule(refuse);
  srv.add_rule(ok);
  TempDir t;
  std::string csv = "id,original\n";
  for (int i = 0; i < 40; ++i) csv += fmt::format("r{},q{} question\n", i, i);
  t.write("data.csv", csv);
  // max_in_flight 4: 40 calls of 100 ms take over a second, so the timeline (a point every 0.5 s) has rows
  t.write("p.yaml",
          "name: llm-rate\ndataset: {path: data.csv}\n"
          "providers:\n  judge:\n    base_url: " +
              srv.base_url() +
              "\n    model: m\n    max_in_flight: 4\n"
              "nodes:\n  - id: t\n    uses: transform.llm\n"
              "sinks:\n  - uses: sink.jsonl\n    with: {file: detailed.jsonl}\n"
              "output: {dir: out}\n");
  auto r = run_cmd(std::string("CI=true ") + EVALGRAPH_EXE + " run --no-cache " + (t.path / "p.yaml").string());
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const fs::path dir = last_line(r.output);
  const json run = read_run_json(dir);
  const json &rate = run["llm"]["judge"]["rate"];
  const json &c = rate["concurrency"];
  CHECK(c["max"] == 4);
  CHECK(rate["http_429"] == 1);

  // stderr: the provider's two readable lines, their figures those of run.json (no raw JSON any more)
  CHECK_THAT(r.output,
             Catch::Contains("  provider judge: 40 calls (41 HTTP requests, 0 cache hits), 0 failed, 1 retry; "));
  CHECK_THAT(r.output,
             Catch::Contains(fmt::format("    concurrency min/median/max {}/{}/{} (adaptive, ceiling 4), held by ",
                                         c["min"].get<int>(), c["median"].get<int>(), c["max"].get<int>())));
  CHECK_THAT(r.output, Catch::Contains("; 1 × 429, "));
  CHECK(r.output.find("{\"calls\"") == std::string::npos);

  // report.html: eg-final carries the rate figures and the timeline, the page the section that draws them
  const std::string html = read_file(dir / "report.html");
  const json fin = script_json_element(html, "eg-final");
  REQUIRE(fin.is_object());
  CHECK(fin["llm"]["judge"]["rate"]["concurrency"] == c);
  CHECK(fin["llm"]["judge"]["rate"]["limit"] == rate["limit"]);
  REQUIRE(fin.contains("llm_rate_timeline"));
  const json &tl = fin["llm_rate_timeline"]["judge"];
  CHECK(tl["columns"] == json({"t_s", "in_flight", "window", "answers", "http_429"}));
  REQUIRE(tl["rows"].size() >= 2);
  CHECK(tl == run["llm_rate_timeline"]["judge"]);  // the same timeline as run.json
  int most_in_flight = 0;
  for (const auto &row : tl["rows"]) most_in_flight = std::max(most_in_flight, row[1].get<int>());
  CHECK(most_in_flight <= 4);
  // the last row is where the run ended: every answer and the 429 counted (answers and 429s are cumulative)
  CHECK(tl["rows"].back()[3] == 40);
  CHECK(tl["rows"].back()[4] == 1);
  CHECK(tl["rows"].back()[1] == 0);
  CHECK_THAT(html, Catch::Contains("id: 'llm-providers'"));
  CHECK_THAT(html, Catch::Contains("function concurrencyChart"));
  CHECK_THAT(html, Catch::Contains("function throughputChart"));
}

TEST_CASE("LLM providers: a run without LLM has no timeline in report.html and no provider lines", "[report]") {
  TempDir t;
  t.write("data.csv", "id,original\nq1,one\nq2,two\n");
  t.write("p.yaml",
          "name: no-llm\ndataset: {path: data.csv}\nsinks:\n  - uses: sink.jsonl\n    with: {file: detailed.jsonl}\n"
          "output: {dir: out}\n");
  auto r = run_cmd(std::string("CI=true ") + EVALGRAPH_EXE + " run " + (t.path / "p.yaml").string());
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(r.output.find("provider ") == std::string::npos);
  const json fin = script_json_element(read_file(fs::path(last_line(r.output)) / "report.html"), "eg-final");
  REQUIRE(fin.is_object());
  CHECK(!fin.contains("llm_rate_timeline"));
}
