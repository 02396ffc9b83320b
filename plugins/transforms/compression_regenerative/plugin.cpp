// compression.regenerative — the whole structured summary is rebuilt from the whole dropped history at every
// compression (nothing persists between compressions but the summary text the model is shown).
#include "compression/compressor.hpp"
#include "compression/summary.hpp"

namespace {
using namespace compression;

class Regenerative : public SectionedMethod {
 public:
  void compress(const Span &span) override {
    sections_ = sections_of(summarise(span, regenerative_prompt(span.transcript(0))));
    started_ = true;
  }
  json details() const override { return {{"summary", sections_to_json(sections_)}}; }
};

}  // namespace

EVALGRAPH_PLUGIN("compress_regenerative", "Context compression: regenerative structured summary",
                 compression::transform_type<Regenerative>(
                     {.name = "compression.regenerative",
                      .method_id = "regenerative",
                      .label = "Regenerative",
                      .description = "regenerative summary: the full structured summary is rebuilt from the whole "
                                     "dropped history at each compression",
                      .details = {"summary"}}))
