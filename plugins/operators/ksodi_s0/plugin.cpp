// Plugin glue of ksodi.s0: parameters, ports, JSON in. Computation in s0.cpp, output in s0_output.cpp.
#include "evalgraph/input.hpp"
#include "evalgraph/plugin.hpp"
#include "ksodi_measures/s0_params.hpp"
#include "ksodi/plugin_util.hpp"
#include "ksodi_measures/s0.hpp"
#include "ksodi_measures/s0_input.hpp"
#include "ksodi_measures/s0_output.hpp"

namespace {

using evalgraph::json;

struct Config : ksodi::S0Config {
  std::optional<std::string> embedding_provider;
};
const evalgraph::Params<Config> kParams{ksodi::s0_params(), {
  evalgraph::param(&Config::embedding_provider, "embedding_provider", "Embedding provider of the pipeline for R_red; null = host default (offline TF-IDF)").nullable(),
}};

// The typed writes are what expect: and compare need to know about the outputs: types, better direction.
const evalgraph::NodeSpec kSpec{
    .name = "ksodi.s0",
    .description = "KSODI S0: format conformance, structure and redundancy of an answer",
    .reads = {"answer"},
    .reads_optional = {"system_prompt", "tool_profile", "user_text", "tool_profile_id"},
    .writes = {{"S0", "number"}, {"F", "number"}, {"G_str", "number"}, {"R_red", "number", "lower"},
               {"no_explicit_format", "boolean"}, "expectations_detected", "expectation_evidence", "format_passed_map",
               "format_evidence", "format_items", "format_counts", {"n_paragraphs", "integer"}, {"n_bullets", "integer"},
               {"n_numbered", "integer"}, {"n_headings", "integer"}, {"n_sentences", "integer"}, "short_answer_guardrail",
               "paragraph_similarities", "parameters"},
    .flags = EG_FLAG_THREAD_SAFE | EG_FLAG_USES_EMBEDDINGS,
    .params = kParams};

class S0Node : public ksodi::EmbeddingNode {
 public:
  S0Node(const evalgraph::Host &host, const Config &c, const json &params)
      : EmbeddingNode(host, params, c.embedding_provider), p_(ksodi::resolve(c)) {}

  std::string process_raw(evalgraph::Call &call, std::string_view input) override {
    return evalgraph::for_each_record(input, kSpec.name, [&](std::string_view text) {
      const evalgraph::Record in(text, kSpec);
      const ksodi::S0Input x = ports_.read(in, answer(in, ports_.answer));
      return ksodi::s0_output(ksodi::compute_s0(x, p_, embedder(call)), p_, provider_);
    });
  }

 private:
  const ksodi::S0Ports ports_{kSpec};
  const ksodi::S0Params p_;
};

}  // namespace

EVALGRAPH_PLUGIN("ksodi_s0", "KSODI-Standard S0: observable structure", evalgraph::node_type<S0Node>(kSpec))
