#pragma once
// Sharded runs (engine/shard/README.md): which part of the data set a run takes (--shard I/N or the
// scheduler's array index), the fingerprint that says two shards belong to one run, and `evalgraph merge`,
// which turns the shards' folders into the results folder of one unsharded run.
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

// `evalgraph merge SHARD_FOLDER... -o DIR`. Returns the exit code (2: refused, nothing written).
int run_merge(const std::vector<std::string> &folders, const std::string &out_dir, const std::vector<std::string> &plugin_dirs,
              bool quiet);

// `evalgraph cache merge -o OUT IN...`: every entry of the input caches in OUT (an existing OUT keeps its
// entries; an entry already there is kept). Returns the exit code.
int run_cache_merge(const std::vector<std::string> &inputs, const std::string &out);

}  // namespace evalgraph::shard
