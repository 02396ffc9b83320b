#pragma once
// Runs a plan: records stream from the dataset through the nodes in DAG order and reach the sinks in input
// order. Each record moves on as soon as its inputs are ready (no barrier between nodes): local nodes run on
// the -j CPU workers, thread-safe LLM nodes on LLM threads that keep every provider's max_in_flight window
// full, sequence nodes once per group. Memory is bounded by the window of records read and not yet written.
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "config/pipeline.h"
#include "exec/host.h"
#include "graph/plan.h"
#include "util/stop.h"

namespace evalgraph {

struct RunOptions {
  int jobs = 1;                        // worker threads (CPU parallelism)
  int llm_concurrency = 0;             // global cap on LLM calls waited for at once (0: none; each provider's
                                       // max_in_flight bounds its own calls)
  std::size_t chunk_size = 0;          // records per unit of reading, journaling and writing; 0: the default
                                       // (chunk_records())
  std::size_t window = 0;              // records read and not yet written (0: default_window())
  std::filesystem::path output_root;   // overrides the pipeline's output dir when non-empty
  std::filesystem::path run_dir;       // use exactly this folder (tests); else <root>/<name>__<timestamp>
  long long limit = -1;                // stop after this many dataset records (-1: pipeline's limit or all)
  bool progress = false;               // a progress line on stderr
  int retry_attempts = 5;              // for nodes answering EG_RETRY
  double retry_backoff_s = 0.2;
  bool resume = false;                 // continue the run in run_dir from its progress journal
  bool journal = true;                 // keep <run>/progress/journal.jsonl so a crashed run can resume
  // Sharding (engine/shard/README.md): with shard_count > 0 only the records of shard shard_index are run
  // (record index mod N; with group_by, a whole group by a hash of its key), and the finished run keeps its
  // journal as <run>/shard/records.journal for `evalgraph merge`.
  int shard_index = 0;
  int shard_count = 0;
  // Merge mode: no node runs; the records of these shard journals (in dataset order) go to fresh sinks.
  std::vector<std::filesystem::path> merge_journals;
  nlohmann::json extra_summary = nlohmann::json::object();  // merged into run.json (shard, fingerprint, ...)
  // Budget (docs/cost.md): the run's LLM calls may cost this many US dollars in all (earlier sessions of a
  // resumed run included); < 0: no budget. Reaching it stops the run (RunResult::budget_stop).
  double max_cost_usd = -1;

  bool has_budget() const { return max_cost_usd > 0; }
  // The chunk size the run uses: chunk_size when set, else 256, or 16 under a budget (a budget stop writes the
  // finished records of whole chunks only, so small chunks lose little; docs/cost.md).
  std::size_t chunk_records() const { return chunk_size > 0 ? chunk_size : has_budget() ? 16 : 256; }
};

// The default bound on records read and not yet written: what the old chunk pipeline held ((2*jobs+2)
// chunks), or, with LLM nodes, 32 records per LLM thread, enough that a slow answer (20x the mean latency)
// does not drain the providers' windows while the records after it wait to be written in order.
std::size_t default_window(int jobs, int llm_threads, std::size_t chunk_size);

// The shard (0-based) that a sequence group goes to: FNV-1a 64 of its group key (as JSON text) mod count.
int shard_of_group(const std::string &group_key, int count);

// The run folder a new run of `p` gets (run_folder::new_run_dir under --output or the pipeline's output.dir).
std::filesystem::path new_run_dir(const Pipeline &p, const std::filesystem::path &root_override);

// What a run folder remembers about how it was started (progress/state.json), for --resume.
struct RunState {
  std::filesystem::path pipeline_file;  // the original pipeline path (relative paths resolve against it)
  std::string pipeline_text;            // the pipeline as it was run (pipeline.yaml in the run folder)
  nlohmann::json state;
};
// Reads a run folder for --resume. Throws ConfigError when it cannot be resumed (and says why).
RunState read_run_state(const std::filesystem::path &run_dir);

struct NodeStats {
  std::size_t ok = 0, failed = 0, skipped = 0;
  // A stopped run (signal, budget): records this node did not finish because the run stopped. They are not
  // failures: they are not journaled, and --resume runs them again.
  std::size_t stopped = 0;
  std::string first_error;  // of the failures (not of the stopped records)
};

struct RunResult {
  std::filesystem::path run_dir;
  std::size_t records = 0;         // records that reached the sinks (replications counted)
  std::size_t failed_records = 0;  // records with at least one failed or skipped node
  std::map<std::string, NodeStats> nodes;
  bool interrupted = false;
  StopReason stop_reason = StopReason::none;  // why (interrupted by HostServices::cancel alone: signal)
  std::size_t resumed_records = 0;  // records taken from the journal of an earlier, interrupted run
  bool budget_stop = false;          // stopped because the budget was reached
  std::string budget_detail;         // what was spent, of what
  long long remaining_records = -1;  // a stopped run: records (replications counted) not yet finished
  double seconds = 0;
  nlohmann::json summary;  // what run.json holds
};

// Instantiates every node (a failing create() is a configuration error, before any record moves), runs,
// finishes the sinks and writes run.json. Throws ConfigError for creation problems, io::DataError for
// broken data, std::runtime_error for I/O failures.
RunResult run_plan(const Pipeline &p, const Plan &plan, HostServices &host, const RunOptions &opt);

// Stopping a run early (a signal, a budget): request_stop()/request_stop_now() in util/stop.h.

}  // namespace evalgraph
