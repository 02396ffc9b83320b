// Plugin glue of ksodi.o0: parameters, ports, JSON in. Computation in o0.cpp, output in o0_output.cpp.
#include "evalgraph/input.hpp"
#include "evalgraph/plugin.hpp"
#include "ksodi/plugin_util.hpp"
#include "ksodi_measures/o0.hpp"
#include "ksodi_measures/o0_calibration.hpp"
#include "ksodi_measures/o0_input.hpp"
#include "ksodi_measures/o0_output.hpp"
#include "ksodi_measures/o0_params.hpp"

namespace {

using evalgraph::json;

struct Config : ksodi::O0Config {
  std::optional<std::string> embedding_provider;
  std::size_t sentence_text_max = 200;
};
const evalgraph::Params<Config> kParams{ksodi::o0_params(), {
  evalgraph::param(&Config::embedding_provider, "embedding_provider", "Embedding provider of the pipeline; null = host default (offline TF-IDF)").nullable(),
  evalgraph::param(&Config::sentence_text_max, "sentence_text_max", "Bytes of each sentence's text kept in the audit list (0 = offsets only)").range(0, 100000).unit("bytes"),
}};

// The typed writes are what expect: and compare need to know about the outputs: types, better direction.
const evalgraph::NodeSpec kSpec{
    .name = "ksodi.o0",
    .description = "KSODI O0: retrieval alignment, traceability and unsupported sentences",
    .reads = {"answer"},
    .reads_optional = {"retrieved_docs", "tool_outputs", "user_text"},
    .writes = {{"O0", "number"}, {"A_ret", "number"}, {"T", "number"}, {"U", "number", "lower"}, {"computed", "boolean"},
               "flags", {"n_sent", "integer"}, {"n_attrib", "integer"}, {"n_unsupported", "integer", "lower"},
               "retrieval_doc_ids", "tool_output_ids", "doc_alignment", "best_doc_id", "empty_docs_skipped",
               "marker_kinds", "sentences", "embedding_model_id", "tau", "weights", "parameters"},
    .flags = EG_FLAG_THREAD_SAFE | EG_FLAG_USES_EMBEDDINGS,
    .params = kParams};

class O0Node : public ksodi::EmbeddingNode {
 public:
  O0Node(const evalgraph::Host &host, const Config &c, const json &params)
      : EmbeddingNode(host, params, c.embedding_provider),
        p_(ksodi::resolve(c)),
        out_{ksodi::calibration_id(c), c.embedding_provider, c.sentence_text_max} {}

  std::string process_raw(evalgraph::Call &call, std::string_view input) override {
    return evalgraph::for_each_record(input, kSpec.name, [&](std::string_view text) {
      const evalgraph::Record in(text, kSpec);
      const ksodi::O0Input x = ports_.read(in, answer(in, ports_.answer), limits_.nesting_depth);
      return ksodi::o0_output(ksodi::compute_o0(x, p_, embedder(call)), p_, out_, x.answer);
    });
  }

 private:
  const ksodi::O0Ports ports_{kSpec};
  const ksodi::O0Params p_;
  const ksodi::O0OutputOptions out_;  // what the output states besides the result
};

}  // namespace

EVALGRAPH_PLUGIN("ksodi_o0", "KSODI-Standard O0: grounding relative to retrieval", evalgraph::node_type<O0Node>(kSpec))
