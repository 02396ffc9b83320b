// compression.report — the report of a context-compression evaluation: methods × (overall + six
// dimensions) in Markdown and CSV, the breakdown by probe type, the compression ratio, the judge call and
// invalid-answer counts, a grouped bar chart (PNG) and everything as JSON.
#include <filesystem>
#include <fstream>

#include "chart.hpp"
#include "compression/aggregate.hpp"
#include "compression/llm_util.hpp"
#include "evalgraph/output_file.hpp"
#include "evalgraph/plugin.hpp"

namespace {
using namespace compression;
namespace fs = std::filesystem;

constexpr const char *kSchema = R"schema({
  "type": "object",
  "additionalProperties": false,
  "properties": {
    "judge": {"type": "string", "minLength": 1, "description": "Node id of the compression.judge node (default judge)"},
    "file": {"type": "string", "minLength": 1, "description": "Base name of the files written (default compression_report)"},
    "overall": {"type": "string", "enum": ["answers", "dimensions"], "description": "Overall = mean of the answers' overall scores (default) or of the dimension columns"},
    "title": {"type": "string", "description": "Chart title"},
    "chart": {"type": "boolean", "description": "Write the PNG chart (default true)"},
    "_output_dir": {"type": "string", "description": "Injected by the host"}
  }
})schema";

class Report : public evalgraph::Node {
 public:
  Report(const evalgraph::Host &, const json &p) : agg_(str_param(p, "overall", "answers")) {
    judge_ = str_param(p, "judge", "judge");
    file_ = str_param(p, "file", "compression_report");
    if (file_.find('/') != std::string::npos || file_ == "." || file_ == "..")
      throw std::invalid_argument("parameter 'file' must be a plain file name, got '" + file_ + "'");
    title_ = str_param(p, "title", "Context-compression evaluation (scores 0-5)");
    chart_ = bool_param(p, "chart", true);
    dir_ = str_param(p, "_output_dir", "");
    if (dir_.empty()) throw std::invalid_argument("compression.report: the host did not pass _output_dir");
  }

  json process(evalgraph::Call &, const json &record) override {
    auto it = record.find(judge_);
    if (it != record.end() && it->is_object() && it->contains("results")) {
      agg_.add(*it);
    } else {
      std::string why = "no output of node '" + judge_ + "'";
      for (const char *k : {"_errors", "_skipped"})
        if (record.contains(k) && record[k].is_object() && !record[k].empty())
          why = record[k].begin().key() + ": " + record[k].begin().value().get<std::string>();
      agg_.add_missing(why);
    }
    return nullptr;
  }

  json finish(evalgraph::Call &) override {
    json r = agg_.result();
    fs::path dir(dir_);
    json files = json::array();
    auto put = [&](const std::string &name, const std::string &content) {
      evalgraph::write_file_whole(dir / name, content, "compression.report");
      files.push_back(name);
    };
    put(file_ + ".md", Aggregator::markdown(r));
    put(file_ + ".csv", Aggregator::csv(r));
    put(file_ + "_by_probe_type.csv", Aggregator::by_type_csv(r));
    put(file_ + ".json", r.dump(2));
    if (chart_) {
      std::string png = file_ + ".png";
      write_chart(r, title_, evalgraph::partial_path(dir / png).string());
      evalgraph::publish_partial_file(dir / png, "compression.report");
      files.push_back(png);
    }
    return {{"files", files}};
  }

 private:
  Aggregator agg_;
  std::string judge_, file_, title_, dir_;
  bool chart_ = true;
};

}  // namespace

EVALGRAPH_PLUGIN("compression_report", "1.0.0", "Context compression: report sink",
                 evalgraph::node_type<Report>({EG_KIND_SINK, "compression.report",
                                               "methods x (overall + six dimensions) as Markdown, CSV, JSON and a PNG chart; by probe type; compression ratio; judge counts",
                                               kSchema, {}, {}, {}, 0}))
