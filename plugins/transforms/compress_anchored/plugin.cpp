// compress.anchored — anchored iterative summarisation: a persisted sectioned summary; each compression
// summarises only the newly dropped span and merges it in. The artifact list (files created, modified,
// read) is kept deterministically from the tool calls, so files and decisions are never dropped.
#include "compression/compressor.hpp"
#include "compression/facts.hpp"
#include "compression/summary.hpp"

namespace {
using namespace compression;

class Anchored : public Method {
 public:
  static constexpr const char *kId = "anchored_iterative", *kLabel = "Anchored Iterative";
  void compress(const evalgraph::Host &host, evalgraph::Call &call, const Knobs &k, const std::vector<Message> &msgs,
                std::size_t from, std::size_t to) override {
    std::string so_far = started_ ? render_sections(sections_, &artifacts_) : std::string();
    std::string answer = summarise(host, call, k, kSummariserSystem,
                                   anchored_prompt(so_far, render_transcript(msgs, from, to, k.max_tool_chars)));
    ++llm_calls;
    merge_file_facts(artifacts_, extract_facts(msgs, from, to).files);
    merge_span(sections_, sections_of(answer));
    started_ = true;
  }
  std::string context() const override { return started_ ? render_sections(sections_, &artifacts_) : std::string(); }
  json details() const override {
    json files = json::array();
    for (const auto &f : artifacts_) files.push_back({{"path", f.path}, {"status", f.status()}, {"changes", f.changes}});
    return {{"summary", sections_to_json(sections_)}, {"artifacts", files}};
  }

 private:
  bool started_ = false;
  Sections sections_;
  std::vector<FileFacts> artifacts_;
};

}  // namespace

EVALGRAPH_PLUGIN("compress_anchored", "1.0.0", "Context compression: anchored iterative summary",
                 compression::transform_type<Anchored>("compress.anchored",
                                                       "anchored iterative summary: only the newly dropped span is summarised and merged into a persisted sectioned summary",
                                                       {"summary", "artifacts"}))
