#pragma once
// The one entry of `evalgraph run`. A pipeline — read from a file, taken back from a results folder to resume,
// or translated from another configuration by a front end (frontends/chatbot_config) — gets the default
// report sink, its plan, an LLM service and a host, and runs (exec/executor.h run_plan, which alone drives the
// plugins' create/process/finish/destroy). The command line and every front end run pipelines here.
#include <functional>
#include <string>

#include "exec/executor.h"
#include "plugin/registry.h"

namespace evalgraph {

struct RunRequest {
  RunOptions opt;           // opt.run_dir: the results folder; set it first (new_run_dir, or a front end's)
  bool report = true;       // add the default report sink (report.html)
  bool no_cache = false;    // no LLM response cache (the calls are logged in the run folder)
  std::string cache_path;   // "" = the default cache; a shard's own in its run folder
  eg_log_level stderr_level = EG_LOG_WARN;
  // Called with the host before the run and with nullptr after it (the CLI's signal handler cancels through it).
  std::function<void(HostServices *)> on_host;
};

// Plans and runs `p` (adding the default report when req.report). A shard run (req.opt.shard_count > 0, not
// resumed) records the fingerprint `evalgraph merge` checks. Throws what build_plan and run_plan throw.
RunResult run_pipeline(Pipeline &p, const PluginRegistry &reg, RunRequest &req);

}  // namespace evalgraph
