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

}  // namespace compression
