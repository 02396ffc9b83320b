// See budget_gate.h.
#include "llm/budget_gate.h"

#include <chrono>

#include <fmt/format.h>

#include "util/stop.h"

namespace evalgraph::llm {

void BudgetGate::set(double max_usd, double spent_before, std::size_t providers,
                     std::function<void(const std::string &)> on_reached) {
  std::lock_guard lk(mu_);
  max_usd_ = max_usd;
  spent_ = spent_before;
  on_reached_ = std::move(on_reached);
  in_flight_.assign(providers, 0);
  reserved_.assign(providers, 0.0);
  cost_.assign(providers, 0.0);
  billed_.assign(providers, 0);
}

bool BudgetGate::admit(std::size_t prov, const std::function<double()> &estimate, double &reserve, std::string &why,
                       const std::function<void()> *before_wait) {
  bool first = false;
  const bool ok = admit_locked(prov, estimate, reserve, why, first, before_wait);
  if (first && on_reached_) on_reached_(why);  // (outside the lock: it stops the run)
  return ok;
}

bool BudgetGate::admit_locked(std::size_t prov, const std::function<double()> &estimate, double &reserve,
                              std::string &why, bool &first, const std::function<void()> *before_wait) {
  std::unique_lock lk(mu_);
  bool waited = false;
  for (;;) {
    if (reached_) {
      why = fmt::format("the budget of ${:.4g} is reached (spent ${:.4f})", max_usd_, spent_);
      return false;
    }
    if (stop_requested()) {
      why.clear();
      return false;
    }
    double held = 0;
    int n_in_flight = 0;
    for (std::size_t p = 0; p < in_flight_.size(); ++p) {
      held += billed_[p] > 0 ? in_flight_[p] * cost_[p] / static_cast<double>(billed_[p]) : reserved_[p];
      n_in_flight += in_flight_[p];
    }
    reserve = billed_[prov] > 0 ? cost_[prov] / static_cast<double>(billed_[prov]) : estimate();
    if (spent_ + held + reserve <= max_usd_) break;
    if (n_in_flight == 0) {
      reached_ = true;
      first = true;
      why = fmt::format("at ${:.4f} spent, the next call (about ${:.4f}) would pass the ${:.4g} budget", spent_,
                        reserve, max_usd_);
      return false;
    }
    if (!waited && before_wait != nullptr && *before_wait) {
      lk.unlock();
      (*before_wait)();
      lk.lock();
      waited = true;
      continue;
    }
    waited = true;
    cv_.wait_for(lk, std::chrono::milliseconds(100));  // release() notifies; the timeout sees a stop
  }
  ++in_flight_[prov];
  reserved_[prov] += reserve;
  return true;
}

void BudgetGate::release(std::size_t prov, double reserve, bool billed, double cost_usd) {
  {
    std::lock_guard lk(mu_);
    --in_flight_[prov];
    reserved_[prov] -= reserve;
    if (billed) {
      cost_[prov] += cost_usd;
      ++billed_[prov];
      spent_ += cost_usd;
    }
  }
  cv_.notify_all();
}

nlohmann::json BudgetGate::to_json() const {
  std::lock_guard lk(mu_);
  if (max_usd_ < 0) return nullptr;
  int n = 0;
  for (int x : in_flight_) n += x;
  return {{"max_cost_usd", max_usd_}, {"spent_usd", spent_}, {"reached", reached_}, {"in_flight", n}};
}

}  // namespace evalgraph::llm
