// SIGINT/SIGTERM for the runs of a command (run_entry.h StopOnSignals), and the watchdog that ends a stopped run
// that does not end by itself.
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <mutex>
#include <thread>

#include "entry/run_entry.h"

namespace evalgraph {

namespace {

std::atomic<int> g_interrupts{0};
std::atomic<HostServices *> g_host{nullptr};

void on_signal(int sig) {
  if (g_interrupts.fetch_add(1) == 0) {
    request_stop(StopReason::signal, sig == SIGTERM ? "SIGTERM" : "SIGINT");
    const char msg[] =
        "\nevalgraph: stopping after the records in flight: no new LLM call starts, calls in flight get "
        "the stop grace (--stop-grace), finished records are journaled (signal again to stop at once)\n";
    [[maybe_unused]] auto n = write(STDERR_FILENO, msg, sizeof msg - 1);
    return;
  }
  request_stop_now();
  if (HostServices *h = g_host.load(); h != nullptr) h->cancel();
}

}  // namespace

// Polls every 50 ms; ends with the run.
class StopOnSignals::Watchdog {
 public:
  explicit Watchdog(std::string run_dir) : run_dir_(std::move(run_dir)) {
    thread_ = std::thread([this] { loop(); });
  }
  ~Watchdog() {
    {
      std::lock_guard lk(mu_);
      done_ = true;
    }
    cv_.notify_all();  // (the run's end is not held up by the poll)
    thread_.join();
  }

 private:
  void loop() {
    double now_seen = -1;
    std::unique_lock lk(mu_);
    while (!done_) {
      cv_.wait_for(lk, std::chrono::milliseconds(50));
      if (done_ || !stop_requested()) continue;
      double since = seconds_since_stop();
      if (stop_now_requested() && now_seen < 0) now_seen = since;
      double limit = now_seen >= 0 ? std::min(now_seen + 2.0, stop_grace_s() + 10.0) : stop_grace_s() + 10.0;
      if (since < limit) continue;
      std::fprintf(
          stderr,
          "evalgraph: the run did not end within %.0f s of the stop (something it waits for is blocked); "
          "exiting now. The journal holds every finished chunk; finish the run with:\n  evalgraph run --resume %s\n",
          limit, run_dir_.c_str());
      std::fflush(stderr);
      _exit(stop_exit_code(stop_reason()));
    }
  }
  std::string run_dir_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;
};

StopOnSignals::StopOnSignals(double stop_grace_s) {
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  set_stop_grace_s(stop_grace_s);
}

StopOnSignals::~StopOnSignals() =
    default;  // (ends the watchdog; the handlers stay, as a stop asked for late is harmless)

void StopOnSignals::watch(const std::filesystem::path &run_dir) {
  watchdog_ = std::make_unique<Watchdog>(run_dir.string());
}

void StopOnSignals::host_hook(HostServices *host) { g_host.store(host); }

}  // namespace evalgraph
