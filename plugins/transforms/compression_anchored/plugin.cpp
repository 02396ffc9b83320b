// compression.anchored — anchored iterative summarisation: a persisted sectioned summary; each compression
// summarises only the newly dropped span and merges it in. The artifact list (files created, modified,
// read) is kept deterministically from the tool calls, so files and decisions are never dropped.
#include "compression/compressor.hpp"
#include "compression/facts.hpp"
#include "compression/summary.hpp"

namespace {
using namespace compression;

class Anchored : public SectionedMethod {
 public:
  void compress(const Span &span) override {
    const std::string answer = summarise(span, anchored_prompt(context(), span.transcript(span.from)));
    merge_file_facts(artifacts_, extract_facts(span.msgs, span.from, span.to).files);
    merge_span(sections_, sections_of(answer));
    started_ = true;
  }
  json details() const override {
    json files = json::array();
    for (const auto &f : artifacts_) files.push_back({{"path", f.path}, {"status", f.status()}, {"changes", f.changes}});
    return {{"summary", sections_to_json(sections_)}, {"artifacts", files}};
  }

 private:
  const std::vector<FileFacts> *artifacts() const override { return &artifacts_; }
  std::vector<FileFacts> artifacts_;
};

}  // namespace

EVALGRAPH_PLUGIN(
    "compress_anchored", "Context compression: anchored iterative summary",
    compression::transform_type<Anchored>({.name = "compression.anchored",
                                           .method_id = "anchored_iterative",
                                           .label = "Anchored Iterative",
                                           .description = "anchored iterative summary: only the newly dropped span is "
                                                          "summarised and merged into a persisted sectioned summary",
                                           .details = {"summary", "artifacts"}}))
