// The run's stop request (stop.h). Everything a signal handler calls uses lock-free atomics and write(2) only.
#include "util/stop.h"

#include "util/exit_codes.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <thread>

namespace evalgraph {
namespace {

constexpr int kWakeSlots = 16;
constexpr std::size_t kDetailBytes = 256;

std::atomic<int> g_reason{0};         // StopReason, published after the detail is written
std::atomic<bool> g_claimed{false};   // the first request owns the detail buffer
std::atomic<bool> g_now{false};
std::atomic<std::int64_t> g_at_ns{0};  // steady clock at the first request
std::atomic<std::int64_t> g_grace_ms{5000};
char g_detail[kDetailBytes];
std::atomic<int> g_wake_fds[kWakeSlots];  // -1: free (zero-initialised as 0; see init below)
std::atomic<bool> g_slots_ready{false};
std::atomic<int> g_waking{0};  // wake_all() calls under way: unregister waits for them before its fd may close

static_assert(std::atomic<int>::is_always_lock_free && std::atomic<std::int64_t>::is_always_lock_free &&
                  std::atomic<bool>::is_always_lock_free,
              "the stop request is used from signal handlers");

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void wake_all() {
  if (!g_slots_ready.load()) return;
  ++g_waking;
  for (auto &slot : g_wake_fds) {
    int fd = slot.load();
    if (fd < 0) continue;
    std::uint64_t one = 1;
    [[maybe_unused]] ssize_t n = ::write(fd, &one, sizeof one);
  }
  --g_waking;
}

}  // namespace

int stop_exit_code(StopReason r) {
  switch (r) {
    case StopReason::signal: return exit_code::interrupted;
    case StopReason::budget: return exit_code::budget;
    case StopReason::none: break;
  }
  return 0;
}

const char *stop_reason_name(StopReason r) {
  switch (r) {
    case StopReason::signal: return "signal";
    case StopReason::budget: return "budget";
    case StopReason::none: break;
  }
  return "none";
}

bool request_stop(StopReason reason, const char *detail) {
  if (reason == StopReason::none || g_claimed.exchange(true)) {
    wake_all();
    return false;
  }
  std::size_t n = 0;
  if (detail != nullptr)
    while (n + 1 < kDetailBytes && detail[n] != '\0') ++n;
  if (n > 0) std::memcpy(g_detail, detail, n);
  g_detail[n] = '\0';
  g_at_ns.store(now_ns());  // clock_gettime: async-signal-safe
  g_reason.store(static_cast<int>(reason));
  wake_all();
  return true;
}

void request_stop_now() {
  request_stop(StopReason::signal, "stopped at once");
  g_now.store(true);
  wake_all();
}

bool stop_requested() { return g_reason.load() != 0; }
bool stop_now_requested() { return g_now.load(); }
StopReason stop_reason() { return static_cast<StopReason>(g_reason.load()); }
std::string stop_detail() { return stop_requested() ? std::string(g_detail) : std::string(); }

double seconds_since_stop() {
  if (!stop_requested()) return 0;
  return static_cast<double>(now_ns() - g_at_ns.load()) / 1e9;
}

double stop_grace_s() { return static_cast<double>(g_grace_ms.load()) / 1000.0; }
void set_stop_grace_s(double s) { g_grace_ms.store(s <= 0 ? 0 : static_cast<std::int64_t>(s * 1000.0 + 0.5)); }

int register_stop_wake_fd(int fd) {
  static const bool init = [] {
    for (auto &slot : g_wake_fds) slot.store(-1);
    g_slots_ready.store(true);
    return true;
  }();
  (void)init;
  for (int i = 0; i < kWakeSlots; ++i) {
    int expected = -1;
    if (g_wake_fds[i].compare_exchange_strong(expected, fd)) return i;
  }
  return -1;
}

void unregister_stop_wake_fd(int slot) {
  if (slot < 0 || slot >= kWakeSlots) return;
  g_wake_fds[slot].store(-1);
  while (g_waking.load() != 0) std::this_thread::yield();  // a handler on another thread may hold the old fd
}

namespace {
thread_local bool t_call_stopped = false;
}
void note_call_stopped() { t_call_stopped = true; }
bool take_call_stopped() {
  bool was = t_call_stopped;
  t_call_stopped = false;
  return was;
}

void reset_stop() {
  g_reason.store(0);
  g_now.store(false);
  g_at_ns.store(0);
  // g_detail stays: it is read only while a stop is requested (stop_detail), and the next request_stop writes it
  // before it sets the reason. Clearing it here raced with a thread still reading the old stop's detail.
  g_claimed.store(false);
}

}  // namespace evalgraph
