// The budget (docs/cost.md) against the loopback server, counting its requests: a run stops at its budget
// with exit code 5 having used most of it and overshot it by no more than its calls in flight; resumed with a
// larger budget it finishes without repeating a call, and run.json's cost covers both sessions.
#include <catch2/catch.hpp>

#include <algorithm>
#include <regex>
#include <set>

#include "exec/executor.h"
#include "llm_fixture.h"
#include "test_support.h"

using namespace testsupport;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {
// A pipeline over data.csv, its provider judge at `srv` priced so that a call of 6 prompt and 4 answer words costs
// $1.00; `top`: lines after the dataset (a budget), `nodes`: the entries of its nodes section.
std::string budget_pipeline(const TestLlmServer &srv, const std::string &name, const std::string &top, int in_flight,
                            const std::string &nodes = "  - {id: j, uses: test.needs_llm}\n") {
  return "name: " + name + "\ndataset: {path: data.csv}\n" + top + "providers:\n  judge:\n    base_url: " + srv.base_url() +
         "\n    model: m\n    api_key_env: EG_TEST_SECRET_KEY\n    max_in_flight: " + std::to_string(in_flight) +
         "\n    price: {input_per_mtok: 100000, output_per_mtok: 100000}\nnodes:\n" + nodes +
         "sinks:\n  - uses: sink.jsonl\n    with: {file: out.jsonl}\noutput: {dir: out}\n";
}

std::size_t lines(const std::string &s) { return static_cast<std::size_t>(std::count(s.begin(), s.end(), '\n')); }
}  // namespace

TEST_CASE("budget: the run stops at its budget (exit 5) and resumes with a larger one, repeating no call", "[budget][llm]") {
  ServerOptions o;
  o.latency_ms = 30;
  o.default_reply = "w1 w2 w3 w4";  // 4 completion tokens; every prompt is 6 words: each call costs $1.00
  LlmServer srv(o);
  TempDir d;
  d.write("data.csv", text_csv(40, [](int i) { return "question number " + std::to_string(i) + " about many things"; }));
  const int in_flight = 4;
  d.write("p.yaml", budget_pipeline(srv, "budget", "budget: {max_cost_usd: 100}\n", in_flight));
  const std::string cache = (d.path / "cache.sqlite").string();
  // --max-cost wins over the pipeline's budget
  auto r = run_cmd(evalgraph_cmd("run -j 1 --chunk-size 4 --cache " + cache + " --max-cost 12.5 " + (d.path / "p.yaml").string()));
  INFO(r.output);
  REQUIRE(r.exit_code == 5);
  CHECK_THAT(r.output, Catch::Contains("budget"));
  CHECK(std::regex_search(r.output, std::regex("spent \\$[0-9.]+ of the \\$12\\.5")));
  CHECK(std::regex_search(r.output, std::regex("[0-9]+ records? remain")));
  const std::size_t first = srv.request_count();
  fs::path run_dir = last_line(r.output);
  json interrupted = json::parse(read_file(run_dir / "progress" / "cost.json"));
  const double spent = interrupted["cost_usd"].get<double>();
  INFO("spent " << spent << " in " << first << " requests");
  CHECK(spent == Approx(static_cast<double>(first)));  // every answered request cost $1
  CHECK(spent >= 0.8 * 12.5);                          // calls alike: most of the budget used
  CHECK(spent <= 12.5 + in_flight * 1.0);              // overshoot: at most the calls in flight
  CHECK(first < 40);
  // The records the budget left are not failures: no first error, --resume runs them. Under a budget a record
  // starts only when the money left can finish it (#39): every record started was finished (none "stopped").
  json stopped_nodes = json::parse(read_file(run_dir / "progress" / "interrupted.json"))["nodes"]["j"];
  CHECK(stopped_nodes["failed"] == 0);
  CHECK(stopped_nodes["ok"].get<std::size_t>() == first);
  CHECK(stopped_nodes.value("stopped", std::size_t(0)) + stopped_nodes["ok"].get<std::size_t>() < 40);
  CHECK_FALSE(stopped_nodes.contains("first_error"));
  CHECK_THAT(r.output, !Catch::Contains("failed;"));

  // A larger budget: the run finishes; no request is made twice.
  auto resumed = run_cmd(evalgraph_cmd("run --cache " + cache + " --resume " + run_dir.string() + " --max-cost 100"));
  INFO(resumed.output);
  REQUIRE(resumed.exit_code == 0);
  CHECK(srv.request_count() == 40);
  std::set<std::string> bodies;
  for (const auto &req : srv.requests()) bodies.insert(req.body);
  CHECK(bodies.size() == 40);
  CHECK(lines(read_file(run_dir / "out.jsonl")) == 40);
  json c = read_run_json(run_dir)["cost"];
  CHECK(c["cost_usd"].get<double>() == Approx(40.0));  // both sessions
  CHECK(c["earlier_sessions"]["cost_usd"].get<double>() == Approx(spent));
}

TEST_CASE("budget: a shard gets its share of the pipeline's budget, or its own --max-cost", "[budget][shard][llm]") {
  ServerOptions o;
  o.default_reply = "w1 w2 w3 w4";
  LlmServer srv(o);
  TempDir d;
  d.write("data.csv", text_csv(40, [](int i) { return "question number " + std::to_string(i) + " about many things"; }));
  d.write("p.yaml", budget_pipeline(srv, "budget", "budget: {max_cost_usd: 12.5}\n", 2));
  auto r = run_cmd(evalgraph_cmd("run --no-cache --shard 1/2 " + (d.path / "p.yaml").string()));
  INFO(r.output);
  CHECK(r.exit_code == 5);
  CHECK_THAT(r.output, Catch::Contains("of the $6.25 budget"));  // 12.5 / 2 shards
  CHECK(srv.request_count() == 6);                              // $1 a call: the 7th would pass $6.25
  // the shard's 20 records: one chunk, not journaled (its later records' calls were not sent); the 6 answers
  // are in the run's call log, so --resume does not ask them again
  CHECK_THAT(r.output, Catch::Contains("20 records remain"));
  srv.reset_counters();
  auto own = run_cmd(evalgraph_cmd("run --no-cache --shard 2/2 --max-cost 3 " + (d.path / "p.yaml").string()));
  INFO(own.output);
  CHECK(own.exit_code == 5);
  CHECK_THAT(own.output, Catch::Contains("of the $3 budget"));
  CHECK(srv.request_count() == 3);
}

TEST_CASE("budget: a run stopped by its budget has finished records, not only first calls", "[budget][llm]") {
  // Two LLM nodes a record (about $2.80 a record); the money covers about 30 of the 40 records. Without a budget the LLM threads put
  // first calls ahead (all 40 first calls would come before most second ones, and the stop would find no record
  // done); under a budget the record nearest its end goes first and chunks are 16 records, so the stopped run
  // has written the records it paid for, all but those of the chunk under way.
  ServerOptions o;
  o.latency_ms = 10;
  o.default_reply = "re {last_user}";  // every call its own prompt: no answer comes from the cache
  LlmServer srv(o);
  TempDir d;
  d.write("data.csv", text_csv(40, [](int i) { return "question number " + std::to_string(i) + " about many things"; }));
  d.write("p.yaml", budget_pipeline(srv, "budget2", "", 4,
                                    "  - {id: first, uses: test.needs_llm}\n"
                                    "  - {id: second, uses: test.needs_llm, inputs: {text: first.answer}}\n"));
  const std::string cache = (d.path / "cache.sqlite").string();
  auto r = run_cmd(evalgraph_cmd("run -j 1 --cache " + cache + " --max-cost 84 " + (d.path / "p.yaml").string()));
  INFO(r.output);
  REQUIRE(r.exit_code == 5);
  fs::path run_dir = last_line(r.output);
  json cost = json::parse(read_file(run_dir / "progress" / "cost.json"));
  const auto second_calls = cost["nodes"]["second"]["billed_calls"].get<std::size_t>();
  const std::size_t written = lines(read_file(run_dir / "out.jsonl.partial"));
  INFO("second calls " << second_calls << ", first calls " << cost["nodes"]["first"]["billed_calls"] << ", written " << written);
  CHECK(second_calls >= 8);
  CHECK(written >= 16);                      // at least the first chunk
  CHECK(written + 16 >= second_calls);       // what is lost is at most the chunk under way
  CHECK(std::regex_search(r.output, std::regex(std::to_string(written) + " records? finished")));

  auto resumed = run_cmd(evalgraph_cmd("run --cache " + cache + " --resume " + run_dir.string() + " --max-cost 300"));
  INFO(resumed.output);
  REQUIRE(resumed.exit_code == 0);
  CHECK(srv.request_count() == 80);  // no call made twice
  CHECK(lines(read_file(run_dir / "out.jsonl")) == 40);
  // the chunk size is the engine's default under a budget (no --chunk-size given)
  CHECK(json::parse(read_file(run_dir / "run.json"))["schedule"]["chunk_size"] == 16);
}

TEST_CASE("budget: the engine picks small chunks under a budget, for every front end, unless the run sets its own", "[budget]") {
  evalgraph::RunOptions o;
  CHECK(o.chunk_records() == 256);
  o.max_cost_usd = 2.5;
  CHECK(o.chunk_records() == 16);
  o.chunk_size = 64;  // set by the caller (--chunk-size): kept
  CHECK(o.chunk_records() == 64);
  o.max_cost_usd = -1;
  CHECK(o.chunk_records() == 64);
}
