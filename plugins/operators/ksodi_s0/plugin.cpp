// Plugin glue of ksodi.s0: parameters, ports, JSON in. Computation in s0.cpp, output in s0_output.cpp.
#include "evalgraph/input.hpp"
#include "evalgraph/plugin.hpp"
#include "s0_params.hpp"
#include "ksodi/plugin_util.hpp"
#include "s0.hpp"
#include "s0_output.hpp"

namespace {

using evalgraph::json;

struct Config : ksodi::S0Config {
  std::optional<std::string> embedding_provider;
};
const evalgraph::Params<Config> kParams{"", ksodi::s0_params(), {
  evalgraph::param(&Config::embedding_provider, "embedding_provider", "Embedding provider of the pipeline for R_red; null = host default (offline TF-IDF)").nullable(),
}};

class S0Node : public ksodi::EmbeddingNode {
 public:
  S0Node(const evalgraph::Host &host, const json &params) : S0Node(host, params, kParams.parse(params)) {}
  S0Node(const evalgraph::Host &host, const json &params, const Config &c)
      : EmbeddingNode(host, params, c.embedding_provider), p_(ksodi::resolve(c)) {}

  std::string process_raw(evalgraph::Call &call, std::string_view input) override {
    return evalgraph::for_each_record(input, "ksodi.s0", [&](std::string_view text) {
      const evalgraph::Record in(text, "ksodi.s0", {"answer", "system_prompt", "tool_profile", "user_text", "tool_profile_id"});
      ksodi::S0Input x;
      x.answer = in.required_text(0, "the assistant text");
      x.system_prompt = in.text(1);
      x.tool_profile = in.text(2);
      x.user_text = in.text(3);
      x.tool_profile_id = in.text(4);
      ksodi::check_sentences(x.answer, limits_.sentences_per_answer, "ksodi.s0");
      return ksodi::s0_output(ksodi::compute_s0(x, p_, embedder(call)), p_, provider_);
    });
  }

 private:
  const ksodi::S0Params p_;
};

// What expect: and compare need to know about the outputs: types, and which direction is better.
constexpr const char *kOutputs = R"({"S0": {"type": "number"}, "F": {"type": "number"}, "G_str": {"type": "number"}, "R_red": {"type": "number", "better": "lower"}, "no_explicit_format": {"type": "boolean"}, "n_paragraphs": {"type": "integer"}, "n_bullets": {"type": "integer"}, "n_numbered": {"type": "integer"}, "n_headings": {"type": "integer"}, "n_sentences": {"type": "integer"}})";

}  // namespace

EVALGRAPH_PLUGIN("ksodi_s0", "1.0.0", "KSODI-Standard S0: observable structure",
                 evalgraph::node_type<S0Node>({EG_KIND_OPERATOR, "ksodi.s0",
                                               "KSODI S0: format conformance, structure and redundancy of an answer",
                                               kParams.schema(), {"answer"},
                                               {"system_prompt", "tool_profile", "user_text", "tool_profile_id"},
                                               {"S0", "F", "G_str", "R_red", "no_explicit_format", "expectations_detected",
                                                "expectation_evidence", "format_passed_map", "format_evidence", "format_items", "format_counts",
                                                "n_paragraphs", "n_bullets", "n_numbered", "n_headings", "n_sentences",
                                                "short_answer_guardrail", "paragraph_similarities", "parameters"},
                                               EG_FLAG_THREAD_SAFE | EG_FLAG_USES_EMBEDDINGS, kOutputs}))
