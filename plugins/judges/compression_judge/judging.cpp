// compression.judge's domain logic: see judging.hpp.
#include "judging.hpp"

#include <algorithm>
#include <stdexcept>

#include "compression/llm_util.hpp"

namespace compression {

void check_criterion(const std::string &id, const std::string &where) {
  if (dimension_of(id).empty()) {
    std::string known;
    for (const auto &c : criteria()) known += (known.empty() ? "" : ", ") + std::string(c.id);
    throw std::invalid_argument(where + ": unknown criterion '" + id + "'; known: " + known);
  }
}

CriteriaByType criteria_by_type(const json &configured) {
  CriteriaByType by_type = default_criteria_by_type();
  for (const auto &[type, list] : configured.items()) {
    std::vector<std::string> v;
    for (const auto &item : list) {
      std::string id = item.get<std::string>();
      check_criterion(id, "criteria_by_probe_type." + type);
      if (std::find(v.begin(), v.end(), id) != v.end())
        throw std::invalid_argument("criteria_by_probe_type." + type + " lists " + id + " twice");
      v.push_back(id);
    }
    by_type[type] = v;
  }
  return by_type;
}

std::vector<std::string> probe_criteria(const json &p, const std::string &id, const std::string &type, const CriteriaByType &by_type) {
  std::vector<std::string> crit;
  if (p.contains("criteria") && p["criteria"].is_array()) {
    for (const auto &c : p["criteria"]) {
      std::string cid = c.get<std::string>();
      if (dimension_of(cid).empty()) throw std::invalid_argument("probe " + id + " names an unknown criterion " + cid);
      crit.push_back(cid);
    }
  } else {
    auto it = by_type.find(type);
    if (it == by_type.end()) throw std::invalid_argument("probe " + id + " has type '" + type + "' and no criteria");
    crit = it->second;
  }
  return crit;
}

std::uint64_t checkpoint_seed(const json &in, std::uint64_t seed) {
  if (!in.contains("_meta")) return seed;
  return fnv1a64(std::to_string(in["_meta"].value("record_index", 0)) + "/" + std::to_string(in["_meta"].value("replication", 0)),
                 fnv1a64(std::to_string(seed)));
}

bool write_judgement(json &r, const Judgement &J) {
  if (!J.valid) {
    r["status"] = "invalid";
    r["invalid_reason"] = J.invalid_reason;
    return false;
  }
  r["status"] = "valid";
  r["criterionResults"] = J.criterion_results;
  json ds = json::object();
  for (const auto &[d, v] : J.dimension_scores) ds[d] = v;
  r["dimensionScores"] = ds;
  r["aggregateScore"] = J.dimension_scores.empty() ? json(nullptr) : json(J.aggregate);
  if (!J.judge_reported.empty()) r["judge_reported"] = J.judge_reported;
  if (!J.ignored.empty()) r["ignored_criteria"] = J.ignored;
  return true;
}

Grading::Grading(const json &in, const GradingOptions &o) : o_(o) {
  const json &pr = in.at("probes");
  const json &probes = pr.is_object() && pr.contains("probes") ? pr["probes"] : pr;
  if (!probes.is_array()) throw evalgraph::InputError("'probes' must be the probe node's output or an array of probes");

  for (int s = 1; s <= kSlots; ++s) {
    auto it = in.find("answers_" + std::to_string(s));
    if (it == in.end() || it->is_null()) continue;
    if (!it->is_object() || !it->contains("answers") || !(*it)["answers"].is_array())
      throw evalgraph::InputError("answers_" + std::to_string(s) + " is not a compression.answer output");
    slots_.push_back({s, &*it});
  }
  if (slots_.empty()) throw evalgraph::InputError("no answers: map answers_1.. to compression.answer nodes");

  for (const auto &s : slots_)
    methods_.push_back({{"slot", s.slot},
                        {"method", s.out->value("method", "")},
                        {"label", s.out->value("label", "")},
                        {"tokens_kept", s.out->value("tokens_kept", json())},
                        {"tokens_history", s.out->value("tokens_history", json())}});

  for (std::size_t pi = 0; pi < probes.size(); ++pi) {
    const json &p = probes[pi];
    std::string id = p.value("id", std::to_string(pi + 1)), type = p.value("type", "");
    std::vector<std::string> crit;
    try {
      crit = probe_criteria(p, id, type, o_.by_type);
    } catch (const std::invalid_argument &e) {
      throw evalgraph::InputError(e.what());
    }
    for (std::size_t si = 0; si < slots_.size(); ++si) {
      const json &answers = (*slots_[si].out)["answers"];
      const json *a = nullptr;
      for (const auto &x : answers)
        if (x.value("probe_id", "") == id) a = &x;
      Item item{pi, si, "", crit, json::object()};
      item.result = {{"probe_id", id},
                     {"probe_type", type},
                     {"slot", slots_[si].slot},
                     {"method", slots_[si].out->value("method", "")},
                     {"label", slots_[si].out->value("label", "")}};
      if (a == nullptr || !(*a).contains("answer") || !(*a)["answer"].is_string()) {
        item.result["status"] = "unanswered";
        item.result["error"] = a == nullptr ? std::string("no answer for this probe") : a->value("error", std::string("no answer"));
      } else {
        item.answer = (*a)["answer"].get<std::string>();
      }
      items_.push_back(std::move(item));
    }
  }

  // Judge the answered items in a seeded random order, one request each.
  std::vector<std::size_t> todo;
  for (std::size_t i = 0; i < items_.size(); ++i)
    if (!items_[i].result.contains("status")) todo.push_back(i);
  std::vector<std::size_t> perm = seeded_permutation(todo.size(), checkpoint_seed(in, o_.seed));
  const std::string system = judge_system_prompt();
  for (std::size_t k = 0; k < perm.size(); ++k) {
    judged_.push_back(todo[perm[k]]);
    Item &it = items_[judged_.back()];
    const json &p = probes[it.probe];
    json input = judge_input(p.value("question", ""), it.answer, (*slots_[it.slot_pos].out).value("compacted_context", ""),
                             o_.ground_truth ? p.value("expected", "") : std::string(), it.crit);
    requests_.push_back(chat_request(system, input.dump(2), o_.temperature, o_.max_tokens));
    it.result["order"] = k;
  }
}

json Grading::output(const std::vector<BatchAnswer> &answers) {
  long invalid = 0, errors = 0, valid = 0, unanswered = static_cast<long>(items_.size() - judged_.size());
  for (std::size_t k = 0; k < judged_.size(); ++k) {
    Item &it = items_[judged_[k]];
    json &r = it.result;
    if (!answers[k].ok) {
      r["error"] = answers[k].text;
      r["status"] = "judge_error";
      ++errors;
      continue;
    }
    const std::string &text = answers[k].text;
    r["raw"] = text;
    Judgement J = parse_judgement(text, it.crit, o_.weights);
    r["criteria"] = it.crit;
    if (write_judgement(r, J)) ++valid;
    else ++invalid;
  }
  json results = json::array();
  for (auto &it : items_) results.push_back(std::move(it.result));
  return {{"results", results},   {"methods", methods_}, {"judge_calls", requests_.size()}, {"valid", valid},
          {"invalid", invalid},   {"judge_errors", errors}, {"unanswered", unanswered}};
}

}  // namespace compression
