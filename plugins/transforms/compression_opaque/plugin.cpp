// compression.opaque — an unstructured prose summary of the earlier summary plus the dropped messages. It is a
// STAND-IN for a provider's opaque compaction (whose output one cannot inspect or reproduce), labelled so
// in every output: method "opaque", label "Opaque (stand-in)", and `stand_in` in each record.
#include "compression/compressor.hpp"
#include "compression/summary.hpp"

namespace {
using namespace compression;

class Opaque : public Method {
 public:
  void compress(const Span &span) override {
    summary_ = trim(summarise(span, opaque_prompt(summary_, span.transcript(span.from))));
  }
  std::string context() const override { return summary_; }
  json details() const override {
    return {{"stand_in", "an unstructured LLM summary standing in for a provider's opaque compaction"}};
  }

 private:
  std::string summary_;
};

}  // namespace

EVALGRAPH_PLUGIN("compress_opaque", "Context compression: opaque summary (stand-in for provider compaction)",
                 compression::transform_type<Opaque>(
                     {.name = "compression.opaque",
                      .method_id = "opaque",
                      .label = "Opaque (stand-in)",
                      .description = "unstructured summary, a stand-in for a provider's opaque compaction",
                      .details = {"stand_in"}}))
