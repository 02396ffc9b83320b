// Plugin glue of ksodi.o0: parameters, ports, JSON in. Computation in o0.cpp, output in o0_output.cpp.
#include "evalgraph/input.hpp"
#include "evalgraph/plugin.hpp"
#include "ksodi/plugin_util.hpp"
#include "o0.hpp"
#include "o0_calibration.hpp"
#include "o0_output.hpp"
#include "o0_params.hpp"

namespace {

using evalgraph::json;

struct Config : ksodi::O0Config {
  std::optional<std::string> embedding_provider;
  std::size_t sentence_text_max = 200;
};
const evalgraph::Params<Config> kParams{"", ksodi::o0_params(), {
  evalgraph::param(&Config::embedding_provider, "embedding_provider", "Embedding provider of the pipeline; null = host default (offline TF-IDF)").nullable(),
  evalgraph::param(&Config::sentence_text_max, "sentence_text_max", "Bytes of each sentence's text kept in the audit list (0 = offsets only)").range(0, 100000).unit("bytes"),
}};

class O0Node : public ksodi::EmbeddingNode {
 public:
  O0Node(const evalgraph::Host &host, const json &params) : O0Node(host, params, kParams.parse(params)) {}
  O0Node(const evalgraph::Host &host, const json &params, const Config &c)
      : EmbeddingNode(host, params, c.embedding_provider),
        p_(ksodi::resolve(c)),
        out_{ksodi::calibration_id(c), c.embedding_provider, c.sentence_text_max} {}

  std::string process_raw(evalgraph::Call &call, std::string_view input) override {
    return evalgraph::for_each_record(input, "ksodi.o0", [&](std::string_view text) {
      const evalgraph::Record in(text, "ksodi.o0", {"answer", "retrieved_docs", "tool_outputs", "user_text"});
      ksodi::O0Input x;
      x.answer = in.required_text(0, "the assistant text");
      x.docs = in.docs(1, "doc_", limits_.nesting_depth);
      x.tool_outputs = in.docs(2, "tool_", limits_.nesting_depth);
      x.user_text = in.text(3);
      ksodi::check_sentences(x.answer, limits_.sentences_per_answer, "ksodi.o0");
      return ksodi::o0_output(ksodi::compute_o0(x, p_, embedder(call)), p_, out_, x.answer);
    });
  }

 private:
  const ksodi::O0Params p_;
  const ksodi::O0OutputOptions out_;  // what the output states besides the result
};

// What expect: and compare need to know about the outputs: types, and which direction is better.
constexpr const char *kOutputs = R"({"O0": {"type": "number"}, "A_ret": {"type": "number"}, "T": {"type": "number"}, "U": {"type": "number", "better": "lower"}, "computed": {"type": "boolean"}, "n_sent": {"type": "integer"}, "n_attrib": {"type": "integer"}, "n_unsupported": {"type": "integer", "better": "lower"}})";

}  // namespace

EVALGRAPH_PLUGIN("ksodi_o0", "1.0.0", "KSODI-Standard O0: grounding relative to retrieval",
                 evalgraph::node_type<O0Node>({EG_KIND_OPERATOR, "ksodi.o0",
                                               "KSODI O0: retrieval alignment, traceability and unsupported sentences",
                                               kParams.schema(), {"answer"}, {"retrieved_docs", "tool_outputs", "user_text"},
                                               {"O0", "A_ret", "T", "U", "computed", "flags", "n_sent", "n_attrib",
                                                "n_unsupported", "retrieval_doc_ids", "tool_output_ids", "doc_alignment",
                                                "best_doc_id", "empty_docs_skipped", "marker_kinds", "sentences",
                                                "embedding_model_id", "tau", "weights", "parameters"},
                                               EG_FLAG_THREAD_SAFE | EG_FLAG_USES_EMBEDDINGS, kOutputs}))
