#include "report/default_report.h"

#include "util/version.h"

namespace evalgraph {

using nlohmann::json;

void add_default_report(Pipeline &p, const PluginRegistry &reg) {
  if (reg.types().find(kReportSinkType) == reg.types().end()) return;
  for (const auto &s : p.sinks)
    if (s.uses == kReportSinkType) return;
  NodeDecl d;
  d.id = kReportSinkType;
  d.uses = kReportSinkType;
  d.is_sink = true;
  d.with = {{"file", "report.html"}};
  d.where = d.uses_where = p.where;
  p.sinks.push_back(std::move(d));
}

json report_run_info(const Pipeline &p, const Plan &plan) {
  json nodes = json::array();
  for (const auto &pn : plan.nodes) {
    json inputs = json::object();
    for (const auto &b : pn.ports) inputs[b.port] = b.field;
    json upstream = json::array();
    for (size_t u : pn.upstream) upstream.push_back(plan.nodes[u].decl->id);
    nodes.push_back({{"id", pn.decl->id},
                     {"uses", pn.type->name},
                     {"kind", kind_name(pn.type->type->kind)},
                     {"uses_llm", pn.type->has(EG_FLAG_USES_LLM)},
                     {"plugin", pn.type->plugin->descriptor->name},
                     {"plugin_version", pn.type->plugin->descriptor->version},
                     {"with", pn.decl->with},
                     {"inputs", inputs},
                     {"upstream", upstream},
                     {"group_by", pn.decl->group_by},
                     {"order_by", pn.decl->order_by}});
    if (!pn.type->info.is_null()) nodes.back()["described"] = pn.type->info;
  }
  json sinks = json::array();
  for (const auto &pn : plan.sinks)
    sinks.push_back({{"id", pn.decl->id}, {"uses", pn.type->name}, {"plugin_version", pn.type->plugin->descriptor->version}, {"with", pn.decl->with}});
  return {{"pipeline", p.name},
          {"description", p.description},
          {"pipeline_file", p.file.string()},
          {"dataset", p.dataset.path.string()},
          {"dataset_columns", plan.dataset_columns},
          {"replications", p.replications},
          {"embeddings", p.embedding_provider.empty() ? "tfidf (offline)" : p.embedding_provider},
          {"engine_version", version_string()},
          {"group_by", plan.group_by},
          {"nodes", nodes},
          {"sinks", sinks}};
}

}  // namespace evalgraph
