// `evalgraph compare`: one metric over the paired records (means, the paired bootstrap interval of the difference,
// Wilcoxon or exact McNemar), and the records that changed most (compare_internal.h).
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "compare/compare_internal.h"
#include "entry/results_entry.h"

namespace evalgraph::compare::detail {

namespace {

constexpr std::size_t kChangedRecords = 20;

// Which direction of a metric is better: what the node's plugin declares for the output (run.json's
// nodes.<id>.outputs, ABI 1.3), the new run's declaration first; higher when nothing is declared.
std::string better_direction(const Run &first, const Run &second, const std::string &node, const std::string &field) {
  for (const Run *r : {&first, &second}) {
    const json *decl = &r->info;
    for (const char *k : {"nodes"}) decl = decl->is_object() && decl->contains(k) ? &(*decl)[k] : nullptr;
    if (decl == nullptr || !decl->is_object() || !decl->contains(node)) continue;
    const json &n = (*decl)[node];
    if (!n.is_object() || !n.contains("outputs") || !n["outputs"].is_object()) continue;
    const json &o = n["outputs"];
    if (auto it = o.find(field); it != o.end() && it->is_object() && it->contains("better") && (*it)["better"].is_string())
      return (*it)["better"].get<std::string>();
  }
  return "higher";
}

}  // namespace

// One metric over the paired records: the means, the paired bootstrap interval of the difference and the
// test's p (McNemar for booleans, Wilcoxon for numbers); each pair's differing values go to `changes`.
json compare_metric(const Run &a, const Run &b, const Metric &ma, const Metric &mb,
                    const std::vector<std::pair<std::size_t, std::size_t>> &pairs, std::vector<Change> &changes) {
  const bool boolean = !ma.any_number && !mb.any_number;
  std::vector<double> va, vb, d;
  std::uint64_t only_a_true = 0, only_b_true = 0;
  for (std::size_t p = 0; p < pairs.size(); ++p) {
    double x = ma.values[pairs[p].first], y = mb.values[pairs[p].second];
    if (std::isnan(x) || std::isnan(y)) continue;
    va.push_back(x);
    vb.push_back(y);
    d.push_back(y - x);
    if (boolean) {
      only_a_true += (x == 1 && y == 0);
      only_b_true += (x == 0 && y == 1);
    }
    if (x != y) {
      double s = std::fabs(y - x);
      changes[p].score = std::max(changes[p].score, s);
      if (boolean) changes[p].values.push_back({{"node", ma.node}, {"field", ma.field}, {"a", x == 1}, {"b", y == 1}});
      else changes[p].values.push_back({{"node", ma.node}, {"field", ma.field}, {"a", x}, {"b", y}});
    }
  }
  json m = {{"node", ma.node}, {"field", ma.field}, {"type", boolean ? "boolean" : "number"}, {"n", d.size()}};
  m["better"] = better_direction(b, a, ma.node, ma.field);
  // One value in every record of both runs (a weight, a threshold): kept in the JSON, left out of the table.
  m["constant"] = !va.empty() && std::all_of(va.begin(), va.end(), [&](double x) { return x == va[0]; }) &&
                  std::all_of(vb.begin(), vb.end(), [&](double x) { return x == va[0]; });
  if (d.empty()) {
    m.update({{"mean_a", nullptr}, {"mean_b", nullptr}, {"diff", nullptr}, {"ci_low", nullptr}, {"ci_high", nullptr},
              {"p_value", nullptr}, {"test", "none (no record has a value in both runs)"}});
    return m;
  }
  stats::Interval ci = stats::paired_bootstrap_ci(d);
  double diff = stats::mean(vb) - stats::mean(va);
  if (std::all_of(d.begin(), d.end(), [](double x) { return x == 0; })) diff = 0;
  m["mean_a"] = stats::mean(va);
  m["mean_b"] = stats::mean(vb);
  m["diff"] = diff;
  m["ci_low"] = ci.low;
  m["ci_high"] = ci.high;
  if (boolean) {
    m["p_value"] = stats::mcnemar_exact_p(only_a_true, only_b_true);
    m["test"] = "mcnemar_exact";
    m["discordant"] = {{"a_only", only_a_true}, {"b_only", only_b_true}};
  } else {
    m["p_value"] = stats::wilcoxon_signed_rank_p(d);
    m["test"] = "wilcoxon_signed_rank";
  }
  return m;
}

// The pairs that changed most (largest difference first, then most values), at most kChangedRecords of them.
json most_changed(const std::vector<Change> &changes, const std::vector<std::string> &pair_keys, std::size_t &n_changed) {
  std::vector<std::size_t> order;
  for (std::size_t p = 0; p < changes.size(); ++p)
    if (!changes[p].values.empty()) order.push_back(p);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
    if (changes[x].score != changes[y].score) return changes[x].score > changes[y].score;
    return changes[x].values.size() > changes[y].values.size();
  });
  n_changed = order.size();
  json changed = json::array();
  for (std::size_t k = 0; k < order.size() && k < kChangedRecords; ++k) {
    const std::size_t p = order[k];
    changed.push_back({{"id", pair_keys[p]}, {"max_abs_diff", changes[p].score}, {"n_changed", changes[p].values.size()},
                       {"values", changes[p].values}});
  }
  return changed;
}

}  // namespace evalgraph::compare::detail
