// index.readability_de — German readability of the transformed text, with the original's for comparison.
// value = clip(FRE_de(transformed), 0, 100) / 100, so that it can be weighted with the binary criteria in the
// Score; the raw figures are components. Formulas: readability.hpp and README.md.
#include <algorithm>
#include <evalgraph/input.hpp>

#include "readability.hpp"

namespace {

using evalgraph::json;

json stats_json(const chatbot_text::ReadabilityStats &s) {
  return {{"fre_amstad", s.fre}, {"wstf1", s.wstf}, {"words", s.words}, {"sentences", s.sentences},
          {"syllables", s.syllables}, {"asl", s.asl}, {"asw", s.asw}};
}

const evalgraph::NodeSpec kSpec{
    .kind = EG_KIND_INDEX,
    .name = "index.readability_de",
    .description = "German readability of the transformed text: clip(FRE_Amstad,0,100)/100",
    .writes = {"value", "valid", "original", "transformed", "fre_delta", "formula"},
    .flags = EG_FLAG_THREAD_SAFE,
    .params = evalgraph::no_params()};

class Readability : public evalgraph::TextPairNode {
 public:
  Readability(const evalgraph::Host &, const evalgraph::NoParams &) : TextPairNode(kSpec.name) {}
  json compare(evalgraph::Call &, const std::string &original, const std::string &transformed) override {
    auto so = chatbot_text::readability(original);
    auto st = chatbot_text::readability(transformed);
    json out = {{"original", stats_json(so)}, {"transformed", stats_json(st)}, {"formula", "amstad-fre-v1"}};
    if (!st.defined()) {
      out["value"] = nullptr;
      out["valid"] = false;
      return out;
    }
    out["value"] = std::clamp(st.fre, 0.0, 100.0) / 100.0;
    out["valid"] = true;
    out["fre_delta"] = so.defined() ? json(st.fre - so.fre) : json(nullptr);
    return out;
  }
};

}  // namespace

EVALGRAPH_PLUGIN("index_readability_de", "German readability index (Amstad / Wiener Sachtextformel)",
                 evalgraph::text_pair_type<Readability>(kSpec))
