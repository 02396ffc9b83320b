// eg-rate-sim: the rate controller in simulated time (rate_sim.h) against servers that do not queue (latency
// constant or heavy-tailed) and servers of small capacity that queue, side by side with fixed windows, over several
// seeds; then servers of capacity 2-64 at 30 ms to 1 s, and one whose capacity drops and comes back. Deterministic: a
// policy change is judged here before the loopback benches (bench/ratelimit_bench.sh, bench/pipeline_bench.sh), which
// add the machine's noise.
//   eg-rate-sim [--seeds N] [--trace SIGMA CEILING [K]] [--drop SIGMA]
#include "rate_sim.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <tuple>
#include <vector>

using namespace evalgraph::llm;

namespace {

RateSettings adaptive(int ceiling, bool stated) { return RateSettings{true, ceiling, stated, 0, 0}; }
RateSettings fixed(int window) { return RateSettings{false, window, true, 0, 0}; }

}  // namespace

int main(int argc, char **argv) {
  int seeds = 7;
  double trace_sigma = -1;
  int trace_ceiling = 64, trace_k = 0;
  double drop_sigma = -1;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--seeds") && i + 1 < argc) seeds = std::atoi(argv[++i]);
    if (!std::strcmp(argv[i], "--trace") && i + 2 < argc) {  // --trace SIGMA CEILING [K]: one run's window changes
      trace_sigma = std::atof(argv[++i]);
      trace_ceiling = std::atoi(argv[++i]);
      if (i + 1 < argc && argv[i + 1][0] != '-') trace_k = std::atoi(argv[++i]);
    }
    // --drop SIGMA: the window changes against the server whose capacity drops and comes back (the last case below)
    if (!std::strcmp(argv[i], "--drop") && i + 1 < argc) drop_sigma = std::atof(argv[++i]);
  }
  if (drop_sigma >= 0) {
    sim::QueueingServer q(24, 0.1, drop_sigma, 1);
    auto r = sim::run(adaptive(256, false), 24 * 300, [&](double t) {
      q.set_capacity(t < 10 || t >= 20 ? 24 : 8);
      return q.latency(t);
    });
    for (auto [t, w] : r.windows) std::printf("%8.3f %5d\n", t, w);
    std::printf("%.2f s\n", r.seconds);
    return 0;
  }
  if (trace_sigma >= 0) {
    sim::UnqueuedServer a(0.1, trace_sigma, 1);
    sim::QueueingServer q(std::max(trace_k, 1), 0.1, trace_sigma, 1);
    auto r =
        sim::run(adaptive(trace_ceiling, trace_ceiling != RateSettings{}.ceiling), trace_k > 0 ? trace_k * 150 : 4000,
                 [&](double t) { return trace_k > 0 ? q.latency(t) : a.latency(t); });
    for (auto [t, w] : r.windows) std::printf("%8.3f %5d\n", t, w);
    std::printf("%.2f s\n", r.seconds);
    return 0;
  }

  std::printf("== servers that do not queue, 100 ms mean latency, 4,000 calls: seconds against a fixed window\n");
  std::printf("%-7s %-22s %10s %10s %8s %12s\n", "sigma", "client", "seconds", "fixed_s", "ratio", "mean_window");
  for (double sigma : {0.0, 0.5, 1.0, 1.5}) {
    for (auto [name, s, f] : {std::tuple{"adaptive, ceiling 64", adaptive(64, true), fixed(64)},
                              std::tuple{"adaptive, default", adaptive(256, false), fixed(256)}}) {
      std::vector<double> secs, ratio, win;
      for (int seed = 1; seed <= seeds; ++seed) {
        sim::UnqueuedServer a(0.1, sigma, seed), b(0.1, sigma, seed);
        auto ra = sim::run(s, 4000, [&](double t) { return a.latency(t); });
        auto rb = sim::run(f, 4000, [&](double t) { return b.latency(t); });
        secs.push_back(ra.seconds);
        ratio.push_back(ra.seconds / rb.seconds);
        win.push_back(ra.mean_window);
      }
      std::printf("%-7.1f %-22s %10.2f %10.2f %8.3f %12.1f\n", sigma, name, sim::median(secs),
                  sim::median(secs) / sim::median(ratio), sim::median(ratio), sim::median(win));
    }
  }

  std::printf(
      "\n== servers of capacity K that queue, 100 ms a call, ~15 s of calls: throughput / (K/L), median "
      "latency / unloaded (median and worst of %d seeds)\n",
      seeds);
  std::printf("%-4s %-6s %14s %14s %14s %14s\n", "K", "sigma", "thru_median", "thru_worst", "lat_median", "lat_worst");
  for (double sigma : {0.0, 0.5}) {
    for (int k : {1, 2, 6, 24, 96}) {
      std::vector<double> thru, lat;
      const int calls = k * 150;
      for (int seed = 1; seed <= seeds; ++seed) {
        sim::QueueingServer q(k, 0.1, sigma, seed);
        auto r = sim::run(adaptive(256, false), calls, [&](double t) { return q.latency(t); });
        thru.push_back(calls / r.seconds / (k / 0.1));
        lat.push_back(r.median_latency_s / sim::unloaded_median(0.1, sigma));
      }
      std::printf("%-4d %-6.1f %14.3f %14.3f %14.2f %14.2f\n", k, sigma, sim::median(thru),
                  *std::min_element(thru.begin(), thru.end()), sim::median(lat),
                  *std::max_element(lat.begin(), lat.end()));
    }
  }

  // Capacity against latency: where the window settles on servers of capacity K at latency L (fixed, and with a
  // few per cent of jitter, as the loopback's), ~20 s of calls each.
  std::printf(
      "\n== servers of capacity K at latency L, ~20 s of calls: throughput / (K/L) and median latency / "
      "unloaded (worst of %d seeds)\n",
      std::min(seeds, 3));
  for (double sigma : {0.0, 0.05}) {
    for (double l : {0.03, 0.1, 0.4, 1.0}) {
      std::printf("sigma %.2f L %.2f:", sigma, l);
      for (int k : {2, 3, 4, 6, 10, 16, 32, 64}) {
        double thru = 1e9, lat = 0;
        for (int seed = 1; seed <= std::min(seeds, 3); ++seed) {
          sim::QueueingServer q(k, l, sigma, seed);
          const int calls = static_cast<int>(k / l * 20);
          auto r = sim::run(adaptive(256, false), calls, [&](double t) { return q.latency(t); });
          thru = std::min(thru, calls / r.seconds / (k / l));
          lat = std::max(lat, r.median_latency_s / sim::unloaded_median(l, sigma));
        }
        std::printf("  %d:%.2f/%.2f", k, thru, lat);
      }
      std::printf("\n");
    }
  }

  // A server whose capacity changes under the run (another tenant): K 24, then 8 from 10 s, then 24 again from
  // 20 s. Per 2.5 s: the answers' rate against K/L, their median latency against unloaded.
  std::printf(
      "\n== a server of capacity 24 that drops to 8 at 10 s and is back at 24 at 20 s, 100 ms a call "
      "(seed 1): per 2.5 s, throughput / (K/L) and median latency / unloaded\n");
  for (double sigma : {0.0, 0.5}) {
    auto capacity = [](double t) { return t < 10 || t >= 20 ? 24 : 8; };
    sim::QueueingServer q(24, 0.1, sigma, 1);
    auto r = sim::run(adaptive(256, false), 24 * 300, [&](double t) {
      q.set_capacity(capacity(t));
      return q.latency(t);
    });
    std::printf("sigma %.1f, %.2f s:", sigma, r.seconds);
    for (double from = 0; from < std::min(r.seconds, 30.0) - 1e-9; from += 2.5) {
      std::vector<double> lat;
      for (auto [t, l] : r.answers)
        if (t >= from && t < from + 2.5) lat.push_back(l);
      std::printf("  %.2f/%.2f", lat.size() / 2.5 / (capacity(from) / 0.1),
                  sim::median(lat) / sim::unloaded_median(0.1, sigma));
    }
    std::printf("\n");
  }
  return 0;
}
