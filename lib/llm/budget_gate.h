#pragma once
// The budget gate of the LLM service (LlmService::set_budget; docs/cost.md). A call to a priced provider goes
// only while what was spent, the reserves of the calls in flight and its own reserve fit the budget. A call's
// reserve is what its provider's billed answers cost on average, or, before the first of them, an estimate
// from the call's tokens. Reaching the budget refuses that call and every later one (the run stops, resumable).
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace evalgraph::llm {

class BudgetGate {
 public:
  // A budget of `max_usd` (< 0: none) over `providers` providers, `spent_before` of it spent by earlier sessions
  // of the run; `on_reached` is called once, with why, by the call that reaches it. Set before calls start.
  void set(double max_usd, double spent_before, std::size_t providers,
           std::function<void(const std::string &)> on_reached);
  bool active() const { return max_usd_ >= 0; }

  // Admits a call to provider `prov` holding `reserve`, or refuses it (and then every later one) when it cannot
  // fit with no call in flight left to finish. While calls are in flight it waits for them instead (their
  // answers turn estimated reserves into known costs), so the estimates before the first answers do not end a
  // run early; `before_wait` (chat_batch: submit what it admitted so far) runs before the first wait.
  // `estimate`: the call's cost from its tokens. A stop request (util/stop.h) while waiting refuses too, with
  // `why` empty; else `why` says what was spent.
  bool admit(std::size_t prov, const std::function<double()> &estimate, double &reserve, std::string &why,
             const std::function<void()> *before_wait);
  // An admitted call finished; `billed`: an answer was paid for, at `cost_usd`.
  void release(std::size_t prov, double reserve, bool billed, double cost_usd);
  // {max_cost_usd, spent_usd, reached, in_flight}, or null without a budget.
  nlohmann::json to_json() const;

 private:
  bool admit_locked(std::size_t prov, const std::function<double()> &estimate, double &reserve, std::string &why,
                    bool &first, const std::function<void()> *before_wait);

  mutable std::mutex mu_;
  std::condition_variable cv_;
  double max_usd_ = -1, spent_ = 0;
  bool reached_ = false;
  std::function<void(const std::string &)> on_reached_;
  // per provider: calls admitted and not finished, their reserves, the cost and count of its billed calls
  std::vector<int> in_flight_;
  std::vector<double> reserved_, cost_;
  std::vector<std::uint64_t> billed_;
};

}  // namespace evalgraph::llm
