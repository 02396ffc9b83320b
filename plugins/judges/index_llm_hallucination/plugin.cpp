// index.llm_hallucination — seed 004's "LLM Hallucination" index: the LLM judge is asked whether the
// transformed text says essentially the same as the original. True → value 1 (no hallucination), False →
// value 0, anything else → value null, valid false, raw answer kept (never silently 0).
// The system prompt template has {prompt_input} = original text (alias {original}); the transformed text is
// the user message.
#include <evalgraph/input.hpp>

#include "judge/verdict.hpp"

namespace {

using evalgraph::json;
using namespace chatbot_judge;

constexpr const char *kDefaultPrompt =
    "Du vergleichst den Inhalt zweier Texte.\n\nOriginal:\n{prompt_input}\n\n"
    "Die folgende Nachricht enthält den Vergleichstext. Unterschiede in Wortwahl, Satzbau oder Grammatik zählen "
    "nicht. Stimmen die Kernaussagen überein, ohne dass wesentliche Aussagen fehlen oder hinzukommen, antworte nur "
    "mit True, andernfalls nur mit False.";

const evalgraph::Params<JudgeConfig> &kParams = judge_params();

const evalgraph::NodeSpec kSpec{
    .kind = EG_KIND_INDEX,
    .name = "index.llm_hallucination",
    .description = "LLM judge: does the transformed text keep the original's content? 1 = no hallucination",
    .writes = {"value", "verdict", "valid", "raw"},
    .flags = EG_FLAG_THREAD_SAFE | EG_FLAG_USES_LLM,
    .params = kParams};

class Hallucination : public evalgraph::TextPairNode {
 public:
  Hallucination(const evalgraph::Host &host, const JudgeConfig &c)
      : TextPairNode(kSpec.name), judge_(host, c, "evaluate_hallucination", kDefaultPrompt) {}

  json compare(evalgraph::Call &call, const std::string &original, const std::string &transformed) override {
    return judge_.ask(call, {{"prompt_input", original}, {"original", original}}, transformed);
  }

 private:
  Judge judge_;
};

}  // namespace

EVALGRAPH_PLUGIN("index_llm_hallucination", "LLM Hallucination index (LLM judge: same content?)",
                 evalgraph::text_pair_type<Hallucination>(kSpec))
