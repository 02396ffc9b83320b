// compress.regenerative — the whole structured summary is rebuilt from the whole dropped history at every
// compression (nothing persists between compressions but the summary text the model is shown).
#include "compression/compressor.hpp"
#include "compression/summary.hpp"

namespace {
using namespace compression;

class Regenerative : public Method {
 public:
  void compress(const evalgraph::Host &host, evalgraph::Call &call, const Knobs &k, const std::vector<Message> &msgs,
                std::size_t /*from*/, std::size_t to) override {
    std::string answer =
        summarise(host, call, k, kSummariserSystem, regenerative_prompt(render_transcript(msgs, 0, to, k.max_tool_chars)));
    ++llm_calls;
    auto s = parse_sections(answer);
    if (!s) {
      ++parse_failures;
      s = Sections{};
      s->current_state = trim(answer);
    }
    sections_ = *s;
    started_ = true;
  }
  std::string context() const override { return started_ ? render_sections(sections_, nullptr) : std::string(); }
  json details() const override { return {{"summary", sections_to_json(sections_)}}; }

 private:
  bool started_ = false;
  Sections sections_;
};

class RegenerativeNode : public CompressionTransform {
 public:
  RegenerativeNode(const evalgraph::Host &h, const json &p)
      : CompressionTransform(p, "regenerative", "Regenerative", [] { return std::make_unique<Regenerative>(); }, h) {}
};

}  // namespace

EVALGRAPH_PLUGIN("compress_regenerative", "1.0.0", "Context compression: regenerative structured summary",
                 evalgraph::node_type<RegenerativeNode>({EG_KIND_TRANSFORM, "compress.regenerative",
                                             "regenerative summary: the full structured summary is rebuilt from the whole dropped history at each compression",
                                             compression::knobs_schema(), {"messages"}, {},
                                             {"method", "label", "context", "recent", "compressed_through", "messages_total",
                                              "compressions", "tokens_context", "tokens_recent", "tokens_kept",
                                              "tokens_history", "ratio", "llm_calls", "parse_failures", "summary"},
                                             EG_FLAG_SEQUENCE | EG_FLAG_USES_LLM}))
