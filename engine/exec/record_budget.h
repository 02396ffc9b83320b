#pragma once
// A budget buys finished records (docs/cost.md, issue #39): under a budget the feeder admits records in input
// order only as far as the money left can finish them, at the cost per record observed so far (records finished,
// their calls' cost; 5 % over it), counting what the records under way may still spend. Until a record has
// finished only the first chunk goes. When the next chunk does not fit and no record is under way, the records of
// it that fit go (a chunk grouped for a sequence node: all or none), and the run stops there with the budget as
// its reason (resumable): what was paid for is written. The LLM service's own gate stays the hard limit.
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <string>

namespace evalgraph::exec_detail {

class RecordBudget {
 public:
  // `spent`: what the run has spent so far, earlier sessions included.
  RecordBudget(double max_usd, std::function<double()> spent);
  // How many of the next `n` records may start (n, or fewer when the budget is ending; then exhausted()). Waits
  // while records under way may change the picture. `whole`: n or nothing.
  std::size_t admit(std::size_t n, bool whole);
  // A record finished (whatever its outcome), its calls having cost `cost_usd`.
  void done(double cost_usd);
  bool exhausted() const;
  std::string why() const;

 private:
  const double max_usd_;
  const std::function<double()> spent_;
  const double spent_before_;  // by earlier sessions
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::size_t in_flight_ = 0, finished_ = 0;
  double finished_cost_ = 0;
  bool exhausted_ = false;
  std::string why_;
};

}  // namespace evalgraph::exec_detail
