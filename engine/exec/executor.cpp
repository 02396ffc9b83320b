#include "exec/executor.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <thread>

#include "exec/engine.h"
#include "io/dataset.h"
#include "report/default_report.h"
#include "util/named_thread.h"
#include "util/stop.h"
#include "util/version.h"

namespace evalgraph {
namespace fs = std::filesystem;
using nlohmann::json;

namespace exec_detail {

void Engine::setup() {
  int workers = std::max(1, opt_.jobs);
  for (const auto &pn : plan_.nodes) {
    std::string params = node_params_json(pn, p_, run_dir_);
    runners_.emplace_back(pn, params, pn.type->has(EG_FLAG_THREAD_SAFE) ? 1 : workers, host_, opt_);
  }
  for (const auto &pn : plan_.sinks) {
    std::string params = node_params_json(pn, p_, run_dir_);
    if (pn.type->name == kReportSinkType) {  // the report also shows the run's nodes, versions and DAG
      json w = json::parse(params);
      w["_run"] = report_run_info(p_, plan_);
      params = w.dump();
    }
    sinks_.emplace_back(pn, params, 1, host_, opt_);
  }
  // LLM threads: enough to keep every provider's window (max_in_flight) full, plus a few that have their next
  // call queued in the LLM service while the others parse answers; --llm-concurrency caps them (a global cap).
  int windows = 0;
  if (host_.llm() != nullptr)
    for (const auto &name : host_.llm()->provider_names()) windows += host_.llm()->provider(name)->max_in_flight;
  where_.clear();
  for (const auto &pn : plan_.nodes) {
    bool llm = !pn.sequence() && pn.type->has(EG_FLAG_USES_LLM) && pn.type->has(EG_FLAG_THREAD_SAFE) && windows > 0;
    where_.push_back(pn.sequence() ? W_SEQ : llm ? W_LLM : W_LOCAL);
  }
  all_local_ = std::all_of(where_.begin(), where_.end(), [](Where w) { return w == W_LOCAL; });
  llm_left_.assign(where_.size() + 1, 0);
  for (size_t k = where_.size(); k-- > 0;) llm_left_[k] = llm_left_[k + 1] + (where_[k] == W_LLM ? 1 : 0);
  llm_q_.assign(llm_left_[0] + 1, {});
  llm_queued_ = 0;
  finish_first_ = opt_.has_budget();  // docs/cost.md
  if (opt_.has_budget() && host_.llm() != nullptr) {  // a budget buys finished records (#39)
    host_.track_record_costs(true);
    record_budget_ = std::make_unique<RecordBudget>(opt_.max_cost_usd, [this] { return host_.cost_spent_usd(); });
  }
  if (std::find(where_.begin(), where_.end(), W_LLM) != where_.end()) {
    llm_threads_ = windows + windows / 8 + 1;
    if (opt_.llm_concurrency > 0) llm_threads_ = std::min(llm_threads_, opt_.llm_concurrency);
    llm_threads_ = std::min(llm_threads_, kMaxLlmThreads);
  }
  stats_.assign(runners_.size(), {});
  sink_errors_.assign(sinks_.size(), 0);
  sink_first_error_.assign(sinks_.size(), {});
}

void Engine::teardown() {
  for (auto *list : {&runners_, &sinks_})
    for (auto &r : *list) r.destroy();
  runners_.clear();
  sinks_.clear();
}

// finish() of the sinks (their results for run.json; not after a stop: their files stay .partial for --resume),
// then of every node instance.
json Engine::finish_plugins(bool stopped) {
  json sink_outputs = json::object();
  for (size_t i = 0; i < sinks_.size() && !stopped; ++i) {
    if (!sinks_[i].has_finish()) continue;
    std::string out;
    eg_status st = sinks_[i].finish(out);
    if (st != EG_OK) {
      host_.log(EG_LOG_ERROR, fmt::format("sink '{}' could not finish: {}", sinks_[i].id(), out));
      sink_outputs[sinks_[i].id()] = {{"error", host_.redact(out)}};
    } else if (!out.empty()) {
      sink_outputs[sinks_[i].id()] = json::parse(out, nullptr, false);
    }
  }
  for (auto &r : runners_) {
    std::string ignored;
    if (r.has_finish()) r.finish(ignored);
  }
  return sink_outputs;
}

// expect: is judged before the sinks finish (a report shows the verdict); a shard's records are a part of the
// run: its expectations are judged by the merge.
void Engine::judge_expectations(bool stopped) {
  if (stopped || opt_.shard_count != 0) return;
  json agreement = agree_ ? agree_->evaluate() : json();
  json v = expect_.empty() ? json() : expect_.evaluate(agree_ ? &agreement : nullptr);
  std::lock_guard lk(verdict_mu_);
  verdict_ = std::move(v);
  agreement_ = std::move(agreement);
}

RunResult Engine::run() {
  RunResult res;
  res.run_dir = run_dir_;
  setup();
  if (opt_.resume) res.resumed_records = replay_journal();
  const bool merging = !opt_.merge_journals.empty();
  if (merging) merge_shards();
  if (opt_.journal && !merging) open_journal();
  const std::size_t skip = next_index_;
  const int workers = std::max(1, opt_.jobs);
  window_ = opt_.window > 0 ? opt_.window : default_window(workers, llm_threads_, opt_.chunk_records());
  long long limit = opt_.limit >= 0 ? opt_.limit : p_.dataset.limit;
  if (opt_.progress) expected_total_ = expected_total(limit);

  std::vector<std::thread> threads;
  for (int w = 0; w < workers; ++w) threads.push_back(named_thread("eg-cpu", [this, w] { worker_loop(w); }));
  for (int t = 0; t < llm_threads_; ++t) threads.push_back(named_thread("eg-llm", [this] { llm_loop(); }));
  std::thread writer = named_thread("eg-writer", [this] { writer_loop(); });

  std::exception_ptr reader_error;
  try {
    feed(skip, limit, merging);
  } catch (...) {
    reader_error = std::current_exception();
  }
  {
    std::lock_guard lk(mu_);
    reading_done_ = true;
  }
  cv_work_.notify_all();
  cv_llm_.notify_all();
  cv_done_.notify_all();
  for (auto &t : threads) t.join();
  writer.join();
  progress_line(true);
  // The budget left could not finish the next record: the run stops there, resumable, every record it paid for
  // written (#39).
  if (record_budget_ && record_budget_->exhausted() && !stop_requested())
    request_stop(StopReason::budget, record_budget_->why().c_str());

  // An interrupted run leaves the sinks' files as .partial: the journal holds what was finished, and
  // --resume writes the files whole. A finished run closes them under their final names.
  const bool stopped = stop_requested() || host_.cancelled();
  judge_expectations(stopped);
  json sink_outputs = finish_plugins(stopped);
  teardown();
  close_journal();
  if (reader_error) std::rethrow_exception(reader_error);
  summarise(res, stopped, workers, sink_outputs);
  return res;
}

}  // namespace exec_detail

std::size_t default_window(int jobs, int llm_threads, std::size_t chunk_size) {
  std::size_t w = (static_cast<std::size_t>(std::max(1, jobs)) * 2 + 2) * std::max<std::size_t>(1, chunk_size);
  return std::max(w, static_cast<std::size_t>(std::max(0, llm_threads)) * 32);
}

int shard_of_group(const std::string &group_key, int count) {
  std::uint64_t h = 14695981039346656037ULL;  // FNV-1a 64: the same on every machine and compiler
  for (unsigned char ch : group_key) {
    h ^= ch;
    h *= 1099511628211ULL;
  }
  return static_cast<int>(h % static_cast<std::uint64_t>(std::max(1, count)));
}


fs::path new_run_dir(const Pipeline &p, const fs::path &root_override) {
  return run_folder::new_run_dir(p.name, root_override.empty() ? p.output_dir : root_override);
}

RunState read_run_state(const fs::path &run_dir) {
  Location at{run_dir.string(), 0, 0};
  fs::path state_file = run_folder::state(run_dir);
  if (!fs::exists(state_file)) {
    std::string why = run_folder::finished(run_dir)
                          ? "this run already finished (run.json is there); start a new run instead"
                          : "it has no progress/state.json; is this a results folder of evalgraph run?";
    throw ConfigError({{at, "cannot resume: " + why}});
  }
  RunState rs;
  std::ifstream in(state_file);
  rs.state = json::parse(in, nullptr, false);
  if (rs.state.is_discarded() || !rs.state.contains("pipeline_file"))
    throw ConfigError({{{state_file.string(), 0, 0}, "cannot resume: the state file is damaged"}});
  rs.pipeline_file = rs.state["pipeline_file"].get<std::string>();
  rs.pipeline_text = run_folder::pipeline_text(run_dir);
  return rs;
}

namespace {
// The records (replications counted) a stopped run has not finished: this shard's records of the data set (within
// the limit) minus those written. -1 where it cannot say cheaply (a sharded run grouped by a field).
long long count_remaining(const Pipeline &p, const RunOptions &opt, std::size_t written) {
  if (opt.shard_count > 0 && !p.nodes.empty() && std::any_of(p.nodes.begin(), p.nodes.end(), [](const NodeDecl &d) {
        return !d.group_by.empty();
      }))
    return -1;
  try {
    auto reader = io::open_dataset(p.dataset.path, p.dataset.format, p.dataset.options, p.limits.record);
    const long long limit = opt.limit >= 0 ? opt.limit : p.dataset.limit;
    long long n = 0, index = 0;
    for (; (limit < 0 || index < limit) && reader->skip(); ++index)
      if (opt.shard_count <= 0 || index % opt.shard_count == opt.shard_index) ++n;
    return std::max(0LL, n * p.replications - static_cast<long long>(written));
  } catch (const std::exception &) {
    return -1;
  }
}
}  // namespace

RunResult run_plan(const Pipeline &p, const Plan &plan, HostServices &host, const RunOptions &opt) {
  fs::path run_dir = opt.run_dir.empty() ? new_run_dir(p, opt.output_root) : opt.run_dir;
  fs::create_directories(run_dir);
  if (opt.resume) {
    // The dataset must be the one the run started on, or the journal's record numbers mean nothing.
    RunState rs = read_run_state(run_dir);
    std::error_code ec;
    auto size = fs::file_size(p.dataset.path, ec);
    if (rs.state.value("dataset_size", static_cast<std::uintmax_t>(0)) != size)
      throw ConfigError({{{p.dataset.path.string(), 0, 0},
                          "cannot resume: the dataset changed since the run started (its size differs); start a new run"}});
    // What the earlier sessions spent (docs/cost.md): run.json's cost covers the whole run.
    std::ifstream cin(run_folder::cost(run_dir));
    json earlier = cin ? json::parse(cin, nullptr, false) : json();
    if (earlier.is_object()) host.set_earlier_cost(std::move(earlier));
  } else {
    write_file_atomically(run_folder::pipeline_copy(run_dir), p.source_text);
    if (opt.journal) {
      fs::create_directories(run_folder::progress_dir(run_dir));
      std::error_code ec;
      json state = {{"pipeline_file", fs::absolute(p.file).string()},
                    {"dataset", fs::absolute(p.dataset.path).string()},
                    {"dataset_size", fs::file_size(p.dataset.path, ec)},
                    {"engine_version", version_string()}};
      if (opt.shard_count > 0) state["shard"] = {{"index", opt.shard_index}, {"count", opt.shard_count}};
      if (!opt.extra_summary.empty()) state["extra_summary"] = opt.extra_summary;
      write_file_atomically(run_folder::state(run_dir), state.dump(2));
    }
  }
  // The budget (docs/cost.md): what earlier sessions spent counts; reaching it stops the run like a signal does,
  // with its own reason and exit code.
  auto budget = std::make_shared<std::pair<std::mutex, std::string>>();
  if (opt.has_budget() && host.llm() != nullptr)
    host.llm()->set_budget(opt.max_cost_usd, host.cost_spent_usd(), [budget](const std::string &why) {
      {
        std::lock_guard lk(budget->first);
        budget->second = why;
      }
      request_stop(StopReason::budget, why.c_str());
    });
  std::FILE *log = std::fopen(run_folder::log_file(run_dir).c_str(), opt.resume ? "a" : "w");
  host.set_log_file(log);
  RunResult r;
  try {
    exec_detail::Engine e(p, plan, host, opt, run_dir);
    r = e.run();
  } catch (...) {
    host.set_log_file(nullptr);
    if (log != nullptr) std::fclose(log);
    throw;
  }
  host.set_log_file(nullptr);
  if (log != nullptr) std::fclose(log);
  {
    std::lock_guard lk(budget->first);
    r.budget_stop = !budget->second.empty() || r.stop_reason == StopReason::budget;
    r.budget_detail = !budget->second.empty() ? budget->second : stop_detail();
  }
  if (r.budget_stop) r.summary["budget"] = host.llm()->budget_json();
  if (r.interrupted) r.remaining_records = count_remaining(p, opt, r.records);
  if (!r.interrupted) {
    write_file_atomically(run_folder::summary(run_dir), r.summary.dump(2) + "\n");
    if (auto v = r.summary.find("expectations"); v != r.summary.end() && v->contains("results"))  // docs/ci.md
      write_file_atomically(run_folder::junit(run_dir), expectations_junit(*v, p.name, r.seconds));
    std::error_code ec;
    if (opt.shard_count > 0 && opt.journal) {  // a shard keeps its records for `evalgraph merge`
      fs::create_directories(run_folder::shard_journal(run_dir).parent_path());
      fs::rename(run_folder::journal(run_dir), run_folder::shard_journal(run_dir));
    }
    fs::remove_all(run_folder::progress_dir(run_dir), ec);  // finished: nothing left to resume
  } else {
    write_file_atomically(run_folder::interrupted(run_dir), r.summary.dump(2) + "\n");
  }
  return r;
}

}  // namespace evalgraph
