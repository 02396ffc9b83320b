// Plugin glue of the ksodi.curves sink: collects KSODI-Full values per conversation, writes PNG curves and a
// Markdown summary at finish(). The collection and rendering are in curves.cpp.
#include "curves.hpp"
#include "evalgraph/output_file.hpp"
#include "evalgraph/plugin.hpp"
#include "ksodi/plugin_util.hpp"

namespace {

using evalgraph::json;

struct Config : ksodi::CurvesConfig {
  std::string file = "curves.md";
};
using C = Config;
const evalgraph::Params<C> kParams{{
  evalgraph::param<C>(&C::file, "file", "Markdown summary file name inside the run's output directory; PNGs go to curves/").min_length(1),
  evalgraph::param<C>(&C::group_field, "group_field", "Record field naming the conversation").min_length(1),
  evalgraph::param<C>(&C::order_field, "order_field", "Record field naming the turn").min_length(1),
  evalgraph::node_id_param<C>(&C::s_node, "s_node", "ksodi.s_t"),
  evalgraph::node_id_param<C>(&C::k_node, "k_node", "ksodi.k_t"),
  evalgraph::node_id_param<C>(&C::o_node, "o_node", "ksodi.o_t"),
  evalgraph::param<C>(&C::event_min, "event_min", "A Δ term at or above this value is reported as an event").range(0, 1),
  evalgraph::param<C>(&C::width, "width", "Width of a conversation chart").range(300, 4000).unit("px"),
  evalgraph::param<C>(&C::height, "height", "Height of the charts").range(200, 3000).unit("px"),
}};


const evalgraph::NodeSpec kSpec{
    .kind = EG_KIND_SINK,
    .name = "ksodi.curves",
    .description = "Line charts of S(t), K(t), O(t) per conversation, an overview chart and a Markdown summary of build-up, breaks and repairs",
    .params = kParams};

class CurvesSink : public evalgraph::Node {
 public:
  CurvesSink(const evalgraph::Host &, const Config &c, const json &p) : c_(c), files_(p, kSpec.name), file_(c.file) {
    files_.path(file_);  // checked (and its folders made) before the run
  }

  json process(evalgraph::Call &, const json &record) override {
    c_.add(record);
    return nullptr;
  }

  json finish(evalgraph::Call &) override { return {{"files", c_.write(files_.dir().string(), file_)}}; }

 private:
  ksodi::CurvesCollector c_;
  evalgraph::SinkFiles files_;
  std::string file_;
};

}  // namespace

EVALGRAPH_PLUGIN("ksodi_curves", "KSODI-Full curves per conversation (PNG line charts + Markdown)",
                 evalgraph::node_type<CurvesSink>(kSpec))
