#include "entry/merge_entry.h"

#include <cstdio>
#include <filesystem>

#include "config/diagnostics.h"
#include "exec/executor.h"
#include "exec/host.h"
#include "agree/agreement.h"
#include "expect/expectations.h"
#include "llm/response_cache.h"
#include "run_folder/run_folder.h"
#include "shard/shard.h"

namespace evalgraph {
namespace fs = std::filesystem;

int run_merge(const std::vector<std::string> &folders, const std::string &out_dir, const std::vector<std::string> &plugin_dirs,
              bool quiet) {
  if (folders.empty()) refuse("merge", "give the shard folders: evalgraph merge SHARD_FOLDER... -o DIR");
  if (out_dir.empty()) refuse("merge", "give the folder to write: -o DIR");
  const shard::ShardSet shards = shard::read_shards(folders);

  fs::path out(out_dir);
  if (fs::exists(out) && !(fs::is_directory(out) && fs::is_empty(out)))
    refuse(out.string(), "exists and is not empty; give a new folder with -o");
  const bool out_existed = fs::exists(out);
  shard::MergePlan m;
  shard::plan_merge(shards, plugin_dirs, m);
  const Pipeline &p = m.p;

  RunOptions opt;
  opt.run_dir = out;
  opt.journal = false;
  opt.jobs = 1;
  opt.merge_journals = m.journals;
  opt.extra_summary = m.summary;
  auto svc = make_llm_service(p.providers, true, "", out);
  HostServices host(svc, p.default_provider, p.embedding_provider);
  host.set_min_stderr_level(quiet ? EG_LOG_ERROR : EG_LOG_WARN);
  std::error_code ec;
  // A merge that fails leaves no half-written folder behind, so the same command can run again.
  auto discard_out = [&] {
    if (out_existed) {
      for (const auto &e : fs::directory_iterator(out, ec)) fs::remove_all(e.path(), ec);
    } else {
      fs::remove_all(out, ec);
    }
  };
  RunResult r;
  try {
    r = run_plan(p, m.plan, host, opt);
  } catch (...) {
    discard_out();
    throw;
  }
  fs::remove_all(run_folder::progress_dir(out), ec);  // the no-cache call log of the merge (it makes no calls)
  if (std::string mismatch = shard::journal_count_mismatch(shards, r.records); !mismatch.empty()) {
    discard_out();
    throw std::runtime_error(mismatch);
  }
  if (!quiet)
    std::fprintf(stderr, "evalgraph: merged %d shards: %zu records in %.2f s (%.0f records/s), %zu with failures\n", shards.count,
                 r.records, r.seconds, r.seconds > 0 ? r.records / r.seconds : 0.0, r.failed_records);
  std::printf("%s\n", out.string().c_str());
  if (auto a = r.summary.find("agreement"); a != r.summary.end() && !quiet)  // docs/agreement.md
    std::fprintf(stderr, "agreement with people:\n%s", agree::agreement_text(*a).c_str());
  // The whole run's expect: is judged here (each shard deferred it): docs/ci.md.
  if (auto v = r.summary.find("expectations"); v != r.summary.end() && !announce_expectations(*v, p.name, quiet))
    return kExitExpectationFailed;
  return r.failed_records > 0 ? 1 : 0;
}

int run_cache_merge(const std::vector<std::string> &inputs, const std::string &out) {
  if (out.empty() || inputs.empty()) refuse("cache merge", "usage: evalgraph cache merge -o OUT.sqlite IN.sqlite...");
  for (const auto &in : inputs)
    if (!fs::is_regular_file(in)) refuse(in, "no such cache file");
  const llm::CacheMergeCounts c = llm::merge_cache_files(inputs, out);
  std::printf("%s: %lld entries (%lld new from %zu caches)\n", out.c_str(), c.after, c.after - c.before, inputs.size());
  return 0;
}

}  // namespace evalgraph
