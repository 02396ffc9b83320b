// index.content_preservation — how much of the original's content vocabulary the transformed text keeps
// (content-word recall over light German stems). Formula and components: content.hpp and README.md.
#include <evalgraph/input.hpp>

#include "content.hpp"

namespace {

using evalgraph::json;

const evalgraph::NodeSpec kSpec{
    .kind = EG_KIND_INDEX,
    .name = "index.content_preservation",
    .description = "share of the original's content words kept in the transformed text",
    .writes = {"value", "valid", "recall", "precision", "f1", "n_original", "n_transformed", "n_shared", "missing", "formula"},
    .flags = EG_FLAG_THREAD_SAFE,
    .params = evalgraph::no_params()};

class ContentPreservation : public evalgraph::TextPairNode {
 public:
  ContentPreservation(const evalgraph::Host &, const evalgraph::NoParams &) : TextPairNode(kSpec.name) {}
  json compare(evalgraph::Call &, const std::string &original, const std::string &transformed) override {
    auto p = chatbot_text::content_preservation(original, transformed);
    json out = {{"recall", p.recall}, {"precision", p.precision}, {"f1", p.f1}, {"n_original", p.n_original},
                {"n_transformed", p.n_transformed}, {"n_shared", p.n_shared}, {"missing", p.missing},
                {"valid", p.defined()}, {"formula", "content-recall-v1"}};
    out["value"] = p.defined() ? json(p.recall) : json(nullptr);
    return out;
  }
};

}  // namespace

EVALGRAPH_PLUGIN("index_content_preservation", "Content preservation index (content-word recall)",
                 evalgraph::text_pair_type<ContentPreservation>(kSpec))
