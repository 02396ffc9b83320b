// sink.html_report — report.html: one self-contained page per run (README.md in this folder).
//
// The glue: the page's title and the run's settings (the host's `_run` parameter) when the sink is created,
// each record handed to the page as it arrives, and in finish() what the host's run_info says once the run
// is done (eg-final: the counts and the LLM usage per provider; ABI 1.1). page.hpp writes the page, with the
// records gzip-compressed on a thread of its own so that memory stays flat however many records a run has;
// the browser decompresses the records with its own DecompressionStream and parses each record when it is
// needed.
#include <ctime>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "evalgraph/output_file.hpp"
#include "evalgraph/plugin.hpp"
#include "page.hpp"
#include "report_assets.hpp"

namespace {

using nlohmann::json;

struct Config {
  std::string file = "report.html";
  std::optional<std::string> title;
};
const evalgraph::Params<Config> kParams{{
  evalgraph::output_file_param<Config>(),
  evalgraph::param(&Config::title, "title", "Page title (null: the pipeline's name)."),
}};

const evalgraph::NodeSpec kSpec{
    .kind = EG_KIND_SINK,
    .name = "sink.html_report",
    .description = "report.html: the run, means with intervals, histograms, all records with their evidence (one file, no network)",
    .params = kParams};

class HtmlReport : public evalgraph::RawNode {
 public:
  HtmlReport(const evalgraph::Host &host, const Config &c, const json &params) : host_(host) {
    file_ = c.file;
    final_ = evalgraph::SinkFiles(params, kSpec.name).path(file_);
    json run = params.contains("_run") ? params["_run"] : json::object();
    std::string title = c.title ? *c.title : run.value("pipeline", std::string("evalgraph run"));
    char stamp[32];
    std::time_t now = std::time(nullptr);
    std::strftime(stamp, sizeof stamp, "%Y-%m-%d %H:%M:%S", std::localtime(&now));
    run["report_written"] = stamp;
    page_ = std::make_unique<html_report::PageWriter>(evalgraph::partial_path(final_), title, report_assets::kCss, run);
  }

  std::string process_raw(evalgraph::Call &, std::string_view in) override {
    page_->add_record(in);
    return {};
  }

  json finish(evalgraph::Call &call) override {
    // The run as the host sees it now that every record is written (counts, LLM usage per provider). A host
    // older than ABI 1.1 has no run_info (an empty object: no element); a failing one costs only this part.
    page_->finish([&] {
      try {
        return host_.run_info(&call);
      } catch (const std::exception &e) {
        host_.log(EG_LOG_WARN, std::string("report.html: the run's final counts and LLM usage are missing: ") + e.what(), &call);
        return json::object();
      }
    }, report_assets::kJs);
    evalgraph::publish_partial_file(final_, kSpec.name);
    return evalgraph::files_written(file_, page_->records());
  }

 private:
  evalgraph::Host host_;  // the host's table outlives its nodes
  std::string file_;
  std::filesystem::path final_;
  std::unique_ptr<html_report::PageWriter> page_;  // not finished: report.html.partial stays as the trace
};

}  // namespace

EVALGRAPH_PLUGIN("sink_html_report", "self-contained HTML report of a run", evalgraph::node_type<HtmlReport>(kSpec))
