#pragma once
// Sharded runs (engine/shard/README.md): which part of the data set a run takes (--shard I/N or the
// scheduler's array index), the fingerprint that says two shards belong to one run, and what `evalgraph merge`
// needs to turn the shards' folders into the results folder of one unsharded run (the records themselves are
// merged by merge.h, in the executor's writer).
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "config/pipeline.h"
#include "graph/plan.h"
#include "plugin/registry.h"

namespace evalgraph::shard {

struct ShardSpec {
  int index = 0;       // 0-based; shown 1-based as "I/N"
  int count = 0;       // 0: not sharded
  std::string source;  // "--shard", "SLURM_ARRAY_TASK_ID", "JOB_COMPLETION_INDEX"
  std::string label() const { return std::to_string(index + 1) + "/" + std::to_string(count); }
};

// The shard this run takes: `--shard I/N` (1-based) when given, else the scheduler's environment
// (SLURM_ARRAY_TASK_ID - SLURM_ARRAY_TASK_MIN with SLURM_ARRAY_TASK_COUNT; JOB_COMPLETION_INDEX with
// shard_count or EVALGRAPH_SHARD_COUNT). count 0 when none applies. Throws ConfigError on a bad value.
ShardSpec resolve_shard(const std::optional<std::string> &shard_arg, int shard_count_arg,
                        const std::function<const char *(const char *)> &getenv_fn);

// What must be equal for shards to form one run: pipeline text, node types with plugins and versions,
// parameters (nodes, sinks, replications, limit, group_by), the data set's bytes (size and a fast 128-bit
// hash), the engine version. One digest per component (SHA-256 of the text), so a refusal can name what differs.
nlohmann::json fingerprint(const Pipeline &p, const Plan &plan, long long limit);

// ---- what `evalgraph merge` runs (engine/entry/merge_entry.h runs it) ----

// A shard's results folder as the merge reads it.
struct ShardFolder {
  std::filesystem::path dir;
  nlohmann::json run;    // run.json
  nlohmann::json shard;  // run.json's "shard"
};
struct ShardSet {
  std::vector<ShardFolder> shards;  // sorted by index
  int count = 0;                    // N of "I/N"
};
// Reads the shard folders and checks that they are one run, finished: the same count and fingerprint, every
// index exactly once. Throws ConfigError listing every problem.
ShardSet read_shards(const std::vector<std::string> &folders);

// The merged run: the pipeline as the shards ran it, with the same sinks (the default report included when they
// had it), planned against this machine's plugins and data set, which must match the shards' fingerprint.
struct MergePlan {
  Pipeline p;
  PluginRegistry reg;
  Plan plan;
  nlohmann::json fingerprint;
  std::vector<std::filesystem::path> journals;  // the shards' journals, in shard order (RunOptions::merge_journals)
  nlohmann::json summary;  // what run.json says of the shards: provenance, LLM statistics and costs summed
};
// Throws ConfigError when this machine's data set, plugins or engine differ from the shards'.
void plan_merge(const ShardSet &set, const std::vector<std::string> &plugin_dirs, MergePlan &m);

// "" when the merged run's record count equals what the shards' run.json files count; else the message that
// names the shards whose journal lost or gained lines (a damaged or partly copied shard folder).
std::string journal_count_mismatch(const ShardSet &set, std::size_t merged);

}  // namespace evalgraph::shard
