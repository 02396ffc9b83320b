#pragma once
// report.html in every results folder: the engine adds the `sink.html_report` plugin to every run (unless
// --no-report, or the pipeline lists it itself) and hands it what it cannot see in the records: the run's
// pipeline, node types, plugin versions, parameters and DAG, as the `_run` parameter.
#include <nlohmann/json.hpp>
#include <string>

#include "config/pipeline.h"
#include "graph/plan.h"
#include "plugin/defaults.h"
#include "plugin/registry.h"

namespace evalgraph {

inline constexpr const char *kReportSinkType = defaults::kReportSink;  // (plugin/defaults.h)

// Appends a `sink.html_report` sink (file report.html) when the registry has that node type and the
// pipeline declares none. Call before build_plan().
void add_default_report(Pipeline &p, const PluginRegistry &reg);

// The `_run` parameter of the report sink: pipeline name, description, file, dataset, replications,
// embeddings, engine version, every node (id, type, kind, plugin and version, parameters, inputs, grouping,
// upstream ids) and the sinks.
// The file holding a finished run's records (every node's whole output): run.json's records_file, else the
// records sinks' file in plugin/defaults.h's order, else detailed.jsonl / detailed_results.jsonl / records.jsonl.
// Empty when there is none. `info` is run.json.
std::filesystem::path records_file_of(const std::filesystem::path &dir, const nlohmann::json &info);
// labels: as JSON: {"key", "annotator", "path", "fields": {name: {type, values}}} (the report, run.json).
nlohmann::json labels_json(const LabelsDecl &l);
nlohmann::json report_run_info(const Pipeline &p, const Plan &plan);

}  // namespace evalgraph
