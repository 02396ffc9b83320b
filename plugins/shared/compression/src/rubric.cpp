#include "compression/rubric.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include "compression/llm_util.hpp"

namespace compression {

const std::vector<Criterion> &criteria() {
  static const std::vector<Criterion> c{
      {"accuracy_factual", "accuracy", "Are the facts, file paths and technical details in the response correct?",
       "wrong or invented", "mostly right, small mistakes", "entirely correct"},
      {"accuracy_technical", "accuracy", "Are the code references and technical concepts used correctly?",
       "serious technical mistakes", "mostly right, minor problems", "technically exact"},
      {"context_conversation_state", "context_awareness", "Does the response reflect where the conversation stands now?",
       "no awareness of the earlier conversation", "general awareness with gaps", "full awareness of the history"},
      {"context_artifact_state", "context_awareness", "Does the response reflect which files and artifacts were touched?",
       "no awareness of artifacts", "partial awareness", "complete awareness of the artifact state"},
      {"artifact_files_created", "artifact_trail", "Does the agent know which files were created?",
       "does not know", "knows most of them", "knows all of them"},
      {"artifact_files_modified", "artifact_trail", "Does the agent know which files were modified and what changed?",
       "does not know", "knows most changes", "knows every change"},
      {"artifact_key_details", "artifact_trail", "Does the agent remember function names, variable names and error messages?",
       "remembers none", "remembers most", "remembers all"},
      {"completeness_coverage", "completeness", "Does the response address every part of the question?",
       "ignores most parts", "addresses most parts", "addresses all parts thoroughly"},
      {"completeness_depth", "completeness", "Is there enough detail?", "superficial, detail missing",
       "adequate detail", "comprehensive detail"},
      {"continuity_work_state", "continuity", "Could the agent go on without fetching again what it had already seen?",
       "cannot go on without re-reading everything", "can go on with little re-reading", "can go on seamlessly"},
      {"continuity_todo_state", "continuity", "Does the agent keep track of pending tasks?", "lost all tasks",
       "mostly aware, with gaps", "fully aware of the tasks"},
      {"continuity_reasoning", "continuity", "Does the agent keep the reasons behind earlier decisions?",
       "no memory of the reasoning", "remembers most of the reasoning", "keeps the reasoning fully"},
      {"instruction_format", "instruction_following", "Does the response follow the requested format?",
       "ignores the format", "mostly follows it", "follows it exactly"},
      {"instruction_constraints", "instruction_following", "Does the response respect the stated constraints?",
       "ignores the constraints", "mostly respects them", "respects all of them"}};
  return c;
}

const std::vector<std::string> &dimensions() {
  static const std::vector<std::string> d{"accuracy",     "context_awareness", "artifact_trail",
                                          "completeness", "continuity",        "instruction_following"};
  return d;
}

const std::vector<std::string> &probe_types() {
  static const std::vector<std::string> t{"recall", "artifact", "continuation", "decision"};
  return t;
}

std::string dimension_of(const std::string &criterion) {
  for (const auto &c : criteria())
    if (criterion == c.id) return c.dimension;
  return {};
}

std::map<std::string, std::vector<std::string>> default_criteria_by_type() {
  return {
      {"recall",
       {"accuracy_factual", "accuracy_technical", "context_conversation_state", "artifact_key_details",
        "completeness_coverage", "instruction_format", "instruction_constraints"}},
      {"artifact",
       {"accuracy_factual", "context_artifact_state", "artifact_files_created", "artifact_files_modified",
        "artifact_key_details", "completeness_coverage", "completeness_depth", "instruction_format"}},
      {"continuation",
       {"accuracy_technical", "context_conversation_state", "continuity_work_state", "continuity_todo_state",
        "completeness_coverage", "completeness_depth", "instruction_format", "instruction_constraints"}},
      {"decision",
       {"accuracy_factual", "context_conversation_state", "continuity_reasoning", "completeness_coverage",
        "completeness_depth", "instruction_constraints"}}};
}

std::string judge_system_prompt() {
  std::string s =
      "You grade the answers of an AI coding assistant that continues a software-development session after "
      "its earlier context was compressed. The user message is a JSON object with the probe question, the "
      "assistant's response, the compressed context the assistant had, optionally the ground truth, and the "
      "list of rubric criteria to grade.\n"
      "Grade every criterion listed in rubric_criteria, and only those: read its question, look for evidence "
      "in the response, give a score from 0 to 5 and one or two sentences of reasoning. Use the ground truth, "
      "when given, as the reference for what is correct. Grade what the response contains, not what it could "
      "have contained, and be consistent.\n\nRubric (score 0 / 3 / 5):\n";
  for (const auto &c : criteria())
    s += std::string("- ") + c.id + " (" + c.dimension + "): " + c.question + " 0 = " + c.score0 + "; 3 = " + c.score3 +
         "; 5 = " + c.score5 + ".\n";
  s += "\nReply with one JSON object and nothing else:\n"
       "{\"criterionResults\": [{\"criterionId\": \"<id>\", \"score\": <0-5>, \"reasoning\": \"...\"}], "
       "\"aggregateScore\": <number>, \"dimensionScores\": {\"<dimension>\": <number>}}\n";
  return s;
}

json judge_input(const std::string &question, const std::string &response, const std::string &context,
                 const std::string &ground_truth, const std::vector<std::string> &crit) {
  json j = json::object();
  j["probe_question"] = question;
  j["model_response"] = response;
  j["compacted_context"] = context;
  if (!ground_truth.empty()) j["ground_truth"] = ground_truth;
  j["rubric_criteria"] = crit;
  return j;
}

Judgement parse_judgement(const std::string &answer, const std::vector<std::string> &requested,
                          const std::map<std::string, double> &weights) {
  Judgement J;
  auto fail = [&](std::string why) {
    J.valid = false;
    J.invalid_reason = std::move(why);
    J.criterion_results = json::array();
    J.dimension_scores.clear();
    J.aggregate = 0;
    return J;
  };
  auto parsed = parse_json_answer(answer);
  if (!parsed) return fail("not valid JSON");
  const json &j = *parsed;
  if (!j.is_object()) return fail("not a JSON object");
  if (auto it = j.find("aggregateScore"); it != j.end()) J.judge_reported["aggregateScore"] = *it;
  if (auto it = j.find("dimensionScores"); it != j.end()) J.judge_reported["dimensionScores"] = *it;
  auto cr = j.find("criterionResults");
  if (cr == j.end() || !cr->is_array()) return fail("no criterionResults array");
  std::map<std::string, json> got;
  std::set<std::string> wanted(requested.begin(), requested.end());
  for (const auto &e : *cr) {
    if (!e.is_object() || !e.contains("criterionId") || !e["criterionId"].is_string())
      return fail("a criterionResults entry has no criterionId");
    std::string id = e["criterionId"].get<std::string>();
    if (wanted.count(id) == 0) {
      if (std::find(J.ignored.begin(), J.ignored.end(), id) == J.ignored.end()) J.ignored.push_back(id);
      continue;
    }
    if (got.count(id) != 0) return fail("criterion " + id + " graded twice");
    auto sc = e.find("score");
    if (sc == e.end() || !sc->is_number()) return fail("criterion " + id + " has no numeric score");
    double v = sc->get<double>();
    if (!std::isfinite(v) || v < 0 || v > 5) return fail("criterion " + id + " has score " + sc->dump() + " outside 0-5");
    got[id] = e;
  }
  for (const auto &id : requested)
    if (got.count(id) == 0) return fail("criterion " + id + " is missing");
  std::map<std::string, std::pair<double, double>> acc;  // dimension -> (Σ w·s, Σ w)
  for (const auto &id : requested) {
    const json &e = got[id];
    double s = e["score"].get<double>();
    auto w_it = weights.find(id);
    double w = w_it == weights.end() ? 1.0 : w_it->second;
    json r = e.contains("reasoning") ? e["reasoning"] : json("");
    J.criterion_results.push_back(
        {{"criterionId", id}, {"score", e["score"]}, {"reasoning", r.is_string() ? r.get<std::string>() : r.dump()}});
    std::string dim = dimension_of(id);
    if (dim.empty() || w <= 0) continue;
    acc[dim].first += w * s;
    acc[dim].second += w;
  }
  double sum = 0;
  for (const auto &d : dimensions()) {
    auto it = acc.find(d);
    if (it == acc.end() || it->second.second <= 0) continue;
    J.dimension_scores[d] = it->second.first / it->second.second;
    sum += J.dimension_scores[d];
  }
  J.aggregate = J.dimension_scores.empty() ? 0 : sum / static_cast<double>(J.dimension_scores.size());
  J.valid = true;
  return J;
}

}  // namespace compression
