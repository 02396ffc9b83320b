// The run summary: run.json (RunResult::summary) once the run is over, and what eg_host.run_info answers
// while it goes.
#include <fmt/format.h>
#include <sys/resource.h>

#include "exec/engine.h"
#include "report/default_report.h"
#include "util/stop.h"
#include "util/version.h"

namespace evalgraph::exec_detail {

namespace {
double peak_rss_mb() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_maxrss) / 1024.0;  // Linux reports KiB
}
}  // namespace

// What eg_host.run_info answers, from any thread (a sink may ask in process() on the writer thread; in
// finish(), once every record is written, the counts are final): the counts so far (atomics) and the LLM
// usage as run.json reports it — a merge's shards summed (extra_summary, where run.json's "llm" comes from
// then), else this run's LLM service (its stats are locked inside) with its providers' rate timelines.
json Engine::run_info() const {
  json llm = json::object(), timelines;
  if (auto it = opt_.extra_summary.find("llm"); it != opt_.extra_summary.end() && it->is_object()) {
    llm = *it;  // a merge: its shards' timelines stay in their own run.json
  } else if (host_.llm() != nullptr) {
    llm = host_.llm()->stats_json();
    timelines = host_.llm()->rate_timelines_json();  // the report's "LLM providers" charts (#39)
  }
  json out = {{"records", written_.load()}, {"failed_records", failed_records_.load()}, {"llm", std::move(llm)}};
  if (!timelines.is_null()) out["llm_rate_timeline"] = std::move(timelines);
  if (auto it = opt_.extra_summary.find("cost"); it != opt_.extra_summary.end() && it->is_object()) out["cost"] = *it;
  else if (host_.llm() != nullptr) out["cost"] = host_.cost_json();
  std::lock_guard lk(verdict_mu_);
  if (!verdict_.is_null()) out["expectations"] = verdict_;
  if (!agreement_.is_null()) out["agreement"] = agreement_;
  return out;
}

// The counts, the nodes' and sinks' reports and the run's facts, as run.json holds them.
void Engine::summarise(RunResult &res, bool stopped, int workers, const json &sink_outputs) const {
  res.records = written_.load();
  res.failed_records = failed_records_.load();
  res.interrupted = stopped;
  res.stop_reason = stop_requested() ? stop_reason() : res.interrupted ? StopReason::signal : StopReason::none;
  res.seconds = std::chrono::duration<double>(Clock::now() - start_).count();
  json nodes = json::object();
  for (size_t k = 0; k < plan_.nodes.size(); ++k) {
    const auto &pn = plan_.nodes[k];
    res.nodes[pn.decl->id] = stats_[k];
    nodes[pn.decl->id] = {{"uses", pn.type->name},
                          {"plugin", pn.type->plugin->descriptor->name},
                          {"plugin_version", pn.type->plugin->descriptor->version},
                          {"with", pn.decl->with},
                          {"ok", stats_[k].ok},
                          {"failed", stats_[k].failed},
                          {"skipped", stats_[k].skipped}};
    if (stats_[k].stopped > 0) nodes[pn.decl->id]["stopped"] = stats_[k].stopped;
    if (!stats_[k].first_error.empty()) nodes[pn.decl->id]["first_error"] = stats_[k].first_error;
    if (!pn.type->info.is_null()) nodes[pn.decl->id]["described"] = pn.type->info;  // e.g. a python node's script
    if (!pn.type->outputs.empty()) nodes[pn.decl->id]["outputs"] = pn.type->outputs;  // compare's better direction
  }
  json sinks = json::object();
  for (size_t i = 0; i < plan_.sinks.size(); ++i) {
    json s = {{"uses", plan_.sinks[i].type->name}, {"with", plan_.sinks[i].decl->with}, {"errors", sink_errors_[i]}};
    if (!sink_first_error_[i].empty()) s["first_error"] = sink_first_error_[i];
    if (sink_outputs.contains(plan_.sinks[i].decl->id)) s["result"] = sink_outputs[plan_.sinks[i].decl->id];
    sinks[plan_.sinks[i].decl->id] = s;
  }
  res.summary = {{"engine_version", version_string()},
                 {"abi", fmt::format("{}.{}", EG_ABI_MAJOR, EG_ABI_MINOR)},
                 {"pipeline", p_.name},
                 {"pipeline_file", p_.file.string()},
                 {"dataset", p_.dataset.path.string()},
                 {"replications", p_.replications},
                 {"jobs", workers},
                 {"schedule", {{"chunk_size", opt_.chunk_records()}, {"window", window_}, {"llm_threads", llm_threads_}}},
                 {"records", res.records},
                 {"failed_records", res.failed_records},
                 {"interrupted", res.interrupted},
                 {"stop", res.interrupted ? json{{"reason", stop_reason_name(res.stop_reason)},
                                                 {"detail", stop_detail()},
                                                 {"exit_code", stop_exit_code(res.stop_reason)},
                                                 {"grace_s", stop_grace_s()}}
                                          : json(nullptr)},
                 {"resumed_records", res.resumed_records},
                 {"seconds", res.seconds},
                 {"embedding_model", host_.embedding_model_id()},
                 {"peak_rss_mb", peak_rss_mb()},
                 {"nodes", nodes},
                 {"sinks", sinks}};
  if (host_.llm() != nullptr) {
    res.summary["llm"] = host_.llm()->stats_json();
    res.summary["llm_rate_timeline"] = host_.llm()->rate_timelines_json();  // docs/llm-providers.md (#39)
    res.summary["cost"] = host_.cost_json();
  }
  if (!dataset_stats_.is_null()) res.summary["dataset_reader"] = dataset_stats_;
  for (const auto &[k, v] : opt_.extra_summary.items()) res.summary[k] = v;
  if (!res.interrupted)  // where the run's records are, for compare, agree and read_run (#37)
    if (fs::path f = records_file_of(run_dir_, res.summary); !f.empty()) res.summary["records_file"] = f.filename().string();
  if (!agreement_.is_null()) res.summary["agreement"] = agreement_;
  if (!verdict_.is_null()) res.summary["expectations"] = verdict_;
  else if (!expect_.empty() && opt_.shard_count > 0)
    res.summary["expectations"] = {{"deferred", "a shard holds part of the records: evalgraph merge judges them"}};
}

}  // namespace evalgraph::exec_detail
