// compress.regenerative — the whole structured summary is rebuilt from the whole dropped history at every
// compression (nothing persists between compressions but the summary text the model is shown).
#include "compression/compressor.hpp"
#include "compression/summary.hpp"

namespace {
using namespace compression;

class Regenerative : public Method {
 public:
  static constexpr const char *kId = "regenerative", *kLabel = "Regenerative";
  void compress(const evalgraph::Host &host, evalgraph::Call &call, const Knobs &k, const std::vector<Message> &msgs,
                std::size_t /*from*/, std::size_t to) override {
    std::string answer =
        summarise(host, call, k, kSummariserSystem, regenerative_prompt(render_transcript(msgs, 0, to, k.max_tool_chars)));
    ++llm_calls;
    sections_ = sections_of(answer);
    started_ = true;
  }
  std::string context() const override { return started_ ? render_sections(sections_, nullptr) : std::string(); }
  json details() const override { return {{"summary", sections_to_json(sections_)}}; }

 private:
  bool started_ = false;
  Sections sections_;
};

}  // namespace

EVALGRAPH_PLUGIN("compress_regenerative", "1.0.0", "Context compression: regenerative structured summary",
                 compression::transform_type<Regenerative>("compress.regenerative",
                                                           "regenerative summary: the full structured summary is rebuilt from the whole dropped history at each compression",
                                                           {"summary"}))
