#pragma once
// The one owner of the plugin C ABI's calls (sdk/include/evalgraph/plugin.h): create() per instance,
// process() per record (EG_RETRY retried with backoff here), finish() once at the end, destroy(). Nothing
// else in the host calls an instance's functions (a type's describe(), which needs no instance, is
// NodeTypeInfo::call_describe in plugin/registry).
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "config/pipeline.h"
#include "exec/host.h"
#include "graph/plan.h"

namespace evalgraph {

struct RunOptions;

// What a status other than EG_OK is called in a record's _errors.
const char *status_word(eg_status st);

// The node's parameters as create() gets them: its `with:` plus _pipeline_dir, _limits and (sinks) _output_dir.
std::string node_params_json(const PlannedNode &pn, const Pipeline &p, const std::filesystem::path &run_dir);

// One planned node (or sink) with its instances: one shared instance when the type is thread-safe, else one
// per worker. create() runs in the constructor (a failure is a ConfigError naming the node); destroy() runs
// in destroy(), which the run calls once every record is through (not on an error path, as before).
class NodeRunner {
 public:
  NodeRunner(const PlannedNode &pn, const std::string &params, int instances, HostServices &host,
             const RunOptions &opt);
  NodeRunner(NodeRunner &&) = default;
  NodeRunner &operator=(NodeRunner &&) = default;
  NodeRunner(const NodeRunner &) = delete;
  NodeRunner &operator=(const NodeRunner &) = delete;

  const PlannedNode &node() const { return *pn_; }
  const std::string &id() const { return pn_->decl->id; }
  // process() on the instance of `worker` (the shared one when thread-safe); EG_RETRY retried with
  // exponential backoff up to the run's retry_attempts, unless the run is stopping.
  eg_status process(int worker, std::size_t record_index, int replication, const std::string &in,
                    std::string &out) const;
  bool has_finish() const { return pn_->type->type->finish != nullptr; }
  // finish() of every instance, in order; `out` gets the first instance's answer (a sink has one instance).
  eg_status finish(std::string &out);
  void destroy();

 private:
  void *instance(int worker) const {
    return instances_.size() == 1 ? instances_[0] : instances_[static_cast<std::size_t>(worker)];
  }
  const PlannedNode *pn_ = nullptr;
  std::vector<void *> instances_;
  HostServices *host_ = nullptr;
  const RunOptions *opt_ = nullptr;
};

}  // namespace evalgraph
