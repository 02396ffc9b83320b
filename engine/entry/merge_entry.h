#pragma once
// The entries of `evalgraph merge` and `evalgraph cache merge`. A merge is a run like any other: the pipeline as
// the shards ran it (shard/shard.h plan_merge) goes through run_plan, whose writer takes the records from the
// shards' journals (shard/merge.h) instead of running nodes, and feeds the sinks.
#include <string>
#include <vector>

namespace evalgraph {

// `evalgraph merge SHARD_FOLDER... -o DIR`: the results folder one unsharded run would have written. Returns the
// exit code (4: an expectation failed, 1: records with failures); a refusal throws ConfigError (exit 2) and a
// merge that fails leaves no half-written folder.
int run_merge(const std::vector<std::string> &folders, const std::string &out_dir,
              const std::vector<std::string> &plugin_dirs, bool quiet);

// `evalgraph cache merge -o OUT IN...`: every entry of the input caches in OUT (an existing OUT keeps its
// entries; an entry already there is kept). Returns the exit code.
int run_cache_merge(const std::vector<std::string> &inputs, const std::string &out);

}  // namespace evalgraph
