// The rate controller (lib/llm/rate_controller.h) in simulated time against a modelled server: no sockets, no
// threads, no machine noise, so a change of policy can be judged on many seeds in a second. Used by the controller's
// tests (test_rate_sim.cpp) and by eg-rate-sim (bench/rate_sim.sh), which prints the same cases side by side with a
// fixed window.
//
// The loop is the one LlmService runs (transport.cpp, dispatch): start calls while may_send allows, observe, then
// wait for the next answer or for the time may_send named; every answer goes to on_answer with its latency.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <functional>
#include <queue>
#include <random>
#include <utility>
#include <vector>

#include "llm/rate_controller.h"

namespace evalgraph::llm::sim {

using Clock = RateController::Clock;

// Durations of mean `mean_s`, spread log-normally by `sigma` (0: constant), seeded.
class LogNormal {
 public:
  LogNormal(double mean_s, double sigma, std::uint64_t seed) : mean_s_(mean_s), sigma_(sigma), rng_(seed) {}
  double draw() {
    if (sigma_ <= 0) return mean_s_;
    return mean_s_ * std::exp(sigma_ * z_(rng_) - sigma_ * sigma_ / 2);  // (the mean stays mean_s)
  }

 private:
  double mean_s_, sigma_;
  std::mt19937_64 rng_;
  std::normal_distribution<double> z_{0, 1};
};

// A server that does not queue: the latency of a call does not depend on the load.
class UnqueuedServer {
 public:
  UnqueuedServer(double mean_s, double sigma, std::uint64_t seed) : latency_(mean_s, sigma, seed) {}
  double latency(double) { return latency_.draw(); }

 private:
  LogNormal latency_;
};

// A server of `capacity` calls at once that queues the rest, first come first served; each call is served for a
// draw of LogNormal(service_s, sigma). set_capacity changes it from the next call on (another tenant took some of
// it, or gave it back); a call already queued keeps its place.
class QueueingServer {
 public:
  QueueingServer(int capacity, double service_s, double sigma, std::uint64_t seed)
      : service_(service_s, sigma, seed), free_at_(static_cast<std::size_t>(capacity), 0.0) {}
  void set_capacity(int capacity) {
    const auto k = static_cast<std::size_t>(capacity);
    if (k < free_at_.size()) {  // the slots that stay: the ones free soonest
      std::sort(free_at_.begin(), free_at_.end());
      free_at_.resize(k);
    } else {
      free_at_.resize(k, 0.0);
    }
  }
  double latency(double t) {
    auto it = std::min_element(free_at_.begin(), free_at_.end());
    *it = std::max(t, *it) + service_.draw();
    return *it - t;
  }

 private:
  LogNormal service_;
  std::vector<double> free_at_;
};

// The median of LogNormal(mean_s, sigma): what a call takes on an unloaded server.
inline double unloaded_median(double mean_s, double sigma) { return mean_s * std::exp(-sigma * sigma / 2); }

inline double median(std::vector<double> v) {
  if (v.empty()) return 0;
  auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  return *mid;
}

struct Result {
  double seconds = 0;                              // until the last answer
  double median_latency_s = 0;                     // of every call
  double mean_window = 0;                          // time-weighted over the run
  std::vector<std::pair<double, int>> windows;     // (seconds, window) at every change of the window
  std::vector<std::pair<double, double>> answers;  // (seconds, latency) of every answer, in the order they came
};

// `calls` calls, all waiting from the start, through a controller of `settings` to a server whose latency is
// `latency(t)`.
inline Result run(RateSettings settings, int calls, const std::function<double(double)> &latency) {
  const auto t0 = Clock::now();
  auto at_s = [&](Clock::time_point t) { return std::chrono::duration<double>(t - t0).count(); };
  auto at_t = [&](double s) {
    return t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
  };
  RateController rc(settings);
  struct Pending {
    double end;
    RateController::Ticket ticket;
    double latency;
    bool operator>(const Pending &o) const { return end > o.end; }
  };
  std::priority_queue<Pending, std::vector<Pending>, std::greater<>> in_flight;
  int waiting = calls;
  double now = 0, window_time = 0, last = 0;
  Result r;
  for (;;) {
    Clock::time_point wake = Clock::time_point::max();
    while (waiting > 0) {
      Clock::time_point at;
      if (!rc.may_send(at_t(now), static_cast<int>(in_flight.size()), -1, at)) {
        wake = at;
        break;
      }
      const auto ticket = rc.on_send(at_t(now), -1);
      const double l = latency(now);
      in_flight.push({now + l, ticket, l});
      --waiting;
    }
    rc.observe(at_t(now), static_cast<int>(in_flight.size()), static_cast<std::size_t>(waiting));
    if (in_flight.empty() && waiting == 0) break;
    double next = in_flight.empty() ? 1e300 : in_flight.top().end;
    if (wake != Clock::time_point::max()) next = std::min(next, at_s(wake));
    window_time += rc.window() * (next - last);
    if (r.windows.empty() || r.windows.back().second != rc.window()) r.windows.emplace_back(now, rc.window());
    last = now = next;
    while (!in_flight.empty() && in_flight.top().end <= now) {
      const Pending p = in_flight.top();
      in_flight.pop();
      rc.on_answer(at_t(now), p.ticket, RateController::Answer::ok, p.latency, RateLimitHeaders{});
      r.answers.emplace_back(now, p.latency);
    }
  }
  r.seconds = now;
  r.mean_window = now > 0 ? window_time / now : 0;
  std::vector<double> latencies;
  for (const auto &a : r.answers) latencies.push_back(a.second);
  r.median_latency_s = median(std::move(latencies));
  return r;
}

}  // namespace evalgraph::llm::sim
