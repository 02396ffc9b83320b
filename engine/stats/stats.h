#pragma once
// Paired statistics for `evalgraph compare`: a percentile bootstrap interval of the mean paired difference,
// Wilcoxon's signed-rank test for numbers and the exact McNemar test for booleans. Deterministic: the
// bootstrap draws from its own generator (SplitMix64) with a fixed seed, so a comparison prints the same
// figures on every machine.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace evalgraph::stats {

constexpr int kBootstrapResamples = 2000;
constexpr std::uint64_t kBootstrapSeed = 20261123;

// The generator behind every bootstrap here (Steele, Lea & Flood's SplitMix64): tiny, fast, and the same
// sequence on every machine for a seed.
struct SplitMix64 {
  std::uint64_t s;
  std::uint64_t next() {
    std::uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform in [0, n): the top 53 bits as a double in [0, 1), scaled (bias below 2^-30 for n < 2^23).
  std::size_t below(std::size_t n) {
    auto k = static_cast<std::size_t>(static_cast<double>(next() >> 11) * 0x1.0p-53 * static_cast<double>(n));
    return k < n ? k : n - 1;
  }
  // Uniform in the open interval (0, 1): never 0 or 1, so a quantile function of it stays finite.
  double open_unit() { return (static_cast<double>(next() >> 11) + 0.5) * 0x1.0p-53; }
};

// A Binomial(n, p) draw. Exact inversion (the pmf summed from 0) while n·min(p, 1-p) < kBinomialInversionMax;
// beyond, the normal approximation rounded and clamped to [0, n], whose variance is then at least
// kBinomialInversionMax / 2 = 100 (its quantiles are off by well under one count's share of an interval).
constexpr double kBinomialInversionMax = 200;
std::uint64_t binomial_sample(SplitMix64 &rng, std::uint64_t n, double p);
// Resamples sum(counts) items with replacement from cells holding `counts` items: a multinomial draw by
// conditional binomials, one per cell, so the cost is the number of cells, not of items.
std::vector<std::uint64_t> multinomial_sample(SplitMix64 &rng, const std::vector<std::uint64_t> &counts);

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
