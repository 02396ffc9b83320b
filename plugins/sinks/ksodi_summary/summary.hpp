// Incremental aggregation of KSODI results per context_scope_id and its Markdown rendering.
// Memory stays flat: running n/sum/min/max per metric and scope; id lists are capped.
#pragma once

#include <cstddef>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace ksodi {

struct SummaryConfig {
  std::string scope_field = "context_scope_id";
  std::string id_field = "id";
  std::string s0_node = "s0", k0_node = "k0", o0_node = "o0";
  double k0_threshold = 0.4;
  std::size_t max_ids = 50;  // ids listed per scope and list; the rest is counted
};

struct RunningStat {
  std::size_t n = 0;
  double sum = 0, min = 0, max = 0;
  void add(double v);
  double mean() const { return n == 0 ? 0.0 : sum / static_cast<double>(n); }
};

struct CappedIds {
  std::vector<std::string> ids;
  std::size_t total = 0;
  void add(const std::string &id, std::size_t cap);
};

struct ScopeAgg {
  std::size_t n = 0;
  std::vector<RunningStat> stats;  // one per metric (SummaryAggregator::metrics())
  CappedIds not_interpretable, o0_null, failed;
};

class SummaryAggregator {
 public:
  explicit SummaryAggregator(SummaryConfig cfg);
  void add(const nlohmann::json &record);
  std::string markdown() const;
  // Metric names in table order, e.g. "S0", "S0.F", "K0.Z" (share of units where Z is present).
  static const std::vector<std::string> &metrics();
  const std::map<std::string, ScopeAgg> &scopes() const { return scopes_; }
  const std::vector<std::string> &scope_order() const { return order_; }

 private:
  SummaryConfig cfg_;
  std::map<std::string, ScopeAgg> scopes_;
  std::vector<std::string> order_;  // first appearance
  std::size_t records_ = 0;
};

}  // namespace ksodi
