// Plugin glue of ksodi.k0: parameters, ports, JSON in. Computation in k0.cpp, output in k0_output.cpp.
#include "evalgraph/input.hpp"
#include "evalgraph/plugin.hpp"
#include "k0_params.hpp"
#include "k0.hpp"
#include "k0_output.hpp"
#include "ksodi/plugin_util.hpp"
#include "ksodi/text.hpp"

namespace {

using evalgraph::json;

class K0Node : public evalgraph::RawNode {
 public:
  K0Node(const evalgraph::Host &, const json &params) {
    p_ = ksodi::resolve(ksodi::k0_params().parse(params), "weights");
    limits_ = ksodi::input_limits(params);
  }

  std::string process_raw(evalgraph::Call &, std::string_view input) override {
    return evalgraph::for_each_record(input, "ksodi.k0", [&](std::string_view text) {
      const evalgraph::Record in(text, "ksodi.k0", {"system_prompt", "tool_profile", "user_text", "retrieved_docs", "chunk_range",
                                                    "context_scope_id", "system_prompt_id", "tool_profile_id"});
      ksodi::K0Input x;
      x.system_prompt = in.text(0);
      x.tool_profile = in.text(1);
      x.user_text = in.text(2);
      for (const auto &d : in.docs(3, "doc_", limits_.nesting_depth)) x.n_docs += ksodi::text::trim(d.text).empty() ? 0 : 1;
      // kK0Meta[i] is input member 4 + i, passed through as it came (a string, or its JSON as nlohmann dumps it).
      return ksodi::k0_output(ksodi::compute_k0(x, p_), p_, x.n_docs, [&](std::size_t i, evalgraph::JsonWriter &w) {
        const evalgraph::input::Value &m = in[4 + i];
        if (m.is_string()) w.string(m.str());
        else if (m.absent_or_null()) w.null();
        else w.json(in.json(4 + i));
      });
    });
  }

 private:
  ksodi::K0Params p_;
  ksodi::InputLimits limits_;
};

// What expect: and compare need to know about the outputs: types, and which direction is better.
constexpr const char *kOutputs = R"({"K0": {"type": "number"}, "not_interpretable": {"type": "boolean"}, "label": {"type": "string"}, "n_docs": {"type": "integer"}})";

}  // namespace

EVALGRAPH_PLUGIN("ksodi_k0", "1.0.0", "KSODI-Standard K0: observable context completeness",
                 evalgraph::node_type<K0Node>({EG_KIND_OPERATOR, "ksodi.k0",
                                               "KSODI K0: which of the six context dimensions Z R D C E T the unit provides",
                                               ksodi::k0_params().schema(), {"user_text"},
                                               {"system_prompt", "tool_profile", "retrieved_docs", "context_scope_id",
                                                "chunk_range", "system_prompt_id", "tool_profile_id"},
                                               {"K0", "context_map", "context_evidence", "not_interpretable", "label",
                                                "n_docs", "context_scope_id", "chunk_range", "system_prompt_id",
                                                "tool_profile_id", "detector_version", "dimension_weights", "parameters"},
                                               EG_FLAG_THREAD_SAFE, kOutputs}))
