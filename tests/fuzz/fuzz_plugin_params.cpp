// fuzz_plugin_params: a node's `with:` parameters. The engine checks them against the node type's JSON Schema
// (engine/config/json_schema.h, as build_plan does); parameters that pass are handed to the plugin's create()
// as the executor does (with _pipeline_dir), and the node is destroyed again. Sinks are only validated (their
// create() opens output files).
// Input: the node type's name on the first line (an unknown name picks a type by hash), then the parameters
// as JSON.
#include <functional>

#include "config/json_schema.h"
#include "exec/host.h"
#include "fuzz_support.h"

namespace {
using nlohmann::json;

const std::vector<const evalgraph::NodeTypeInfo *> &types() {
  static const std::vector<const evalgraph::NodeTypeInfo *> v = [] {
    std::vector<const evalgraph::NodeTypeInfo *> out;
    for (const auto &[name, t] : fuzz::registry().types()) out.push_back(&t);
    return out;
  }();
  return v;
}

evalgraph::HostServices &host() {
  static evalgraph::HostServices *h = [] {
    auto *x = new evalgraph::HostServices(nullptr, "", "");
    x->set_min_stderr_level(EG_LOG_ERROR);
    return x;
  }();
  return *h;
}
}  // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  types();
  host();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
  const std::string_view in = fuzz::view(data, size);
  const std::size_t nl = in.find('\n');
  const std::string name(in.substr(0, nl == std::string_view::npos ? 0 : nl));
  const std::string_view params_text = nl == std::string_view::npos ? in : in.substr(nl + 1);

  const evalgraph::NodeTypeInfo *t = fuzz::registry().find(name);
  if (t == nullptr) t = types()[std::hash<std::string>{}(name) % types().size()];

  json with = json::parse(params_text.begin(), params_text.end(), nullptr, false);
  if (with.is_discarded()) return 0;

  std::vector<evalgraph::SchemaViolation> violations;
  try {
    evalgraph::validate_json_schema(t->params_schema, with, violations);
  } catch (const std::exception &e) {
    fuzz::foreign_exception("validate_json_schema", e);
    return 0;
  }
  if (!violations.empty() || t->type->kind == EG_KIND_SINK) return 0;

  json params = with.is_object() ? with : json::object();
  params["_pipeline_dir"] = std::string(EVALGRAPH_FUZZ_REPO_DIR) + "/pipelines";
  const std::string text = params.dump(-1, ' ', false, json::error_handler_t::replace);
  void *inst = nullptr;
  eg_buffer err{};
  eg_status st = EG_ERROR;
  try {
    st = t->type->create(host().table(), text.c_str(), &inst, &err);
  } catch (const std::exception &e) {  // the executor catches these too; still a plugin bug
    fuzz::foreign_exception("create() let an exception escape", e);
    return 0;
  }
  (void)evalgraph::take_host_buffer(err);
  if (st == EG_OK && inst != nullptr) t->type->destroy(inst);
  return 0;
}
