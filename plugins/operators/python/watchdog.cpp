// The watchdog of the python node (interpreter.h, Deadline): one thread that raises evalgraph.Timeout in a call
// past its deadline, or in every call when the run is stopped at once.
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <new>
#include <vector>

#include "interpreter.h"
#include "interpreter_internal.h"

namespace pynode {
namespace {

using Clock = std::chrono::steady_clock;

// Never destroyed: the watchdog waits on them for the life of the process, and glibc's pthread_cond_destroy at
// exit would wait for it to leave its wait (it polls every 100 ms and re-enters: exits took up to a minute).
// Constructed in static storage, not on the heap: a process that loads the plugin and unloads it unused
// (`evalgraph plugins`, validate without a python node) then leaves nothing behind for LeakSanitizer to report.
template <class T>
struct Immortal {
  alignas(T) unsigned char bytes[sizeof(T)];
  T &get() { return *new (bytes) T; }  // called once per object, at static initialisation
};
Immortal<std::mutex> g_wd_mu_storage;
Immortal<std::condition_variable> g_wd_cv_storage;
Immortal<std::vector<Deadline::Entry *>> g_active_storage;
std::mutex &g_wd_mu = g_wd_mu_storage.get();
std::condition_variable &g_wd_cv = g_wd_cv_storage.get();
std::vector<Deadline::Entry *> &g_active = g_active_storage.get();  // under g_wd_mu
Clock::time_point g_wd_next = Clock::time_point::max();  // when the watchdog wakes next

Deadline::Why due(const Deadline::Entry &e, Clock::time_point now) {
  if (e.fired != Deadline::none) return Deadline::none;
  if (e.host != nullptr && e.host->is_cancelled != nullptr && e.host->is_cancelled(e.host, e.call) != 0)
    return Deadline::cancelled;
  return e.deadline <= now ? Deadline::timeout : Deadline::none;
}

}  // namespace

// Wakes at the earliest deadline, and at least every kPoll to notice a run that is being stopped: a call
// only wakes it when its deadline comes before that (a short timeout_s), so a call costs no context switch.
[[noreturn]] void detail::watchdog() {
  constexpr auto kPoll = std::chrono::milliseconds(100);
  std::unique_lock lk(g_wd_mu);
  for (;;) {
    auto now = Clock::now();
    bool any_due = false;
    auto next = now + kPoll;
    for (auto *e : g_active) {
      if (due(*e, now) != Deadline::none) any_due = true;
      else if (e->fired == Deadline::none) next = std::min(next, e->deadline);
    }
    if (any_due) {
      // The GIL first, then the list (the order a worker takes them in): a worker that holds the GIL cannot
      // be between its call's end and Deadline::end() while an interruption is sent to it.
      lk.unlock();
      {
        Gil gil;
        std::lock_guard l2(g_wd_mu);
        now = Clock::now();
        for (auto *e : g_active) {
          Deadline::Why why = due(*e, now);
          if (why == Deadline::none) continue;
          e->fired = why;
          PyThreadState_SetAsyncExc(e->thread_id, timeout_type());
        }
      }
      lk.lock();
      continue;
    }
    g_wd_next = next;
    g_wd_cv.wait_until(lk, next);
  }
}

Deadline::Deadline(double seconds, const eg_host *host, eg_call *call) : e_(&entry_) {
  e_->thread_id = PyThreadState_Get()->thread_id;
  e_->deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  e_->host = host;
  e_->call = call;
  std::lock_guard lk(g_wd_mu);
  g_active.push_back(e_);
  if (e_->deadline < g_wd_next) g_wd_cv.notify_one();
}

Deadline::Why Deadline::end() {
  if (e_ == nullptr) return why_;
  {
    std::lock_guard lk(g_wd_mu);
    g_active.erase(std::find(g_active.begin(), g_active.end(), e_));
    why_ = e_->fired;
  }
  // Sent but perhaps not raised (the function returned first): drop it, or it would end this thread's next call.
  if (why_ != none) PyThreadState_SetAsyncExc(e_->thread_id, nullptr);
  e_ = nullptr;
  return why_;
}

}  // namespace pynode
