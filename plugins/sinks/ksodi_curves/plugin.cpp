// Plugin glue of the ksodi.curves sink: collects KSODI-Full values per conversation, writes PNG curves and a
// Markdown summary at finish(). The collection and rendering are in curves.cpp.
#include "curves.hpp"
#include "evalgraph/plugin.hpp"
#include "ksodi/plugin_util.hpp"

namespace {

using evalgraph::json;

constexpr const char *kSchema = R"schema({
  "type": "object",
  "additionalProperties": false,
  "properties": {
    "file": {"type": "string", "minLength": 1, "description": "Markdown summary file name inside the run's output directory (default curves.md); PNGs go to curves/"},
    "group_field": {"type": "string", "minLength": 1, "description": "Record field naming the conversation (default conversation_id)"},
    "order_field": {"type": "string", "minLength": 1, "description": "Record field naming the turn (default turn)"},
    "s_node": {"type": "string", "minLength": 1, "description": "Node id of the ksodi.s_t node (default s_t)"},
    "k_node": {"type": "string", "minLength": 1, "description": "Node id of the ksodi.k_t node (default k_t)"},
    "o_node": {"type": "string", "minLength": 1, "description": "Node id of the ksodi.o_t node (default o_t)"},
    "event_min": {"type": "number", "minimum": 0, "maximum": 1, "description": "A Δ term at or above this value is reported as an event (default 0.05)"},
    "width": {"type": "integer", "minimum": 300, "maximum": 4000, "description": "Width of a conversation chart in pixels (default 900)"},
    "height": {"type": "integer", "minimum": 200, "maximum": 3000, "description": "Height of the charts in pixels (default 420)"},
    "_output_dir": {"type": "string", "description": "Injected by the host: the run's output directory"}
  }
})schema";


class CurvesSink : public evalgraph::Node {
 public:
  CurvesSink(const evalgraph::Host &, const json &p) : c_(config(p)) {
    auto target = ksodi::sink_target(p, "curves.md", "ksodi.curves");
    file_ = target.file;
    dir_ = target.dir;
  }

  json process(evalgraph::Call &, const json &record) override {
    c_.add(record);
    return nullptr;
  }

  json finish(evalgraph::Call &) override { return {{"files", c_.write(dir_, file_)}}; }

 private:
  static ksodi::CurvesConfig config(const json &p) {
    ksodi::CurvesConfig c;
    c.group_field = ksodi::param_str(p, "group_field", "conversation_id");
    c.order_field = ksodi::param_str(p, "order_field", "turn");
    c.s_node = ksodi::param_str(p, "s_node", "s_t");
    c.k_node = ksodi::param_str(p, "k_node", "k_t");
    c.o_node = ksodi::param_str(p, "o_node", "o_t");
    if (auto it = p.find("event_min"); it != p.end() && it->is_number()) c.event_min = it->get<double>();
    if (auto it = p.find("width"); it != p.end() && it->is_number_integer()) c.width = it->get<int>();
    if (auto it = p.find("height"); it != p.end() && it->is_number_integer()) c.height = it->get<int>();
    return c;
  }

  ksodi::CurvesCollector c_;
  std::string file_, dir_;
};

}  // namespace

EVALGRAPH_PLUGIN("ksodi_curves", "1.0.0", "KSODI-Full curves per conversation (PNG line charts + Markdown)",
                 evalgraph::node_type<CurvesSink>({EG_KIND_SINK, "ksodi.curves",
                                                   "Line charts of S(t), K(t), O(t) per conversation, an overview chart and "
                                                   "a Markdown summary of build-up, breaks and repairs",
                                                   kSchema, {}, {}, {}, 0}))
