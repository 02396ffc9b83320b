// compress.opaque — an unstructured prose summary of the earlier summary plus the dropped messages. It is a
// STAND-IN for a provider's opaque compaction (whose output one cannot inspect or reproduce), labelled so
// in every output: method "opaque", label "Opaque (stand-in)", and `stand_in` in each record.
#include "compression/compressor.hpp"
#include "compression/summary.hpp"

namespace {
using namespace compression;

class Opaque : public Method {
 public:
  void compress(const evalgraph::Host &host, evalgraph::Call &call, const Knobs &k, const std::vector<Message> &msgs,
                std::size_t from, std::size_t to) override {
    summary_ = trim(summarise(host, call, k, kSummariserSystem,
                              opaque_prompt(summary_, render_transcript(msgs, from, to, k.max_tool_chars))));
    ++llm_calls;
  }
  std::string context() const override { return summary_; }
  json details() const override {
    return {{"stand_in", "an unstructured LLM summary standing in for a provider's opaque compaction"}};
  }

 private:
  std::string summary_;
};

class OpaqueNode : public CompressionTransform {
 public:
  OpaqueNode(const evalgraph::Host &h, const json &p)
      : CompressionTransform(p, "opaque", "Opaque (stand-in)", [] { return std::make_unique<Opaque>(); }, h) {}
};

}  // namespace

EVALGRAPH_PLUGIN("compress_opaque", "1.0.0", "Context compression: opaque summary (stand-in for provider compaction)",
                 evalgraph::node_type<OpaqueNode>({EG_KIND_TRANSFORM, "compress.opaque",
                                             "unstructured summary, a stand-in for a provider's opaque compaction",
                                             compression::knobs_schema(), {"messages"}, {},
                                             {"method", "label", "context", "recent", "compressed_through", "messages_total",
                                              "compressions", "tokens_context", "tokens_recent", "tokens_kept",
                                              "tokens_history", "ratio", "llm_calls", "parse_failures", "stand_in"},
                                             EG_FLAG_SEQUENCE | EG_FLAG_USES_LLM}))
