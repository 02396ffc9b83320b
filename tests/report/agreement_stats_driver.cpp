// Reads cases as JSON on stdin and writes every agreement statistic of each as JSON on stdout, for
// agreement_reference.py to compare with scipy, scikit-learn and its own implementations.
//   {"cases": [{"type": "classification", "metric": [0, 1, ...], "label": [...], "k": 2, "positive": 1},
//              {"type": "score", "score": [0.3, ...], "positive": [true, ...], "folds": 5},
//              {"type": "correlation", "x": [...], "y": [...]},
//              {"type": "alpha", "units": [[1, 2, 2], [3], ...]}], "level": 0.95}
#include <iostream>
#include <nlohmann/json.hpp>

#include "stats/agreement.h"

using nlohmann::json;
using namespace evalgraph::stats;

namespace {

json to_json(const Stat &s) {
  return {{"defined", s.defined}, {"value", s.value}, {"low", s.low}, {"high", s.high},
          {"method", s.method},   {"why", s.why},     {"n", s.n}};
}

json classification(const json &c, double level) {
  const auto k = c.at("k").get<int>();
  const Confusion m =
      confusion_matrix(c.at("metric").get<std::vector<int>>(), c.at("label").get<std::vector<int>>(), k);
  json out = {{"confusion", m},
              {"accuracy", to_json(accuracy(m, level))},
              {"balanced_accuracy", to_json(balanced_accuracy(m, level))},
              {"kappa", to_json(cohen_kappa(m, level))},
              {"weighted_kappa", to_json(weighted_kappa(m, level))}};
  if (c.contains("positive")) {
    const int p = c.at("positive").get<int>();
    out["precision"] = to_json(precision(m, p, level));
    out["recall"] = to_json(recall(m, p, level));
    out["f1"] = to_json(f1(m, p, level));
  }
  return out;
}

json score(const json &c, double level) {
  const auto s = c.at("score").get<std::vector<double>>();
  const auto p = c.at("positive").get<std::vector<bool>>();
  const ThresholdChoice t = best_threshold(s, p, c.value("folds", 5), kAgreementSeed, level);
  return {{"auroc", to_json(auroc(s, p, level))},
          {"threshold", t.threshold},
          {"balanced_accuracy_in_sample", to_json(t.balanced_accuracy_in_sample)},
          {"balanced_accuracy_cv", to_json(t.balanced_accuracy_cv)}};
}

json correlation(const json &c, double level) {
  const auto x = c.at("x").get<std::vector<double>>(), y = c.at("y").get<std::vector<double>>();
  return {{"pearson", to_json(pearson(x, y, level))},
          {"spearman", to_json(spearman(x, y, level))},
          {"kendall", to_json(kendall_tau_b(x, y, level))},
          {"ranks_x", average_ranks(x)}};
}

json alpha(const json &c, double level) {
  const auto units = c.at("units").get<std::vector<std::vector<double>>>();
  return {{"nominal", to_json(krippendorff_alpha(units, AlphaLevel::nominal, level))},
          {"ordinal", to_json(krippendorff_alpha(units, AlphaLevel::ordinal, level))},
          {"interval", to_json(krippendorff_alpha(units, AlphaLevel::interval, level))}};
}

}  // namespace

int main() {
  try {
    const json in = json::parse(std::cin);
    const double level = in.value("level", 0.95);
    json results = json::array();
    for (const json &c : in.at("cases")) {
      const std::string type = c.at("type").get<std::string>();
      if (type == "classification")
        results.push_back(classification(c, level));
      else if (type == "score")
        results.push_back(score(c, level));
      else if (type == "correlation")
        results.push_back(correlation(c, level));
      else if (type == "alpha")
        results.push_back(alpha(c, level));
      else
        throw std::invalid_argument("unknown case type " + type);
    }
    std::cout << json{{"results", results}}.dump() << "\n";
  } catch (const std::exception &e) {
    std::cerr << "agreement_stats_driver: " << e.what() << "\n";
    return 2;
  }
  return 0;
}
