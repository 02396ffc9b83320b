#pragma once
// The public door, run: the one entry of `evalgraph run`. A pipeline — read from a file, taken back from a results
// folder to resume, or translated from another configuration by a front end (frontends/chatbot_config) — gets the
// default report sink, its plan, an LLM service and a host, and runs (exec/executor.h run_plan, which alone
// drives the plugins' create/process/finish/destroy). The command line and every front end run pipelines here.
// The policy of a run (a new run's folder, resuming, shards and their share of the budget, the defaults of jobs
// and chunks) is decided here and in the executor, not by the callers.
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "entry/pipeline_entry.h"
#include "exec/executor.h"  // RunOptions, RunResult, HostServices

namespace evalgraph {

// Where a run starts, as the command line asks for it (evalgraph run's flags).
struct RunStart {
  std::string pipeline_file;           // a new run of this pipeline file; or
  std::filesystem::path resume_dir;    // --resume: the run in this folder goes on (with its pipeline copy)
  std::optional<std::string> shard;    // --shard I/N; without it, shard_count with the scheduler's array index
  int shard_count = 0;                 // --shard-count N
  std::filesystem::path output_root;   // --output: where the results folder goes ("": the pipeline's output:)
  std::optional<double> max_cost_usd;  // --max-cost: replaces the pipeline's budget (a shard's share of it)
  bool report = true;                  // the default report is added (a shard's provenance says so)
};

// Decides what `s` runs: returns its pipeline and sets opt's run_dir, resume, shard_index/count, max_cost_usd
// and, for a shard, extra_summary["shard"] (its provenance: which, where, when, what the merge must run alike).
// opt's other settings (limit, journal, ...) must be set before: a shard records its limit, and refuses
// journal = false (ConfigError: `evalgraph merge` reads the shard's journal).
Pipeline start_run(const RunStart &s, RunOptions &opt);

// RunOptions::jobs when none is given (0 or less): one worker per hardware thread.
int default_jobs(int jobs);

// Whether stderr gets a progress line: not asked to be quiet, a terminal, and not in CI (CI set).
bool progress_wanted(bool quiet);

struct RunRequest {
  RunOptions opt;           // opt.run_dir: the results folder; set it first (start_run, new_run_dir, a front end's)
  bool report = true;       // add the default report sink (report.html)
  bool no_cache = false;    // no LLM response cache (the calls are logged in the run folder)
  std::string cache_path;   // "" = the default cache; a shard's own in its run folder
  eg_log_level stderr_level = EG_LOG_WARN;
  // Called with the host before the run and with nullptr after it (StopOnSignals::host_hook cancels through it).
  std::function<void(HostServices *)> on_host;
};

// Plans and runs `p` (adding the default report when req.report). A shard run (req.opt.shard_count > 0, not
// resumed) records the fingerprint `evalgraph merge` checks; opt.jobs <= 0 runs default_jobs(). Throws what
// build_plan and run_plan throw.
RunResult run_pipeline(Pipeline &p, const PluginRegistry &reg, RunRequest &req);

// SIGINT and SIGTERM stop the runs of this process while it lives (util/stop.h). The first signal asks the run to
// stop: nothing new starts, LLM calls waiting for a retry end, calls in flight get the stop grace, the finished
// records are journaled and the run ends resumable (exit 130). The second stops at once: in-flight calls are
// cut through the host, unjournaled records are dropped. One at a time per process.
class StopOnSignals {
 public:
  explicit StopOnSignals(double stop_grace_s);
  ~StopOnSignals();
  StopOnSignals(const StopOnSignals &) = delete;
  StopOnSignals &operator=(const StopOnSignals &) = delete;

  // Makes sure a stopped run in `run_dir` ends even where something it waits for never returns (a sink's write
  // to a blocked file system, a plugin that ignores cancellation): past the grace and 10 s (2 s after a second
  // signal) the process exits with the stop's exit code, telling how to resume. The journal is consistent at
  // every chunk boundary, so exiting is safe.
  void watch(const std::filesystem::path &run_dir);

  // RunRequest::on_host: lets the second signal cancel the host's calls in flight.
  static void host_hook(HostServices *host);

 private:
  class Watchdog;
  std::unique_ptr<Watchdog> watchdog_;
};

}  // namespace evalgraph
