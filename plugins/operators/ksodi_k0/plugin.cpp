// Plugin glue of ksodi.k0: parameters, ports, JSON in/out. The computation is in k0.cpp.
#include "evalgraph/plugin.hpp"
#include "k0.hpp"
#include "ksodi/detect.hpp"
#include "ksodi/json_input.hpp"
#include "ksodi/plugin_util.hpp"
#include "ksodi/text.hpp"

namespace {

using evalgraph::json;

constexpr const char *kSchema = R"schema({
  "type": "object",
  "additionalProperties": false,
  "properties": {
    "weights": {
      "type": "object",
      "additionalProperties": false,
      "description": "Dimension weights (default 1 each = the seed's equal weighting); K0 = sum(w_i * present_i) / sum(w_i)",
      "properties": {
        "Z": {"type": "number", "minimum": 0, "maximum": 100, "description": "Goal / task named"},
        "R": {"type": "number", "minimum": 0, "maximum": 100, "description": "Role / perspective"},
        "D": {"type": "number", "minimum": 0, "maximum": 100, "description": "Data: retrieved docs or explicit inputs/examples"},
        "C": {"type": "number", "minimum": 0, "maximum": 100, "description": "Constraints: rules, limits, bans"},
        "E": {"type": "number", "minimum": 0, "maximum": 100, "description": "Expected output form"},
        "T": {"type": "number", "minimum": 0, "maximum": 100, "description": "Tools available"}
      }
    },
    "interpretable_min": {"type": "number", "minimum": 0, "maximum": 1, "description": "Below this K0 the answer scores are flagged not interpretable (seed: 0.4)"}
  }
})schema";

class K0Node : public evalgraph::Node {
 public:
  K0Node(const evalgraph::Host &, const json &params) {
    if (auto it = params.find("weights"); it != params.end() && it->is_object()) {
      for (std::size_t i = 0; i < ksodi::kK0Dims.size(); ++i) p_.weights[i] = ksodi::param_num(*it, ksodi::kK0Dims[i], 1.0, 0, 100);
    }
    double sum = 0;
    for (double w : p_.weights) sum += w;
    if (sum <= 0) throw std::invalid_argument("parameter 'weights': at least one dimension needs a weight > 0");
    p_.interpretable_min = ksodi::param_num(params, "interpretable_min", 0.4, 0, 1);
  }

  json process(evalgraph::Call &, const json &in) override {
    ksodi::K0Input x;
    x.system_prompt = ksodi::text_of(in, "system_prompt");
    x.tool_profile = ksodi::text_of(in, "tool_profile");
    x.user_text = ksodi::text_of(in, "user_text");
    std::vector<ksodi::Doc> docs;
    try {
      docs = ksodi::parse_docs(in, "retrieved_docs", "doc_");
    } catch (const std::invalid_argument &e) {
      throw evalgraph::InputError(std::string("ksodi.k0: ") + e.what());
    }
    for (const auto &d : docs) x.n_docs += ksodi::text::trim(d.text).empty() ? 0 : 1;
    ksodi::K0Result r = ksodi::compute_k0(x, p_);

    json map = json::object(), ev = json::object(), w = json::object();
    for (std::size_t i = 0; i < ksodi::kK0Dims.size(); ++i) {
      map[ksodi::kK0Dims[i]] = r.present[i];
      ev[ksodi::kK0Dims[i]] = r.evidence[i];
      w[ksodi::kK0Dims[i]] = p_.weights[i];
    }
    auto meta = [&](const char *k) { return in.contains(k) && !in[k].is_null() ? in[k] : json(nullptr); };
    json out;
    out["K0"] = r.K0;
    out["context_map"] = map;
    out["context_evidence"] = ev;
    out["not_interpretable"] = r.not_interpretable;
    out["label"] = r.label;
    out["n_docs"] = x.n_docs;
    out["context_scope_id"] = meta("context_scope_id");
    out["chunk_range"] = meta("chunk_range");
    out["system_prompt_id"] = meta("system_prompt_id");
    out["tool_profile_id"] = meta("tool_profile_id");
    out["detector_version"] = ksodi::detect::kDetectorVersion;
    out["dimension_weights"] = w;
    out["parameters"] = {{"dimension_weights", w},
                         {"interpretable_min", p_.interpretable_min},
                         {"detector_version", ksodi::detect::kDetectorVersion}};
    return out;
  }

 private:
  ksodi::K0Params p_;
};

}  // namespace

EVALGRAPH_PLUGIN("ksodi_k0", "1.0.0", "KSODI-Standard K0: observable context completeness",
                 evalgraph::node_type<K0Node>({EG_KIND_OPERATOR, "ksodi.k0",
                                               "KSODI K0: which of the six context dimensions Z R D C E T the unit provides",
                                               kSchema, {"user_text"},
                                               {"system_prompt", "tool_profile", "retrieved_docs", "context_scope_id",
                                                "chunk_range", "system_prompt_id", "tool_profile_id"},
                                               {"K0", "context_map", "context_evidence", "not_interpretable", "label",
                                                "n_docs", "context_scope_id", "chunk_range", "system_prompt_id",
                                                "tool_profile_id", "detector_version", "dimension_weights", "parameters"},
                                               EG_FLAG_THREAD_SAFE}))
