// Sharded runs with an LLM node against the loopback server: each shard has its own response cache,
// `evalgraph cache merge` combines them so a rerun makes no call, and a shard killed mid-run resumes and
// merges into what one uninterrupted run writes.
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdlib>
#include <thread>

#include "llm_fixture.h"
#include "test_support.h"

using namespace testsupport;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {
std::string llm_pipeline(const TestLlmServer &srv, const std::string &out_dir, const std::string &provider_extra = "") {
  return "name: llm\ndataset: {path: data.csv}\nreplications: 2\n"
         "providers:\n  judge:\n    base_url: " + srv.base_url() + "\n    model: m\n    api_key_env: EG_TEST_SECRET_KEY\n" +
         provider_extra +
         "nodes:\n  - id: j\n    uses: test.needs_llm\n"
         "sinks:\n  - uses: sink.jsonl\n    with: {file: out.jsonl}\n  - uses: sink.csv\n    with: {file: out.csv}\n"
         "output: {dir: " + out_dir + "}\n";
}
}  // namespace

TEST_CASE("shards: own LLM caches, cache merge, a rerun from the merged cache makes no call", "[shard][llm]") {
  LlmServer srv;
  srv.reply_all("reply: {last_user}");
  TempDir d;
  d.write("data.csv", text_csv(30, [](int i) { return "question " + std::to_string(i); }));
  d.write("p.yaml", llm_pipeline(srv, "out", "    price: {input_per_mtok: 1, output_per_mtok: 2}\n"));
  std::vector<fs::path> shards;
  for (int i = 1; i <= 3; ++i) {
    auto r = run_cmd("EG_TEST_SECRET_KEY=k " + evalgraph_cmd("run -q --shard " + std::to_string(i) + "/3 " + (d.path / "p.yaml").string()));
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    shards.push_back(last_line(r.output));
    CHECK(fs::exists(shards.back() / "llm-cache.sqlite"));  // its own cache, in its folder
  }
  CHECK(srv.request_count() == 60);  // 30 records x 2 replications, each asked once
  auto merged = run_cmd(evalgraph_cmd("cache merge -o " + (d.path / "all.sqlite").string() + " " +
                                      (shards[0] / "llm-cache.sqlite").string() + " " + (shards[1] / "llm-cache.sqlite").string() +
                                      " " + (shards[2] / "llm-cache.sqlite").string()));
  INFO(merged.output);
  REQUIRE(merged.exit_code == 0);
  CHECK_THAT(merged.output, Catch::Contains("60 entries (60 new from 3 caches)"));
  // merging again adds nothing
  auto again = run_cmd(evalgraph_cmd("cache merge -o " + (d.path / "all.sqlite").string() + " " + (shards[0] / "llm-cache.sqlite").string()));
  CHECK_THAT(again.output, Catch::Contains("60 entries (0 new from 1 caches)"));

  srv.reset_counters();
  auto single = run_cmd("EG_TEST_SECRET_KEY=k " + evalgraph_cmd("run -q --cache " + (d.path / "all.sqlite").string() + " " + (d.path / "p.yaml").string()));
  REQUIRE(single.exit_code == 0);
  CHECK(srv.request_count() == 0);  // every answer from the merged cache
  auto run_json = read_run_json(last_line(single.output));
  CHECK(run_json["llm"]["judge"]["cache_hits"] == 60);

  auto m = run_cmd(evalgraph_cmd("merge -q " + shards[0].string() + " " + shards[1].string() + " " + shards[2].string() + " -o " +
                                 (d.path / "merged").string()));
  INFO(m.output);
  REQUIRE(m.exit_code == 0);
  CHECK(read_file(d.path / "merged" / "out.jsonl") == read_file(last_line(single.output) / "out.jsonl"));
  auto mj = read_run_json(d.path / "merged");
  CHECK(mj["llm"]["judge"]["calls"] == 60);  // summed over the shards
  CHECK(mj["llm"]["judge"]["http_requests"] == 60);
  // a provider's rate figures are each shard's own: kept per shard, not summed into nonsense
  CHECK_FALSE(mj["llm"]["judge"].contains("rate"));
  REQUIRE(mj["merged"]["shards"].size() == 3);
  REQUIRE(read_run_json(shards[0])["llm"]["judge"]["rate"]["concurrency"]["max"].get<int>() >= 1);
  CHECK(mj["merged"]["shards"][0]["llm"]["judge"]["rate"]["concurrency"]["max"] ==
        read_run_json(shards[0])["llm"]["judge"]["rate"]["concurrency"]["max"]);
  CHECK(mj["records"] == 60);
  // what the shards spent, summed (docs/cost.md); the price is the price, not a sum
  double shard_cost = 0;
  for (const auto &s : shards) shard_cost += read_run_json(s)["cost"]["cost_usd"].get<double>();
  CHECK(shard_cost > 0);
  CHECK(mj["cost"]["cost_usd"].get<double>() == Approx(shard_cost));
  CHECK(mj["cost"]["billed_calls"] == 60);
  CHECK(mj["cost"]["nodes"]["j"]["billed_calls"] == 60);
  CHECK(mj["cost"]["providers"]["judge"]["price"]["input_per_mtok"] == 1);
  CHECK(mj["cost"]["cost_usd"].get<double>() ==
        Approx((mj["cost"]["prompt_tokens"].get<double>() * 1 + mj["cost"]["completion_tokens"].get<double>() * 2) / 1e6));
  CHECK(mj["merged"]["shards"].size() == 3);

  CHECK(run_cmd(evalgraph_cmd("cache merge -o " + (d.path / "x.sqlite").string() + " " + (d.path / "nope.sqlite").string())).exit_code == 2);
}

TEST_CASE("a shard killed mid-run resumes and merges into the uninterrupted run", "[shard][resume]") {
  LlmServer srv(20);
  srv.reply_all("reply: {last_user}");
  TempDir d;
  d.write("data.csv", text_csv(120, [](int i) { return "question " + std::to_string(i); }));
  // Two calls in flight (20 ms each): a shard's 120 calls take ~1.2 s, so the kill below lands in its middle.
  // With the provider's default window the shard could finish before three chunks are seen in the journal.
  d.write("p.yaml", llm_pipeline(srv, "out", "    max_in_flight: 2\n"));
  auto clean = run_cmd("EG_TEST_SECRET_KEY=k " + evalgraph_cmd("run -q -j 2 --no-cache " + (d.path / "p.yaml").string()));
  REQUIRE(clean.exit_code == 0);
  fs::path clean_dir = last_line(clean.output);

  auto s1 = run_cmd("EG_TEST_SECRET_KEY=k " + evalgraph_cmd("run -q -j 2 --chunk-size 4 --shard 1/2 -o " + (d.path / "s").string() + " " +
                                                            (d.path / "p.yaml").string()));
  REQUIRE(s1.exit_code == 0);
  // Killed once three chunks are journaled.
  const fs::path run_dir = start_and_kill(d, "run -q -j 2 --chunk-size 4 --shard 2/2 -o " + (d.path / "k").string() + " " +
                                                 (d.path / "p.yaml").string(),
                                          d.path / "k", 3, "EG_TEST_SECRET_KEY=k ");
  REQUIRE(!run_dir.empty());
  REQUIRE(fs::exists(run_dir / "progress"));
  // not finished: the merge refuses it and says how to finish it
  auto early = run_cmd(evalgraph_cmd("merge " + last_line(s1.output).string() + " " + run_dir.string() + " -o " + (d.path / "m0").string()));
  CHECK(early.exit_code == 2);
  CHECK_THAT(early.output, Catch::Contains("evalgraph run --resume"));

  auto resumed = run_cmd("EG_TEST_SECRET_KEY=k " + evalgraph_cmd("run -q --resume " + run_dir.string()));
  INFO(resumed.output);
  REQUIRE(resumed.exit_code == 0);
  auto rj = read_run_json(run_dir);
  CHECK(rj["shard"]["label"] == "2/2");  // still a shard after the resume
  CHECK(rj["resumed_records"].get<int>() > 0);
  auto m = run_cmd(evalgraph_cmd("merge -q " + run_dir.string() + " " + last_line(s1.output).string() + " -o " + (d.path / "m").string()));
  INFO(m.output);
  REQUIRE(m.exit_code == 0);
  CHECK(read_file(d.path / "m" / "out.jsonl") == read_file(clean_dir / "out.jsonl"));
  CHECK(read_file(d.path / "m" / "out.csv") == read_file(clean_dir / "out.csv"));
}
