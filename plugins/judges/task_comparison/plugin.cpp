// judge.task_comparison — asks the LLM judge whether the transformed text, compared with the original,
// fulfils one criterion. The system prompt is a template (by default seed 004's evaluate_task_comparison
// layout): {prompt_input_1} = original text, {prompt_input_2} = the criterion's description (aliases
// {original}, {criterion}); the transformed text is the user message. The answer is parsed by verdict.hpp:
// true → value 1, false → value 0, anything else → value null, valid false, raw answer kept.
#include <evalgraph/plugin.hpp>

#include "verdict.hpp"

namespace {

using evalgraph::json;
using namespace chatbot_judge;

constexpr const char *kDefaultPrompt =
    "Du prüfst einen Text anhand eines einzigen Kriteriums und vergleichst ihn dazu mit seinem Original.\n\n"
    "Original:\n{prompt_input_1}\n\nKriterium:\n{prompt_input_2}\n\n"
    "Die folgende Nachricht enthält den zu prüfenden Text. Erfüllt er das Kriterium im Vergleich zum Original, "
    "antworte nur mit True, andernfalls nur mit False.";

struct Config : JudgeConfig {
  std::string task, criterion;
};
const evalgraph::Params<Config> kParams{"Binary LLM-judge criterion: does the transformed text fulfil the criterion compared with the original?", judge_params(), {
  evalgraph::param<Config>(&Config::task, "task", "The criterion's title (for messages and the output)."),
  evalgraph::param<Config>(&Config::criterion, "criterion", "The criterion's description (llm_tasks.yaml).").make_required(),
}};

class TaskComparison : public evalgraph::Node {
 public:
  TaskComparison(const evalgraph::Host &host, const json &p) : host_(host) {
    const Config c = kParams.parse(p);
    task_ = c.task;
    criterion_ = c.criterion;
    provider_ = c.provider;
    prompt_ = c.prompt("evaluate_task_comparison", kDefaultPrompt);
    inference_ = c.request_base();
  }

  json process(evalgraph::Call &call, const json &in) override {
    const json &o = in.at("original"), &t = in.at("transformed");
    if (!o.is_string() || !t.is_string()) throw evalgraph::InputError("original and transformed must be texts");
    std::string sys = render(prompt_, {{"prompt_input_1", o.get<std::string>()},
                                       {"prompt_input_2", criterion_},
                                       {"original", o.get<std::string>()},
                                       {"criterion", criterion_}});
    json req = inference_;
    req["messages"] = json::array({{{"role", "system"}, {"content", sys}}, {{"role", "user"}, {"content", t.get<std::string>()}}});
    json resp = host_.chat(call, req, provider_.empty() ? nullptr : provider_.c_str());
    auto text = answer_text(resp);
    if (!text) throw std::runtime_error("the judge's answer has no text content");
    json out = verdict_output(parse_verdict(*text), *text);
    if (!task_.empty()) out["task"] = task_;
    return out;
  }

 private:
  evalgraph::Host host_;
  std::string task_, criterion_, provider_, prompt_;
  json inference_;
};

}  // namespace

EVALGRAPH_PLUGIN("judge_task_comparison", "1.0.0", "Binary LLM-judge criterion (original vs transformed)",
                 evalgraph::node_type<TaskComparison>({EG_KIND_JUDGE, "judge.task_comparison",
                                                       "does the transformed text fulfil the criterion compared with the original? (1/0, invalid kept)",
                                                       kParams.schema(), {"original", "transformed"}, {},
                                                       {"value", "verdict", "valid", "raw", "task"},
                                                       EG_FLAG_THREAD_SAFE | EG_FLAG_USES_LLM}))
