#include "exec/node_runner.h"

#include <fmt/format.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <thread>

#include "exec/executor.h"
#include "util/stop.h"

namespace evalgraph {
namespace fs = std::filesystem;
using nlohmann::json;

std::string node_params_json(const PlannedNode &pn, const Pipeline &p, const fs::path &run_dir) {
  json w = pn.decl->with.is_object() ? pn.decl->with : json::object();
  w["_pipeline_dir"] = fs::absolute(p.file).parent_path().string();
  w["_limits"] = p.limits.to_json();  // e.g. the KSODI operators count sentences against sentences_per_answer
  if (pn.type->type->kind == EG_KIND_SINK) w["_output_dir"] = run_dir.string();
  return w.dump();
}

namespace {
void *create_instance(const PlannedNode &pn, const std::string &params, HostServices &host) {
  void *inst = nullptr;
  eg_buffer err{};
  eg_status st = EG_ERROR;
  try {
    st = pn.type->type->create(host.table(), params.c_str(), &inst, &err);
  } catch (...) {
    st = EG_ERROR;
  }
  std::string msg = take_host_buffer(err);
  if (st != EG_OK || inst == nullptr) {
    throw ConfigError({{pn.decl->uses_where, fmt::format("node '{}' ({}) could not be set up: {}", pn.decl->id,
                                                         pn.type->name, msg.empty() ? "create() failed" : host.redact(msg))}});
  }
  return inst;
}
}  // namespace

const char *status_word(eg_status st) {
  switch (st) {
    case EG_INVALID_INPUT: return "invalid input";
    case EG_RETRY: return "gave up after retries";
    case EG_UNSUPPORTED: return "unsupported";
    case EG_CANCELLED: return "cancelled";
    default: return "error";
  }
}

NodeRunner::NodeRunner(const PlannedNode &pn, const std::string &params, int instances, HostServices &host,
                       const RunOptions &opt)
    : pn_(&pn), host_(&host), opt_(&opt) {
  for (int i = 0; i < instances; ++i) instances_.push_back(create_instance(pn, params, host));
}

// EG_RETRY is retried here with exponential backoff (the host owns backoff).
eg_status NodeRunner::process(int worker, std::size_t record_index, int replication, const std::string &in,
                              std::string &out) const {
  eg_call call{record_index, replication, &pn_->decl->id};
  const eg_node_type *t = pn_->type->type;
  void *inst = instance(worker);
  eg_status st = EG_ERROR;
  for (int attempt = 0;; ++attempt) {
    eg_buffer b{};
    try {
      st = t->process(inst, &call, in.data(), in.size(), &b);
    } catch (...) {  // a C++ plugin that let an exception escape its C boundary
      st = EG_ERROR;
      b = eg_buffer{};
      fill_host_buffer(&b, "the plugin let an exception escape process()");
    }
    out = take_host_buffer(b);
    if (st != EG_RETRY || attempt + 1 >= opt_->retry_attempts || host_->cancelled() || stop_requested()) break;
    std::this_thread::sleep_for(std::chrono::duration<double>(opt_->retry_backoff_s * (1 << attempt)));
  }
  return st;
}

eg_status NodeRunner::finish(std::string &out) {
  const eg_node_type *t = pn_->type->type;
  eg_status first = EG_OK;
  for (std::size_t i = 0; i < instances_.size() && t->finish != nullptr; ++i) {
    eg_call call{0, 0, &pn_->decl->id};
    eg_buffer b{};
    eg_status st = t->finish(instances_[i], &call, &b);
    std::string text = take_host_buffer(b);
    if (i == 0) {
      first = st;
      out = std::move(text);
    }
  }
  return first;
}

void NodeRunner::destroy() {
  for (void *inst : instances_) pn_->type->type->destroy(inst);
  instances_.clear();
}

}  // namespace evalgraph
