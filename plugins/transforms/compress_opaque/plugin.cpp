// compress.opaque — an unstructured prose summary of the earlier summary plus the dropped messages. It is a
// STAND-IN for a provider's opaque compaction (whose output one cannot inspect or reproduce), labelled so
// in every output: method "opaque", label "Opaque (stand-in)", and `stand_in` in each record.
#include "compression/compressor.hpp"
#include "compression/summary.hpp"

namespace {
using namespace compression;

class Opaque : public Method {
 public:
  static constexpr const char *kId = "opaque", *kLabel = "Opaque (stand-in)";
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

}  // namespace

EVALGRAPH_PLUGIN("compress_opaque", "1.0.0", "Context compression: opaque summary (stand-in for provider compaction)",
                 compression::transform_type<Opaque>("compress.opaque", "unstructured summary, a stand-in for a provider's opaque compaction",
                                                     {"stand_in"}))
