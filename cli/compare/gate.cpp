// `evalgraph compare --fail-if-worse`: the gate's verdict over a comparison (compare.h, docs/ci.md).
#include <fmt/format.h>

#include "compare/compare.h"
#include "compare/compare_internal.h"
#include "entry/pipeline_entry.h"
#include "util/exit_codes.h"

namespace evalgraph::compare {

using nlohmann::json;
using detail::num;
using detail::pval;

json gate(const json &c, const Gate &g) {
  json results = json::array();
  std::size_t failed = 0;
  std::vector<std::string> known;
  for (const auto &m : c["metrics"]) known.push_back(m["node"].get<std::string>() + "." + m["field"].get<std::string>());
  for (const auto &name : g.metrics) {
    const json *m = nullptr;
    for (const auto &x : c["metrics"])
      if (x["node"].get<std::string>() + "." + x["field"].get<std::string>() == name) m = &x;
    if (m == nullptr) {
      std::string one;
      for (const auto &x : c["metrics_in_one_run_only"])
        if (x["node"].get<std::string>() + "." + x["field"].get<std::string>() == name)
          one = fmt::format(" (only run {} has it)", x["in"].get<std::string>() == "a" ? "A" : "B");
      throw CompareError(exit_code::usage, fmt::format("--fail-if-worse {}: no such metric in both runs{}{}; give node.field, e.g. {}",
                                        name, one, did_you_mean(name, known), known.empty() ? "o0.O0" : known.front()));
    }
    if ((*m)["n"].get<std::size_t>() == 0)
      throw CompareError(exit_code::usage, fmt::format("--fail-if-worse {}: no paired record has a value in both runs; nothing to judge",
                                        name));
    const std::string better = m->value("better", std::string("higher"));
    const double diff = (*m)["diff"].get<double>(), p = (*m)["p_value"].get<double>();
    const double worse_by = better == "lower" ? diff : -diff;  // > 0: B is worse than A
    const bool significant = p < g.alpha;
    const bool fail = significant && worse_by > 0 && worse_by > g.min_diff;
    std::string verdict;
    const std::string detail = fmt::format(
        "mean {} → {} (B − A = {:+.4g}, 95 % interval [{:+.4g}, {:+.4g}], {} p = {}, n = {}; {} is better)",
        num((*m)["mean_a"].get<double>()), num((*m)["mean_b"].get<double>()), diff, (*m)["ci_low"].get<double>(),
        (*m)["ci_high"].get<double>(), (*m)["test"].get<std::string>(), pval(p), (*m)["n"].get<std::size_t>(), better);
    if (fail) verdict = fmt::format("worse by {:.4g}, significant at alpha {}", worse_by, g.alpha);
    else if (worse_by > 0 && significant) verdict = fmt::format("worse by {:.4g}, within --min-diff {}", worse_by, g.min_diff);
    else if (worse_by > 0) verdict = fmt::format("worse by {:.4g}, not significant (p ≥ alpha {})", worse_by, g.alpha);
    else verdict = worse_by == 0 ? "unchanged" : "not worse";
    failed += fail ? 1 : 0;
    results.push_back({{"metric", name}, {"better", better}, {"worse_by", worse_by}, {"p_value", p}, {"alpha", g.alpha},
                       {"min_diff", g.min_diff}, {"passed", !fail}, {"verdict", verdict}, {"detail", detail}});
  }
  return {{"passed", failed == 0}, {"failed", failed}, {"results", results}};
}

}  // namespace evalgraph::compare
