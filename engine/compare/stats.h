#pragma once
// Paired statistics for `evalgraph compare`: a percentile bootstrap interval of the mean paired difference,
// Wilcoxon's signed-rank test for numbers and the exact McNemar test for booleans. Deterministic: the
// bootstrap draws from its own generator (SplitMix64) with a fixed seed, so a comparison prints the same
// figures on every machine.
#include <cstdint>
#include <vector>

namespace evalgraph::stats {

constexpr int kBootstrapResamples = 2000;
constexpr std::uint64_t kBootstrapSeed = 20261123;

struct Interval {
  double low = 0, high = 0;
};

// 95 % (or `level`) percentile interval of mean(d) over `resamples` resamples of d with replacement.
// Empty d gives [0, 0]; identical d gives [d0, d0].
Interval paired_bootstrap_ci(const std::vector<double> &d, int resamples = kBootstrapResamples,
                             std::uint64_t seed = kBootstrapSeed, double level = 0.95);

// Two-sided p of Wilcoxon's signed-rank test on the paired differences d (zeros dropped, ties get mid
// ranks). Exact distribution of the signed-rank sum (ties included, by doubled ranks) for up to
// kWilcoxonExactMax non-zero differences, the normal approximation with tie and continuity correction
// beyond. All differences zero (or none) gives p = 1.
constexpr std::size_t kWilcoxonExactMax = 400;
double wilcoxon_signed_rank_p(const std::vector<double> &d);

// Two-sided exact McNemar p: b = pairs true in A only, c = pairs true in B only; p = min(1, 2·P(X ≤ min(b,c)))
// with X ~ Binomial(b + c, 1/2). b + c = 0 gives p = 1.
double mcnemar_exact_p(std::uint64_t b, std::uint64_t c);

double mean(const std::vector<double> &v);

}  // namespace evalgraph::stats
