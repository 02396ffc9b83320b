// The policy of a run's start (run_entry.h start_run): a new run's folder, a resumed run's pipeline and shard, a
// shard's provenance and its share of the budget.
#include <fmt/chrono.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>
#include <ctime>
#include <thread>

#include "entry/run_entry.h"
#include "run_folder/run_folder.h"
#include "shard/shard.h"

namespace evalgraph {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// --resume: the pipeline as it was run (its copy in the run folder), resolved against its original location,
// with the shard it was.
Pipeline resume_run(const RunStart &s, RunOptions &opt) {
  opt.resume = true;
  opt.run_dir = s.resume_dir;
  RunState rs = read_run_state(opt.run_dir);
  Pipeline p = parse_pipeline(rs.pipeline_text, rs.pipeline_file);
  if (rs.state.contains("shard")) {
    opt.shard_index = rs.state["shard"].value("index", 0);
    opt.shard_count = rs.state["shard"].value("count", 0);
    opt.extra_summary = rs.state.value("extra_summary", json::object());
  }
  return p;
}

// What run.json says of a shard: which one, where and when it ran, and what the merge must run alike.
json shard_provenance(const shard::ShardSpec &spec, const Pipeline &p, const RunStart &s, const RunOptions &opt) {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  json j = {{"index", spec.index},
            {"count", spec.count},
            {"label", spec.label()},
            {"source", spec.source},
            {"host", host},
            {"started", fmt::format("{:%Y-%m-%dT%H:%M:%S}", fmt::localtime(std::time(nullptr)))},
            {"pipeline_file", fs::absolute(p.file).string()},
            {"report", s.report},
            {"limit", opt.limit >= 0 ? opt.limit : p.dataset.limit},
            {"rule", "record index mod N (group_by: FNV-1a of the group key mod N)"}};
  for (const char *e :
       {"SLURM_JOB_ID", "SLURM_ARRAY_JOB_ID", "SLURM_ARRAY_TASK_ID", "JOB_COMPLETION_INDEX", "HOSTNAME"})
    if (const char *v = std::getenv(e); v != nullptr && spec.source != "--shard") j["env"][e] = v;
  return j;
}

// A new run: the pipeline file, its results folder, and the shard (--shard, or the scheduler's array index).
Pipeline new_run(const RunStart &s, RunOptions &opt) {
  Pipeline p = load_pipeline(s.pipeline_file);
  shard::ShardSpec spec = shard::resolve_shard(s.shard, s.shard_count, [](const char *n) { return std::getenv(n); });
  opt.shard_index = spec.index;
  opt.shard_count = spec.count;
  opt.run_dir = new_run_dir(p, s.output_root);
  if (spec.count == 0) return p;
  if (!opt.journal)
    throw ConfigError({{{"--no-journal", 0, 0}, "a shard keeps its records for `evalgraph merge`; drop --no-journal"}});
  opt.run_dir += run_folder::shard_suffix(spec.index, spec.count);
  opt.extra_summary["shard"] = shard_provenance(spec, p, s, opt);
  return p;
}

}  // namespace

Pipeline start_run(const RunStart &s, RunOptions &opt) {
  Pipeline p = s.resume_dir.empty() ? new_run(s, opt) : resume_run(s, opt);
  // The budget (docs/cost.md): --max-cost, else the pipeline's, of which a shard gets its share.
  opt.max_cost_usd = p.budget.max_cost_usd;
  if (opt.max_cost_usd > 0 && opt.shard_count > 0) opt.max_cost_usd /= opt.shard_count;
  if (s.max_cost_usd) opt.max_cost_usd = *s.max_cost_usd;
  return p;
}

int default_jobs(int jobs) {
  return jobs > 0 ? jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

bool progress_wanted(bool quiet) {
  const char *ci = std::getenv("CI");
  return !quiet && isatty(STDERR_FILENO) && (ci == nullptr || *ci == '\0');
}

}  // namespace evalgraph
