#pragma once
// The report's aggregation over the judge node's outputs (one per record): per method the six dimension
// scores, the overall score, a breakdown by probe type, the compression ratio and the judge counts.
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace compression {

using json = nlohmann::json;

// overall_mode "answers" (default): overall = mean over the valid judged answers of each answer's overall
// score (the unweighted mean of the dimensions that answer has). "dimensions": overall = unweighted mean of
// the method's dimension columns that have data. A dimension column = mean over valid judged answers that
// have that dimension of the answer's dimension score; a column without data is null.
class Aggregator {
 public:
  explicit Aggregator(std::string overall_mode = "answers");
  // One record's judge output ({"results": [...], "methods": [...], "judge_calls", ...}).
  void add(const json &judge_output);
  // A record that reached the sink without judge output (failed or skipped upstream).
  void add_missing(const std::string &why);
  json result() const;

  static std::string markdown(const json &result);
  static std::string csv(const json &result);
  static std::string by_type_csv(const json &result);

 private:
  struct Acc {
    std::map<std::string, std::pair<double, long>> dims;  // dimension -> (Σ, n)
    double agg_sum = 0;
    long agg_n = 0;
  };
  struct MethodAcc {
    std::string method, label;
    Acc all;
    std::map<std::string, Acc> by_type;
    std::vector<std::string> type_order;
    long valid = 0, invalid = 0, judge_errors = 0, unanswered = 0, judge_calls = 0;
    long checkpoints = 0;
    double tokens_kept = 0, tokens_history = 0;
  };
  MethodAcc &method(const std::string &m, const std::string &label);
  json summarise(const Acc &a) const;

  std::string mode_;
  std::vector<MethodAcc> methods_;
  long records_ = 0, missing_ = 0;
  std::string first_missing_;
};

}  // namespace compression
