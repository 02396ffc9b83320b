// The shard a run takes (--shard, Slurm, Kubernetes) and how sequence groups are spread.
#include <catch2/catch.hpp>

#include <map>
#include <set>

#include "config/diagnostics.h"
#include "exec/executor.h"
#include "shard/shard.h"

using namespace evalgraph;

namespace {
std::function<const char *(const char *)> env(std::map<std::string, std::string> m) {
  return [m = std::move(m)](const char *name) -> const char * {
    auto it = m.find(name);
    return it == m.end() ? nullptr : it->second.c_str();
  };
}
std::string refusal(const std::optional<std::string> &arg, int count, std::map<std::string, std::string> e) {
  try {
    shard::resolve_shard(arg, count, env(std::move(e)));
  } catch (const ConfigError &err) {
    return err.diagnostics().at(0).message;
  }
  return "";
}
}  // namespace

TEST_CASE("shard I/N is 1-based and wins over the environment", "[shard]") {
  auto s = shard::resolve_shard(std::string("2/3"), 0, env({{"SLURM_ARRAY_TASK_ID", "0"}, {"SLURM_ARRAY_TASK_COUNT", "5"}}));
  CHECK(s.index == 1);
  CHECK(s.count == 3);
  CHECK(s.source == "--shard");
  CHECK(s.label() == "2/3");
  CHECK(shard::resolve_shard(std::nullopt, 0, env({})).count == 0);  // not sharded
  CHECK_THAT(refusal(std::string("0/3"), 0, {}), Catch::Contains("shard 0 of 3 does not exist"));
  CHECK_THAT(refusal(std::string("4/3"), 0, {}), Catch::Contains("numbered 1 to 3"));
  CHECK_THAT(refusal(std::string("1/0"), 0, {}), Catch::Contains("at least 1"));
  CHECK_THAT(refusal(std::string("a/3"), 0, {}), Catch::Contains("is not I/N"));
  CHECK_THAT(refusal(std::string("1/3x"), 0, {}), Catch::Contains("is not I/N"));
}

TEST_CASE("Slurm array: the index counts from SLURM_ARRAY_TASK_MIN", "[shard]") {
  auto s = shard::resolve_shard(std::nullopt, 0,
                                env({{"SLURM_ARRAY_TASK_ID", "12"}, {"SLURM_ARRAY_TASK_MIN", "10"}, {"SLURM_ARRAY_TASK_COUNT", "4"}}));
  CHECK(s.index == 2);
  CHECK(s.count == 4);
  CHECK(s.source == "SLURM_ARRAY_TASK_ID");
  auto z = shard::resolve_shard(std::nullopt, 0, env({{"SLURM_ARRAY_TASK_ID", "0"}, {"SLURM_ARRAY_TASK_COUNT", "3"}}));
  CHECK(z.index == 0);
  CHECK_THAT(refusal(std::nullopt, 0, {{"SLURM_ARRAY_TASK_ID", "3"}}), Catch::Contains("SLURM_ARRAY_TASK_COUNT"));
  // --array=0-8:4 gives ids 0, 4, 8 with count 3: not dense
  CHECK_THAT(refusal(std::nullopt, 0, {{"SLURM_ARRAY_TASK_ID", "8"}, {"SLURM_ARRAY_TASK_MIN", "0"}, {"SLURM_ARRAY_TASK_COUNT", "3"}}),
             Catch::Contains("dense array"));
}

TEST_CASE("Kubernetes Indexed Job: JOB_COMPLETION_INDEX with --shard-count or EVALGRAPH_SHARD_COUNT", "[shard]") {
  auto a = shard::resolve_shard(std::nullopt, 4, env({{"JOB_COMPLETION_INDEX", "3"}}));
  CHECK(a.index == 3);
  CHECK(a.count == 4);
  CHECK(a.source == "JOB_COMPLETION_INDEX");
  auto b = shard::resolve_shard(std::nullopt, 0, env({{"JOB_COMPLETION_INDEX", "0"}, {"EVALGRAPH_SHARD_COUNT", "2"}}));
  CHECK(b.index == 0);
  CHECK(b.count == 2);
  CHECK_THAT(refusal(std::nullopt, 0, {{"JOB_COMPLETION_INDEX", "0"}}), Catch::Contains("EVALGRAPH_SHARD_COUNT"));
  CHECK_THAT(refusal(std::nullopt, 2, {{"JOB_COMPLETION_INDEX", "2"}}), Catch::Contains("does not exist"));
  CHECK_THAT(refusal(std::nullopt, 2, {}), Catch::Contains("needs JOB_COMPLETION_INDEX"));
}

TEST_CASE("sequence groups: a stable hash of the key, spread over all shards", "[shard]") {
  // Fixed values: the assignment must not change between machines, compilers or versions, or shards of one
  // run started with different binaries would overlap.
  CHECK(shard_of_group("\"de-telco-01\"", 3) == 2);  // FNV-1a 64 = 14411212487116915382
  CHECK(shard_of_group("", 1) == 0);
  std::map<int, int> per_shard;
  for (int g = 0; g < 3000; ++g) ++per_shard[shard_of_group("\"conv-" + std::to_string(g) + "\"", 3)];
  REQUIRE(per_shard.size() == 3);
  for (const auto &[s, n] : per_shard) CHECK((n > 900 && n < 1100));
}
