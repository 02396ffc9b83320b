// sink.csv — writes every finished record as one CSV row, node outputs flattened into "node.field" columns
// (table.hpp: the columns, the rows and the temporary body file).
//
// A RawNode (plugin.hpp), so that records are parsed with nlohmann::ordered_json: the columns keep the
// order in which the host wrote the record's fields.
#include <filesystem>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "evalgraph/output_file.hpp"
#include "evalgraph/plugin.hpp"
#include "table.hpp"

namespace {

using nlohmann::json;

struct Config {
  std::string file = "records.csv";
  std::string separator = ",";
  std::optional<std::vector<std::string>> columns;
  bool bom = false;
};
const evalgraph::Params<Config> kParams{{
  evalgraph::output_file_param<Config>(),
  evalgraph::param(&Config::separator, "separator", "Field separator: one character, or \"tab\".").min_length(1).max_length(3),
  evalgraph::param(&Config::columns, "columns", "Explicit columns and their order (e.g. \"question\", \"judge.score\"); fields not listed are left out. null: every field seen, in first-seen order.").with_schema({{"minItems", 1}, {"uniqueItems", true}}),
  evalgraph::param(&Config::bom, "bom", "Start the file with a UTF-8 byte order mark so that Excel reads non-ASCII text correctly."),
}};

csv_sink::TableOptions table_options(const Config &c) {
  std::string sep = c.separator == "tab" || c.separator == "\\t" ? "\t" : c.separator;
  if (sep.size() != 1 || sep[0] == '"' || sep[0] == '\n' || sep[0] == '\r')
    throw std::invalid_argument("parameter separator must be one character (not a quote or line break) or \"tab\"");
  return {sep[0], c.bom, c.columns};
}

const evalgraph::NodeSpec kSpec{
    .kind = EG_KIND_SINK,
    .name = "sink.csv",
    .description = "Writes every finished record as a CSV row, node outputs flattened into node.field columns",
    .params = kParams};

class CsvSink : public evalgraph::RawNode {
 public:
  CsvSink(const evalgraph::Host &, const Config &c, const json &params)
      : file_(c.file),
        options_(table_options(c)),
        table_(evalgraph::SinkFiles(params, kSpec.name).path(file_), options_) {}

  std::string process_raw(evalgraph::Call &, std::string_view in) override {
    table_.add(in);
    return {};
  }

  json finish(evalgraph::Call &) override {  // not finished: the .partial files stay as the trace of the run
    table_.finish();
    json summary = evalgraph::files_written(file_, table_.records());
    summary["columns"] = table_.columns();
    return summary;
  }

 private:
  std::string file_;
  csv_sink::TableOptions options_;  // checked before the output folders are created
  csv_sink::TableWriter table_;
};

}  // namespace

EVALGRAPH_PLUGIN("sink_csv", "CSV sink", evalgraph::node_type<CsvSink>(kSpec))
