// See record_budget.h.
#include "exec/record_budget.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>

#include "util/stop.h"

namespace evalgraph::exec_detail {

RecordBudget::RecordBudget(double max_usd, std::function<double()> spent)
    : max_usd_(max_usd), spent_(std::move(spent)), spent_before_(spent_()) {}

std::size_t RecordBudget::admit(std::size_t n, bool whole) {
  std::unique_lock lk(mu_);
  for (;; cv_.wait_for(lk, std::chrono::milliseconds(100))) {  // (the timeout sees a stop)
    if (exhausted_ || stop_requested()) return 0;
    if (finished_ == 0) {  // the cost of a record is not known yet: one chunk at a time
      if (in_flight_ > 0) continue;
      in_flight_ += n;
      return n;
    }
    const double per_record = 1.05 * finished_cost_ / static_cast<double>(finished_);
    const double spent = spent_();
    const double spent_under_way = std::max(0.0, spent - spent_before_ - finished_cost_);
    const double committed = spent + std::max(0.0, static_cast<double>(in_flight_) * per_record - spent_under_way);
    const double left = max_usd_ - committed;
    const std::size_t fit =
        per_record <= 0 ? n : static_cast<std::size_t>(std::max(0.0, std::floor(left / per_record)));
    if (fit >= n) {
      in_flight_ += n;
      return n;
    }
    if (in_flight_ > 0) continue;  // what the records under way cost decides
    exhausted_ = true;
    why_ = fmt::format(
        "at ${:.4f} spent, the ${:.4f} left of the ${:.4g} budget finishes {} more record(s) at about "
        "${:.4f} each",
        spent, std::max(0.0, max_usd_ - spent), max_usd_, whole ? 0 : fit, per_record);
    const std::size_t m = whole ? 0 : fit;
    in_flight_ += m;
    return m;
  }
}

void RecordBudget::done(double cost_usd) {
  {
    std::lock_guard lk(mu_);
    if (in_flight_ > 0) --in_flight_;
    ++finished_;
    finished_cost_ += cost_usd;
  }
  cv_.notify_all();
}

bool RecordBudget::exhausted() const {
  std::lock_guard lk(mu_);
  return exhausted_;
}

std::string RecordBudget::why() const {
  std::lock_guard lk(mu_);
  return why_;
}

}  // namespace evalgraph::exec_detail
