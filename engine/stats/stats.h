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

// ---- one sample (expect: in a pipeline, the report's intervals) ----

// The q-quantile of sorted values, linear between order statistics (R's type 7, numpy's default).
double quantile_sorted(const std::vector<double> &sorted, double q);
double normal_cdf(double z);
double normal_quantile(double p);  // the inverse of normal_cdf
// mean ± z·sd/√n (sd with n − 1), the report's interval of a mean; one value gives [x, x].
Interval mean_interval(const std::vector<double> &v, double level);
// Wilson's score interval of a share k/n (the report's for booleans); n = 0 gives [0, 1].
Interval wilson_interval(std::uint64_t k, std::uint64_t n, double level);
// A distribution-free interval of the q-quantile from the order statistics of sorted values (exact binomial
// ranks); too few values for the level leave an end unbounded (-inf or +inf).
Interval quantile_interval(const std::vector<double> &sorted, double q, double level);

}  // namespace evalgraph::stats
