// Plugin glue of the ksodi.summary sink: receives every finished record, writes summary.md at finish().
#include <filesystem>

#include "evalgraph/output_file.hpp"
#include "evalgraph/plugin.hpp"
#include "ksodi/plugin_util.hpp"
#include "summary.hpp"

namespace {

using evalgraph::json;

struct Config : ksodi::SummaryConfig {
  std::string file = "summary.md";
};
using C = Config;
const evalgraph::Params<C> kParams{{
  evalgraph::param<C>(&C::file, "file", "Output file name inside the run's output directory").min_length(1),
  evalgraph::param<C>(&C::scope_field, "scope_field", "Record field that groups the units").min_length(1),
  evalgraph::param<C>(&C::id_field, "id_field", "Record field naming a unit in the lists").min_length(1),
  evalgraph::node_id_param<C>(&C::s0_node, "s0_node", "ksodi.s0"),
  evalgraph::node_id_param<C>(&C::k0_node, "k0_node", "ksodi.k0"),
  evalgraph::node_id_param<C>(&C::o0_node, "o0_node", "ksodi.o0"),
  evalgraph::param<C>(&C::k0_threshold, "threshold", "K0 below this flags a unit as not interpretable").range(0, 1),
  evalgraph::param<C>(&C::max_ids, "max_ids", "Record ids listed per scope and list; more are only counted").range(0, 100000),
}};


const evalgraph::NodeSpec kSpec{
    .kind = EG_KIND_SINK,
    .name = "ksodi.summary",
    .description = "Markdown summary of S0/K0/O0 per context_scope_id",
    .params = kParams};

class SummarySink : public evalgraph::Node {
 public:
  SummarySink(const evalgraph::Host &, const Config &c, const json &p)
      : agg_(c), file_(c.file), path_(evalgraph::SinkFiles(p, kSpec.name).path(c.file)) {}

  json process(evalgraph::Call &, const json &record) override {
    agg_.add(record);
    return nullptr;
  }

  json finish(evalgraph::Call &) override {
    evalgraph::write_file_whole(path_, agg_.markdown(), kSpec.name);
    return {{"files", json::array({file_})}};
  }

 private:
  ksodi::SummaryAggregator agg_;
  std::string file_;            // as the pipeline gave it: relative to the output folder
  std::filesystem::path path_;  // where it goes
};

}  // namespace

EVALGRAPH_PLUGIN("ksodi_summary", "KSODI-Standard summary report (Markdown, per context scope)",
                 evalgraph::node_type<SummarySink>(kSpec))
