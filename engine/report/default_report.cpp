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

// labels: as the report and `evalgraph agree` show it: key, annotator column, path and the fields with their types.
json labels_json(const LabelsDecl &l) {
  json fields = json::object();
  for (const auto &f : l.fields) {
    fields[f.name] = {{"type", f.type}};
    if (!f.values.empty()) fields[f.name]["values"] = f.values;
  }
  return {{"key", l.key},
          {"annotator", l.annotator.empty() ? json(nullptr) : json(l.annotator)},
          {"path", l.path_text.empty() ? json(nullptr) : json(l.path_text)},
          {"fields", fields},
          {"field_order", l.field_names()}};  // as declared (an object's keys come out sorted)
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
  json out = {{"pipeline", p.name},
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
  if (p.labels.declared) out["labels"] = labels_json(p.labels);  // the report's labelling controls
  return out;
}

std::filesystem::path records_file_of(const std::filesystem::path &dir, const json &info) {
  namespace fs = std::filesystem;
  // run.json names it (records_file) since #37; older runs: found as below.
  if (info.contains("records_file") && info["records_file"].is_string() && fs::exists(dir / info["records_file"].get<std::string>()))
    return dir / info["records_file"].get<std::string>();
  // The records sinks of plugin/defaults.h in its order, whatever the sinks' order in run.json: the records as
  // the engine wrote them (every node's whole output) first, a front end's records file only where the run
  // wrote no such file.
  if (info.contains("sinks") && info["sinks"].is_object()) {
    for (const auto &rs : defaults::kRecordsSinks) {
      for (const auto &[id, s] : info["sinks"].items()) {
        if (s.value("uses", "") != rs.type) continue;
        std::string file = rs.default_file;
        if (rs.file_param != nullptr && s.contains("with") && s["with"].is_object() && s["with"].contains(rs.file_param) &&
            s["with"][rs.file_param].is_string())
          file = s["with"][rs.file_param].get<std::string>();
        if (fs::exists(dir / file)) return dir / file;
      }
    }
  }
  for (const char *f : {"detailed.jsonl", "detailed_results.jsonl", "records.jsonl"})
    if (fs::exists(dir / f)) return dir / f;
  return {};
}

}  // namespace evalgraph
