// fuzz_judge_verdict: an LLM judge's answer text (the content of choices[0].message.content) through every
// reader of judge answers: the binary verdict of the chatbot judges (verdict.hpp: fences, quotes, emphasis,
// {"verdict": ...}), the compression rubric judge (parse_judgement with every criterion, weights from the
// input's length), the summariser's sections (parse_sections) and the strict JSON answer reader.
#include "compression/llm_util.hpp"
#include "compression/rubric.hpp"
#include "compression/summary.hpp"
#include "fuzz_support.h"
#include "judge/verdict.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
  static const std::vector<std::string> all = [] {
    std::vector<std::string> v;
    for (const auto &c : compression::criteria()) v.emplace_back(c.id);
    return v;
  }();
  static const auto by_type = compression::default_criteria_by_type();
  const std::string text(fuzz::view(data, size));

  auto v = chatbot_judge::parse_verdict(text);
  auto out = chatbot_judge::verdict_output(v, text);
  (void)out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  (void)chatbot_judge::render("{original} / {criterion} / {prompt_input}", {{"original", text}, {"criterion", text}});

  (void)compression::parse_json_answer(text);
  if (auto s = compression::parse_sections(text)) {
    compression::Sections merged;
    compression::merge_span(merged, *s);
    (void)compression::render_sections(merged, nullptr);
    (void)compression::sections_to_json(merged).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  }

  // The criteria a probe type is graded on, and all of them; weights 0, 1 and 2 by position.
  const auto &types = compression::probe_types();
  const auto &requested = size % 2 == 0 ? all : by_type.at(types[size / 2 % types.size()]);
  std::map<std::string, double> weights;
  for (std::size_t i = 0; i < requested.size(); ++i) weights[requested[i]] = static_cast<double>((i + size) % 3);
  auto j = compression::parse_judgement(text, requested, weights);
  if (j.valid) {
    if (j.criterion_results.size() != requested.size()) fuzz::fail("a valid judgement without every criterion");
    for (const auto &[dim, score] : j.dimension_scores)
      if (!(score >= 0 && score <= 5)) fuzz::fail("a dimension score outside 0..5", dim);
  }
  (void)j.criterion_results.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return 0;
}
