// Plugin glue of ksodi.k0: parameters, ports, JSON in. Computation in k0.cpp, output in k0_output.cpp.
#include "evalgraph/input.hpp"
#include "evalgraph/plugin.hpp"
#include "ksodi_measures/k0_params.hpp"
#include "ksodi_measures/k0.hpp"
#include "ksodi_measures/k0_input.hpp"
#include "ksodi_measures/k0_output.hpp"
#include "ksodi/plugin_util.hpp"

namespace {

using evalgraph::json;

// The typed writes are what expect: and compare need to know about the outputs: types, better direction.
const evalgraph::NodeSpec kSpec{
    .name = "ksodi.k0",
    .description = "KSODI K0: which of the six context dimensions Z R D C E T the unit provides",
    .reads = {"user_text"},
    .reads_optional = {"system_prompt", "tool_profile", "retrieved_docs", "context_scope_id", "chunk_range",
                       "system_prompt_id", "tool_profile_id"},
    .writes = {{"K0", "number"}, "context_map", "context_evidence", {"not_interpretable", "boolean"}, {"label", "string"},
               {"n_docs", "integer"}, "context_scope_id", "chunk_range", "system_prompt_id", "tool_profile_id",
               "detector_version", "dimension_weights", "parameters"},
    .flags = EG_FLAG_THREAD_SAFE,
    .params = ksodi::k0_params()};

class K0Node : public evalgraph::RawNode {
 public:
  K0Node(const evalgraph::Host &, const ksodi::K0Config &c, const json &params)
      : p_(ksodi::resolve(c, "weights")), limits_(evalgraph::input_limits(params)) {
    for (std::size_t i = 0; i < std::size(ksodi::kK0Meta); ++i) meta_[i] = kSpec.port(ksodi::kK0Meta[i]);
  }

  std::string process_raw(evalgraph::Call &, std::string_view input) override {
    return evalgraph::for_each_record(input, kSpec.name, [&](std::string_view text) {
      const evalgraph::Record in(text, kSpec);
      const ksodi::K0Input x = ports_.read(in, limits_.nesting_depth);
      // kK0Meta[i] is the port meta_[i], passed through as it came (a string, or its JSON as nlohmann dumps it).
      return ksodi::k0_output(ksodi::compute_k0(x, p_), p_, x.n_docs, [&](std::size_t i, evalgraph::JsonWriter &w) {
        const evalgraph::input::Value &m = in[meta_[i]];
        if (m.is_string()) w.string(m.str());
        else if (m.absent_or_null()) w.null();
        else w.json(in.json(meta_[i]));
      });
    });
  }

 private:
  const ksodi::K0Params p_;
  const evalgraph::InputLimits limits_;
  const ksodi::K0Ports ports_{kSpec};
  evalgraph::Port meta_[std::size(ksodi::kK0Meta)];
};

}  // namespace

EVALGRAPH_PLUGIN("ksodi_k0", "KSODI-Standard K0: observable context completeness", evalgraph::node_type<K0Node>(kSpec))
