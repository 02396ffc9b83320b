// judge.task_comparison — asks the LLM judge whether the transformed text, compared with the original,
// fulfils one criterion. The system prompt is a template (by default seed 004's evaluate_task_comparison
// layout): {prompt_input_1} = original text, {prompt_input_2} = the criterion's description (aliases
// {original}, {criterion}); the transformed text is the user message. The answer is parsed by verdict.hpp:
// true → value 1, false → value 0, anything else → value null, valid false, raw answer kept.
#include <evalgraph/input.hpp>

#include "judge/verdict.hpp"

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
const evalgraph::Params<Config> kParams{judge_params(), {
  evalgraph::param<Config>(&Config::task, "task", "The criterion's title (for messages and the output)."),
  evalgraph::param<Config>(&Config::criterion, "criterion", "The criterion's description (llm_tasks.yaml).").make_required(),
}};

const evalgraph::NodeSpec kSpec{
    .kind = EG_KIND_JUDGE,
    .name = "judge.task_comparison",
    .description = "does the transformed text fulfil the criterion compared with the original? (1/0, invalid kept)",
    .writes = {"value", "verdict", "valid", "raw", "task"},
    .flags = EG_FLAG_THREAD_SAFE | EG_FLAG_USES_LLM,
    .params = kParams};

class TaskComparison : public evalgraph::TextPairNode {
 public:
  TaskComparison(const evalgraph::Host &host, const Config &c)
      : TextPairNode(kSpec.name), task_(c.task), criterion_(c.criterion),
        judge_(host, c, "evaluate_task_comparison", kDefaultPrompt) {}

  json compare(evalgraph::Call &call, const std::string &original, const std::string &transformed) override {
    json out = judge_.ask(call,
                          {{"prompt_input_1", original}, {"prompt_input_2", criterion_}, {"original", original}, {"criterion", criterion_}},
                          transformed);
    if (!task_.empty()) out["task"] = task_;
    return out;
  }

 private:
  std::string task_, criterion_;
  Judge judge_;
};

}  // namespace

EVALGRAPH_PLUGIN("judge_task_comparison", "Binary LLM-judge criterion (original vs transformed)",
                 evalgraph::text_pair_type<TaskComparison>(kSpec))
