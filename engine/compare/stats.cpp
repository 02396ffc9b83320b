#include "compare/stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace evalgraph::stats {

namespace {

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
};

// Linear interpolation between order statistics (R's type 7, numpy's default).
double quantile_sorted(const std::vector<double> &s, double q) {
  if (s.empty()) return 0;
  double h = (static_cast<double>(s.size()) - 1) * q;
  auto lo = static_cast<std::size_t>(std::floor(h));
  std::size_t hi = std::min(lo + 1, s.size() - 1);
  return s[lo] + (h - static_cast<double>(lo)) * (s[hi] - s[lo]);
}

double normal_cdf(double z) { return 0.5 * std::erfc(-z / std::sqrt(2.0)); }

}  // namespace

double mean(const std::vector<double> &v) {
  if (v.empty()) return 0;
  // Kahan-free but in long double: 100k values of [0,1] lose nothing that is printed.
  long double s = 0;
  for (double x : v) s += x;
  return static_cast<double>(s / static_cast<long double>(v.size()));
}

Interval paired_bootstrap_ci(const std::vector<double> &d, int resamples, std::uint64_t seed, double level) {
  if (d.empty()) return {};
  if (std::all_of(d.begin(), d.end(), [&](double x) { return x == d[0]; })) return {d[0], d[0]};
  SplitMix64 rng{seed};
  std::vector<double> means(static_cast<std::size_t>(std::max(1, resamples)));
  const std::size_t n = d.size();
  for (auto &m : means) {
    double s = 0;
    for (std::size_t i = 0; i < n; ++i) s += d[rng.below(n)];
    m = s / static_cast<double>(n);
  }
  std::sort(means.begin(), means.end());
  double a = (1 - level) / 2;
  return {quantile_sorted(means, a), quantile_sorted(means, 1 - a)};
}

double wilcoxon_signed_rank_p(const std::vector<double> &d) {
  std::vector<double> nz;
  for (double x : d)
    if (x != 0 && !std::isnan(x)) nz.push_back(x);
  const std::size_t n = nz.size();
  if (n == 0) return 1.0;
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](std::size_t i, std::size_t j) { return std::fabs(nz[i]) < std::fabs(nz[j]); });
  // Doubled mid-ranks: integers even with ties (a tie over ranks i..j gets i + j).
  std::vector<std::uint64_t> rank2(n);
  double tie_term = 0;  // sum of t^3 - t over tie groups
  for (std::size_t i = 0; i < n;) {
    std::size_t j = i;
    while (j + 1 < n && std::fabs(nz[order[j + 1]]) == std::fabs(nz[order[i]])) ++j;
    for (std::size_t k = i; k <= j; ++k) rank2[order[k]] = (i + 1) + (j + 1);
    double t = static_cast<double>(j - i + 1);
    tie_term += t * t * t - t;
    i = j + 1;
  }
  std::uint64_t w2 = 0, total2 = 0;  // doubled W+ and doubled sum of all ranks
  for (std::size_t i = 0; i < n; ++i) {
    total2 += rank2[i];
    if (nz[i] > 0) w2 += rank2[i];
  }
  if (n <= kWilcoxonExactMax) {
    // Under H0 each rank is + or - with probability 1/2: the distribution of the doubled W+ by counting.
    std::vector<double> dist(total2 + 1, 0.0);
    dist[0] = 1;
    std::uint64_t reach = 0;
    for (std::size_t i = 0; i < n; ++i) {
      for (std::uint64_t s = reach + 1; s-- > 0;)
        if (dist[s] != 0) dist[s + rank2[i]] += dist[s];
      reach += rank2[i];
      for (std::uint64_t s = 0; s <= reach; ++s) dist[s] *= 0.5;
    }
    double le = 0, ge = 0;
    for (std::uint64_t s = 0; s <= total2; ++s) {
      if (s <= w2) le += dist[s];
      if (s >= w2) ge += dist[s];
    }
    return std::min(1.0, 2 * std::min(le, ge));
  }
  const double nn = static_cast<double>(n);
  const double w = static_cast<double>(w2) / 2;
  const double mu = nn * (nn + 1) / 4;
  const double var = nn * (nn + 1) * (2 * nn + 1) / 24 - tie_term / 48;
  if (var <= 0) return 1.0;
  double z = (std::fabs(w - mu) - 0.5) / std::sqrt(var);
  if (z < 0) z = 0;
  return std::min(1.0, 2 * (1 - normal_cdf(z)));
}

double mcnemar_exact_p(std::uint64_t b, std::uint64_t c) {
  const std::uint64_t n = b + c;
  if (n == 0) return 1.0;
  const std::uint64_t k = std::min(b, c);
  // P(X <= k), X ~ Bin(n, 1/2), summed in log space so large n does not underflow term by term.
  double cdf = 0;
  for (std::uint64_t i = 0; i <= k; ++i) {
    double lp = std::lgamma(static_cast<double>(n) + 1) - std::lgamma(static_cast<double>(i) + 1) -
                std::lgamma(static_cast<double>(n - i) + 1) - static_cast<double>(n) * std::log(2.0);
    cdf += std::exp(lp);
  }
  return std::min(1.0, 2 * cdf);
}

}  // namespace evalgraph::stats
