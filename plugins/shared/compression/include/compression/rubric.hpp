#pragma once
// The rubric: 13 criteria in six dimensions, which criteria each probe type is graded on by default, the
// judge's prompt and input object, and the strict reader of its answer with the per-answer scores.
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace compression {

using json = nlohmann::json;

struct Criterion {
  const char *id;
  const char *dimension;
  const char *question;
  const char *score0, *score3, *score5;
};

const std::vector<Criterion> &criteria();
// accuracy, context_awareness, artifact_trail, completeness, continuity, instruction_following
const std::vector<std::string> &dimensions();
// The dimension of a criterion id, or "" when unknown.
std::string dimension_of(const std::string &criterion);
// recall / artifact / continuation / decision -> criterion ids (see the judge's README for the table).
std::map<std::string, std::vector<std::string>> default_criteria_by_type();
const std::vector<std::string> &probe_types();

// The judge's system prompt: the task, the rubric of all criteria, the output shape. Names no method.
std::string judge_system_prompt();
// The judge's input object: probe_question, model_response, compacted_context, ground_truth (only when
// given), rubric_criteria.
json judge_input(const std::string &question, const std::string &response, const std::string &context,
                 const std::string &ground_truth, const std::vector<std::string> &criteria);

struct Judgement {
  bool valid = false;
  std::string invalid_reason;  // when !valid
  json criterion_results = json::array();  // [{criterionId, score, reasoning}] in the requested order
  std::map<std::string, double> dimension_scores;  // dimensions with at least one weighted criterion
  double aggregate = 0;                             // unweighted mean of dimension_scores
  json judge_reported = json::object();  // aggregateScore / dimensionScores as the judge wrote them (not used)
  std::vector<std::string> ignored;      // criteria the judge graded that were not asked for
};

// Reads a judge answer. Invalid when: not JSON (parse_json_answer), not an object, no criterionResults
// array, an entry without a string criterionId, a requested criterion missing or graded twice, a score that
// is not a number or lies outside 0–5. Nothing is ever filled in for an invalid answer.
// Scores: dimension = Σ w·s / Σ w over the requested criteria of that dimension (weights default 1;
// a dimension whose criteria all weigh 0 has no score); aggregate = mean of the dimensions that have one.
Judgement parse_judgement(const std::string &answer, const std::vector<std::string> &requested,
                          const std::map<std::string, double> &weights);

}  // namespace compression
