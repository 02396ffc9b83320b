// index.llm_hallucination — seed 004's "LLM Hallucination" index: the LLM judge is asked whether the
// transformed text says essentially the same as the original. True → value 1 (no hallucination), False →
// value 0, anything else → value null, valid false, raw answer kept (never silently 0).
// The system prompt template has {prompt_input} = original text (alias {original}); the transformed text is
// the user message.
#include <evalgraph/plugin.hpp>

#include "verdict.hpp"

namespace {

using evalgraph::json;
using namespace chatbot_judge;

constexpr const char *kDefaultPrompt =
    "Du vergleichst den Inhalt zweier Texte.\n\nOriginal:\n{prompt_input}\n\n"
    "Die folgende Nachricht enthält den Vergleichstext. Unterschiede in Wortwahl, Satzbau oder Grammatik zählen "
    "nicht. Stimmen die Kernaussagen überein, ohne dass wesentliche Aussagen fehlen oder hinzukommen, antworte nur "
    "mit True, andernfalls nur mit False.";

const evalgraph::Params<JudgeConfig> &kParams = judge_params();

class Hallucination : public evalgraph::Node {
 public:
  Hallucination(const evalgraph::Host &host, const json &p) : host_(host) {
    const JudgeConfig c = kParams.parse(p);
    provider_ = c.provider;
    prompt_ = c.prompt("evaluate_hallucination", kDefaultPrompt);
    inference_ = c.request_base();
  }

  json process(evalgraph::Call &call, const json &in) override {
    const json &o = in.at("original"), &t = in.at("transformed");
    if (!o.is_string() || !t.is_string()) throw evalgraph::InputError("original and transformed must be texts");
    std::string sys = render(prompt_, {{"prompt_input", o.get<std::string>()}, {"original", o.get<std::string>()}});
    json req = inference_;
    req["messages"] = json::array({{{"role", "system"}, {"content", sys}}, {{"role", "user"}, {"content", t.get<std::string>()}}});
    json resp = host_.chat(call, req, provider_.empty() ? nullptr : provider_.c_str());
    auto text = answer_text(resp);
    if (!text) throw std::runtime_error("the judge's answer has no text content");
    return verdict_output(parse_verdict(*text), *text);
  }

 private:
  evalgraph::Host host_;
  std::string provider_, prompt_;
  json inference_;
};

}  // namespace

EVALGRAPH_PLUGIN("index_llm_hallucination", "1.0.0", "LLM Hallucination index (LLM judge: same content?)",
                 evalgraph::node_type<Hallucination>({EG_KIND_INDEX, "index.llm_hallucination",
                                                      "LLM judge: does the transformed text keep the original's content? 1 = no hallucination",
                                                      kParams.schema(), {"original", "transformed"}, {},
                                                      {"value", "verdict", "valid", "raw"},
                                                      EG_FLAG_THREAD_SAFE | EG_FLAG_USES_LLM}))
