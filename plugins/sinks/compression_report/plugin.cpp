// compression.report — the report of a context-compression evaluation: methods × (overall + six
// dimensions) in Markdown and CSV, the breakdown by probe type, the compression ratio, the judge call and
// invalid-answer counts, a grouped bar chart (PNG) and everything as JSON.
#include <filesystem>

#include "chart.hpp"
#include "compression/aggregate.hpp"
#include "compression/llm_util.hpp"
#include "evalgraph/output_file.hpp"
#include "evalgraph/plugin.hpp"

namespace {
using namespace compression;
namespace fs = std::filesystem;

struct Config {
  std::string judge = "judge", file = "compression_report", overall = "answers";
  std::string title = "Context-compression evaluation (scores 0-5)";
  bool chart = true;
};
const evalgraph::Params<Config> kParams{"", {
  evalgraph::param(&Config::judge, "judge", "Node id of the compression.judge node").min_length(1),
  evalgraph::param(&Config::file, "file", "Base name of the files written").min_length(1),
  evalgraph::param(&Config::overall, "overall", "Overall = mean of the answers' overall scores or of the dimension columns").one_of({"answers", "dimensions"}),
  evalgraph::param(&Config::title, "title", "Chart title"),
  evalgraph::param(&Config::chart, "chart", "Write the PNG chart"),
}};

// The node type, declared once.
const evalgraph::NodeSpec kSpec{
    .kind = EG_KIND_SINK,
    .name = "compression.report",
    .description = "methods x (overall + six dimensions) as Markdown, CSV, JSON and a PNG chart; by probe type; compression ratio; judge counts",
    .params_schema = kParams.schema()};

class Report : public evalgraph::Node {
 public:
  Report(const evalgraph::Host &, const json &p) : Report(p, kParams.parse(p)) {}
  Report(const json &p, const Config &c) : agg_(c.overall) {
    judge_ = c.judge;
    file_ = c.file;
    if (file_.find('/') != std::string::npos || file_ == "." || file_ == "..")
      throw std::invalid_argument("parameter 'file' must be a plain file name, got '" + file_ + "'");
    title_ = c.title;
    chart_ = c.chart;
    dir_ = evalgraph::output_dir(p, kSpec.name);
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
      evalgraph::write_file_whole(dir / name, content, kSpec.name);
      files.push_back(name);
    };
    put(file_ + ".md", Aggregator::markdown(r));
    put(file_ + ".csv", Aggregator::csv(r));
    put(file_ + "_by_probe_type.csv", Aggregator::by_type_csv(r));
    put(file_ + ".json", r.dump(2));
    if (chart_) {
      std::string png = file_ + ".png";
      write_chart(r, title_, evalgraph::partial_path(dir / png).string());
      evalgraph::publish_partial_file(dir / png, kSpec.name);
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

EVALGRAPH_PLUGIN("compression_report", "1.0.0", "Context compression: report sink", evalgraph::node_type<Report>(kSpec))
