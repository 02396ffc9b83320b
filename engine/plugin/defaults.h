#pragma once
// The plugin node types the host itself names — the one table of them in engine/. Every other type a run uses
// comes from its pipeline, and what the host needs to know about a node's outputs from the plugin's
// declaration (ABI 1.3 eg_node_type.outputs, run.json's nodes.<id>.outputs).
namespace evalgraph::defaults {

// report.html in every results folder (engine/report/default_report.h), unless --no-report.
inline constexpr const char *kReportSink = "sink.html_report";

// Where `evalgraph compare` finds a run's records when run.json lists the sink that wrote them, in this order of
// preference (the engine's own records first: every node's whole output): the sink's type, the parameter that
// names its file (nullptr: it has no such parameter) and the file it writes when not told.
struct RecordsSink {
  const char *type;
  const char *file_param;
  const char *default_file;
};
inline constexpr RecordsSink kRecordsSinks[] = {
    {"sink.jsonl", "file", "records.jsonl"},
    {"chatbot.report", nullptr, "detailed_results.jsonl"},
};

// Node types that were renamed: the old name still resolves to the new type (PluginRegistry::find), with one
// deprecation line per process. compress.* became compression.*, so the context-compression family has one prefix.
struct RenamedType {
  const char *old_name;
  const char *new_name;
};
inline constexpr RenamedType kRenamedTypes[] = {
    {"compress.anchored", "compression.anchored"},
    {"compress.opaque", "compression.opaque"},
    {"compress.regenerative", "compression.regenerative"},
};

}  // namespace evalgraph::defaults
