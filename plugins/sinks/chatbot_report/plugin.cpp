// Plugin glue of the chatbot.report sink (see report.hpp for what it writes and how it aggregates).
#include <evalgraph/output_file.hpp>
#include <evalgraph/plugin.hpp>

#include <set>

#include "report.hpp"

namespace {

using evalgraph::json;

using chatbot_report::ReportConfig;
struct Transformation {
  std::string id;
  std::optional<std::string> label;
};
struct Criterion {
  std::string name;
  std::optional<std::string> display;
  std::string field, kind = "task";
};
struct Fields {
  std::optional<std::string> original;
  std::string transformed = ReportConfig{}.transformed_field, transformation = ReportConfig{}.transformation_field;
  std::string data_file = ReportConfig{}.data_file_field, row = ReportConfig{}.row_field;
};
struct Chart {
  int width = ReportConfig{}.chart_width, height = ReportConfig{}.chart_height;
};
struct Config {
  std::string experiment_name = ReportConfig{}.experiment_name;
  std::string input_column = ReportConfig{}.input_column, output_column = ReportConfig{}.output_column;
  std::string csv_separator = ",", mode = "pipeline";
  bool only_transform = false;
  std::vector<Transformation> transformations;
  std::vector<Criterion> criteria;
  std::optional<json> score;
  Fields fields;
  Chart chart;
};
using evalgraph::param;
const evalgraph::Params<Transformation> kTransformation{{
  param(&Transformation::id, "id", "As in the rows' transformation field").make_required(),
  param(&Transformation::label, "label", "For display (null: the id)"),
}};
const evalgraph::Params<Criterion> kCriterion{{
  param(&Criterion::name, "name", "As in the configuration (llm_tasks.yaml title or index name)").make_required(),
  param(&Criterion::display, "display", "Display name (null: the name)"),
  param(&Criterion::field, "field", "The node whose output holds value/verdict (pipeline mode)"),
  param(&Criterion::kind, "kind", "A judge's task or an index").one_of({"task", "index"}),
}};
const evalgraph::Params<Fields> kFields{{
  param(&Fields::original, "original", "Field of the original text (null: input_column)"),
  param(&Fields::transformed, "transformed", "Field of the transformed text"),
  param(&Fields::transformation, "transformation", "Field naming the transformation"),
  param(&Fields::data_file, "data_file", "Field naming the data file"),
  param(&Fields::row, "row", "Field holding the row number"),
}};
const evalgraph::Params<Chart> kChart{{
  param(&Chart::width, "width", "Width of summary.png").range(300, 10000).unit("px"),
  param(&Chart::height, "height", "Height of summary.png").range(200, 10000).unit("px"),
}};
const evalgraph::Params<Config> kParams{{
  param(&Config::experiment_name, "experiment_name", "Name of the experiment in the reports"),
  param(&Config::input_column, "input_column", "Name of the original-text column in the reports."),
  param(&Config::output_column, "output_column", "Name of the transformed-text column in the reports."),
  param(&Config::csv_separator, "csv_separator", "Separator of the CSV files written: one character, or \"tab\"."),
  param(&Config::mode, "mode", "pipeline: finished records of a pipeline; rows: normalised rows (combine-experiments).").one_of({"pipeline", "rows"}),
  param(&Config::only_transform, "only_transform", "Write the detailed results only."),
  param(&Config::transformations, "transformations", "Transformations in report order.", kTransformation),
  param(&Config::criteria, "criteria", "Criteria in report order.", kCriterion),
  param(&Config::score, "score", "The node writing the Score (chatbot.score): {field} (null: no Score)").with_schema({{"type", "object"}, {"properties", {{"field", {{"type", "string"}, {"default", ReportConfig{}.score_field}, {"description", "Node id of the chatbot.score node"}}}}}, {"additionalProperties", false}}),
  param(&Config::fields, "fields", "Record fields of the pipeline's records", kFields),
  param(&Config::chart, "chart", "summary.png size", kChart),
}};

const evalgraph::NodeSpec kSpec{
    .kind = EG_KIND_SINK,
    .name = "chatbot.report",
    .description = "detailed results, summary (md/csv/xlsx/png), statistics over replications",
    .params = kParams};

ReportConfig report_config(const Config &c, const json &p) {
  ReportConfig r;
  r.experiment_name = c.experiment_name;
  r.input_column = c.input_column;
  r.output_column = c.output_column;
  const std::string sep = c.csv_separator == "tab" || c.csv_separator == "\\t" ? "\t" : c.csv_separator;
  if (sep.size() != 1) throw std::invalid_argument("csv_separator must be one character");
  r.separator = sep[0];
  r.rows_mode = c.mode == "rows";
  r.only_transform = c.only_transform;
  for (const auto &t : c.transformations) r.transformations.push_back({t.id, t.label.value_or(t.id)});
  std::set<std::string> names;
  for (const auto &k : c.criteria) {
    if (!names.insert(k.name).second) throw std::invalid_argument("criterion '" + k.name + "' is listed twice");
    r.criteria.push_back({k.name, k.display.value_or(k.name), k.field, k.kind});
  }
  r.has_score = c.score.has_value();
  if (c.score) r.score_field = c.score->value("field", r.score_field);
  r.original_field = c.fields.original.value_or(c.input_column);
  if (r.original_field.empty()) r.original_field = c.input_column;
  r.transformed_field = c.fields.transformed;
  r.transformation_field = c.fields.transformation;
  r.data_file_field = c.fields.data_file;
  r.row_field = c.fields.row;
  r.chart_width = c.chart.width;
  r.chart_height = c.chart.height;
  r.output_dir = evalgraph::SinkFiles(p, kSpec.name).dir();
  return r;
}

class ReportSink : public evalgraph::Node {
 public:
  ReportSink(const evalgraph::Host &, const Config &c, const json &p) : report_(report_config(c, p)) {}
  json process(evalgraph::Call &, const json &record) override {
    report_.add(record);
    return nullptr;
  }
  json finish(evalgraph::Call &) override { return {{"files", report_.finish()}}; }

 private:
  chatbot_report::Report report_;
};

}  // namespace

EVALGRAPH_PLUGIN("chatbot_report", "Reports of a chatbot evaluation (seed 004 layout)",
                 evalgraph::node_type<ReportSink>(kSpec))
