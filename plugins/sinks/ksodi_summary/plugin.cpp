// Plugin glue of the ksodi.summary sink: receives every finished record, writes summary.md at finish().
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "evalgraph/output_file.hpp"
#include "evalgraph/plugin.hpp"
#include "ksodi/plugin_util.hpp"
#include "summary.hpp"

namespace {

using evalgraph::json;

constexpr const char *kSchema = R"schema({
  "type": "object",
  "additionalProperties": false,
  "properties": {
    "file": {"type": "string", "minLength": 1, "description": "Output file name inside the run's output directory (default summary.md)"},
    "scope_field": {"type": "string", "minLength": 1, "description": "Record field that groups the units (default context_scope_id)"},
    "id_field": {"type": "string", "minLength": 1, "description": "Record field naming a unit in the lists (default id)"},
    "s0_node": {"type": "string", "minLength": 1, "description": "Node id of the ksodi.s0 node (default s0)"},
    "k0_node": {"type": "string", "minLength": 1, "description": "Node id of the ksodi.k0 node (default k0)"},
    "o0_node": {"type": "string", "minLength": 1, "description": "Node id of the ksodi.o0 node (default o0)"},
    "threshold": {"type": "number", "minimum": 0, "maximum": 1, "description": "K0 below this flags a unit as not interpretable (default 0.4)"},
    "max_ids": {"type": "integer", "minimum": 0, "maximum": 100000, "description": "Record ids listed per scope and list; more are only counted (default 50)"},
    "_output_dir": {"type": "string", "description": "Injected by the host: the run's output directory"}
  }
})schema";


class SummarySink : public evalgraph::Node {
 public:
  SummarySink(const evalgraph::Host &, const json &p) : agg_(config(p)) {
    auto target = ksodi::sink_target(p, "summary.md", "ksodi.summary");
    file_ = target.file;
    dir_ = target.dir;
  }

  json process(evalgraph::Call &, const json &record) override {
    agg_.add(record);
    return nullptr;
  }

  json finish(evalgraph::Call &) override {
    evalgraph::write_file_whole(std::filesystem::path(dir_) / file_, agg_.markdown(), "ksodi.summary");
    return {{"files", json::array({file_})}};
  }

 private:
  static ksodi::SummaryConfig config(const json &p) {
    ksodi::SummaryConfig c;
    c.scope_field = ksodi::param_str(p, "scope_field", "context_scope_id");
    c.id_field = ksodi::param_str(p, "id_field", "id");
    c.s0_node = ksodi::param_str(p, "s0_node", "s0");
    c.k0_node = ksodi::param_str(p, "k0_node", "k0");
    c.o0_node = ksodi::param_str(p, "o0_node", "o0");
    if (auto it = p.find("threshold"); it != p.end() && it->is_number()) c.k0_threshold = it->get<double>();
    if (auto it = p.find("max_ids"); it != p.end() && it->is_number_integer()) c.max_ids = it->get<std::size_t>();
    return c;
  }

  ksodi::SummaryAggregator agg_;
  std::string file_, dir_;
};

}  // namespace

EVALGRAPH_PLUGIN("ksodi_summary", "1.0.0", "KSODI-Standard summary report (Markdown, per context scope)",
                 evalgraph::node_type<SummarySink>({EG_KIND_SINK, "ksodi.summary",
                                                    "Markdown summary of S0/K0/O0 per context_scope_id", kSchema, {}, {},
                                                    {}, 0}))
