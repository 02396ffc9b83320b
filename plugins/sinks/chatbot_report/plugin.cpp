// Plugin glue of the chatbot.report sink (see report.hpp for what it writes and how it aggregates).
#include <evalgraph/plugin.hpp>

#include "report.hpp"

namespace {

using evalgraph::json;

constexpr const char *kSchema = R"({
  "type": "object",
  "description": "Reports of a chatbot evaluation: detailed results, summaries over replications, statistics, a bar chart.",
  "properties": {
    "experiment_name": {"type": "string"},
    "input_column": {"type": "string", "description": "Name of the original-text column in the reports (default Original)."},
    "output_column": {"type": "string", "description": "Name of the transformed-text column in the reports (default Transformed)."},
    "csv_separator": {"type": "string", "description": "Separator of the CSV files written (default \",\")."},
    "mode": {"enum": ["pipeline", "rows"], "description": "pipeline: finished records of a pipeline; rows: normalised rows (combine-experiments)."},
    "only_transform": {"type": "boolean", "description": "Write the detailed results only."},
    "transformations": {"type": "array", "items": {"type": "object", "required": ["id"],
      "properties": {"id": {"type": "string"}, "label": {"type": "string"}}, "additionalProperties": false},
      "description": "Transformations in report order (id as in the rows' transformation field, label for display)."},
    "criteria": {"type": "array", "items": {"type": "object", "required": ["name"],
      "properties": {"name": {"type": "string"}, "display": {"type": "string"}, "field": {"type": "string"},
                     "kind": {"enum": ["task", "index"]}}, "additionalProperties": false},
      "description": "Criteria in report order: name, display name (map), the node whose output holds value/verdict."},
    "score": {"type": "object", "properties": {"field": {"type": "string"}}, "additionalProperties": false,
      "description": "The node writing the Score (chatbot.score)."},
    "fields": {"type": "object", "additionalProperties": {"type": "string"},
      "description": "Record fields: original, transformed, transformation, data_file, row."},
    "chart": {"type": "object", "properties": {"width": {"type": "integer"}, "height": {"type": "integer"}},
      "additionalProperties": false, "description": "summary.png size in pixels (default 1200 x 700)."}
  },
  "patternProperties": {"^_": {}},
  "additionalProperties": false
})";

class ReportSink : public evalgraph::Node {
 public:
  ReportSink(const evalgraph::Host &, const json &p) : report_(chatbot_report::config_from_json(p)) {}
  json process(evalgraph::Call &, const json &record) override {
    report_.add(record);
    return nullptr;
  }
  json finish(evalgraph::Call &) override { return {{"files", report_.finish()}}; }

 private:
  chatbot_report::Report report_;
};

}  // namespace

EVALGRAPH_PLUGIN("chatbot_report", "1.0.0", "Reports of a chatbot evaluation (seed 004 layout)",
                 evalgraph::node_type<ReportSink>({EG_KIND_SINK, "chatbot.report",
                                                   "detailed results, summary (md/csv/xlsx/png), statistics over replications",
                                                   kSchema, {}, {}, {}, 0}))
