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

struct Config {
  std::string judge = "judge", file = "compression_report", overall = "answers";
  std::string title = "Context-compression evaluation (scores 0-5)";
  bool chart = true;
};
const evalgraph::Params<Config> kParams{{
  evalgraph::node_id_param(&Config::judge, "judge", "compression.judge"),
  evalgraph::param(&Config::file, "file", "Base name of the files written").min_length(1),
  evalgraph::param(&Config::overall, "overall", "Overall = mean of the answers' overall scores or of the dimension columns").one_of({"answers", "dimensions"}),
  evalgraph::param(&Config::title, "title", "Chart title"),
  evalgraph::param(&Config::chart, "chart", "Write the PNG chart"),
}};

const evalgraph::NodeSpec kSpec{
    .kind = EG_KIND_SINK,
    .name = "compression.report",
    .description = "methods x (overall + six dimensions) as Markdown, CSV, JSON and a PNG chart; by probe type; compression ratio; judge counts",
    .params = kParams};

class Report : public evalgraph::Node {
 public:
  Report(const evalgraph::Host &, const Config &c, const json &p) : agg_(c.overall), c_(c), files_(p, kSpec.name) {
    files_.path(c_.file);  // the base name, checked (and its folders made) before the run
  }

  json process(evalgraph::Call &, const json &record) override {
    auto it = record.find(c_.judge);
    if (it != record.end() && it->is_object() && it->contains("results")) {
      agg_.add(*it);
    } else {
      std::string why = "no output of node '" + c_.judge + "'";
      for (const char *k : {"_errors", "_skipped"})
        if (record.contains(k) && record[k].is_object() && !record[k].empty())
          why = record[k].begin().key() + ": " + record[k].begin().value().get<std::string>();
      agg_.add_missing(why);
    }
    return nullptr;
  }

  json finish(evalgraph::Call &) override {
    json r = agg_.result();
    json files = json::array();
    auto put = [&](const std::string &name, const std::string &content) {
      evalgraph::write_file_whole(files_.path(name), content, kSpec.name);
      files.push_back(name);
    };
    put(c_.file + ".md", Aggregator::markdown(r));
    put(c_.file + ".csv", Aggregator::csv(r));
    put(c_.file + "_by_probe_type.csv", Aggregator::by_type_csv(r));
    put(c_.file + ".json", r.dump(2));
    if (c_.chart) {
      const std::string png = c_.file + ".png";
      write_chart(r, c_.title, evalgraph::partial_path(files_.path(png)).string());
      evalgraph::publish_partial_file(files_.path(png), kSpec.name);
      files.push_back(png);
    }
    return {{"files", files}};
  }

 private:
  Aggregator agg_;
  const Config c_;
  const evalgraph::SinkFiles files_;
};

}  // namespace

EVALGRAPH_PLUGIN("compression_report", "Context compression: report sink", evalgraph::node_type<Report>(kSpec))
