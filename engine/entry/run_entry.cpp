#include "entry/run_entry.h"

#include "report/default_report.h"
#include "run_folder/run_folder.h"
#include "shard/shard.h"

namespace evalgraph {

RunResult run_pipeline(Pipeline &p, const PluginRegistry &reg, RunRequest &req) {
  RunOptions &opt = req.opt;
  opt.jobs = default_jobs(opt.jobs);
  if (req.report) add_default_report(p, reg);
  Plan plan = plan_pipeline(p, reg);
  if (opt.shard_count > 0 && !opt.resume)
    opt.extra_summary["fingerprint"] = shard::fingerprint(p, plan, opt.extra_summary["shard"]["limit"].get<long long>());
  // SQLite on a network file system is not safe to share: a shard has its own cache unless one is named.
  std::string cache = req.cache_path;
  if (opt.shard_count > 0 && cache.empty()) cache = run_folder::shard_cache(opt.run_dir).string();
  auto llm = make_llm_service(p.providers, req.no_cache, cache, opt.run_dir);
  HostServices host(llm, p.default_provider, p.embedding_provider);
  host.set_min_stderr_level(req.stderr_level);
  if (req.on_host) req.on_host(&host);
  RunResult r;
  try {
    r = run_plan(p, plan, host, opt);
  } catch (...) {
    if (req.on_host) req.on_host(nullptr);
    throw;
  }
  if (req.on_host) req.on_host(nullptr);
  return r;
}

}  // namespace evalgraph
