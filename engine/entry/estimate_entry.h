#pragma once
// The public door, estimate's dry run: what a run of `evalgraph estimate PIPELINE` will call and cost before it
// starts (docs/cost.md).
//
// The pipeline's LLM nodes, and the nodes they read from, run over the data set as in a run, with an LLM
// service in dry-run mode (llm::CacheOptions::dry_run): each request a plugin builds is looked up in the cache
// under the key the run would use, and a request the cache does not answer is not sent but answered at once
// with "-" (a one-token text: a node that refuses an empty answer still hands it on). A host call observer
// (HostServices::set_call_observer) sees every request and its result.
// So the requests are exactly the plugins' own, and a node that reads an upstream answer gets the cached one
// where there is one; where there is none its calls count as not cached.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "entry/pipeline_entry.h"

namespace evalgraph::estimate {

struct Options {
  long long limit = -1;  // first N data set records (-1: the pipeline's limit or all)
  int jobs = 1;
  std::string cache_path;  // the cache the run would use ("" = the default)
  bool no_cache = false;   // as `run --no-cache`: nothing is cached
};

// The estimate as `--json` prints it: calls, cached, to_call, prompt_tokens, output_tokens_low/high,
// cost_usd_low/high, wall_time_s, nodes{...}, providers{...}, tokenizer{...}, records, basis notes.
nlohmann::json estimate(const Pipeline &p, const Plan &plan, const Options &opt);

}  // namespace evalgraph::estimate
