#include "stats/stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace evalgraph::stats {

double quantile_sorted(const std::vector<double> &s, double q) {
  if (s.empty()) return 0;
  double h = (static_cast<double>(s.size()) - 1) * q;
  auto lo = static_cast<std::size_t>(std::floor(h));
  std::size_t hi = std::min(lo + 1, s.size() - 1);
  return s[lo] + (h - static_cast<double>(lo)) * (s[hi] - s[lo]);
}

double normal_cdf(double z) { return 0.5 * std::erfc(-z / std::sqrt(2.0)); }

// Acklam's rational approximation (relative error < 1.2e-9), refined by one Newton step on erfc.
double normal_quantile(double p) {
  if (!(p > 0 && p < 1)) return p <= 0 ? -INFINITY : INFINITY;
  static const double a[] = {-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02,
                             1.383577518672690e+02,  -3.066479806614716e+01, 2.506628277459239e+00};
  static const double b[] = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                             6.680131188771972e+01,  -1.328068155288572e+01};
  static const double c[] = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                             -2.549732539343734e+00, 4.374664141464968e+00,  2.938163982698783e+00};
  static const double d[] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
                             3.754408661907416e+00};
  double x;
  if (p < 0.02425) {
    double q = std::sqrt(-2 * std::log(p));
    x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
        ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  } else if (p > 1 - 0.02425) {
    double q = std::sqrt(-2 * std::log(1 - p));
    x = -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
        ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  } else {
    double q = p - 0.5, r = q * q;
    x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
        (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
  }
  double e = normal_cdf(x) - p;
  double u = e * std::sqrt(2 * M_PI) * std::exp(x * x / 2);
  return x - u / (1 + x * u / 2);
}

Interval mean_interval(const std::vector<double> &v, double level) {
  if (v.empty()) return {0, 0};
  const double m = mean(v);
  if (v.size() < 2) return {m, m};
  double ss = 0;
  for (double x : v) ss += (x - m) * (x - m);
  const double se = std::sqrt(ss / static_cast<double>(v.size() - 1) / static_cast<double>(v.size()));
  const double z = normal_quantile(0.5 + level / 2);
  return {m - z * se, m + z * se};
}

Interval wilson_interval(std::uint64_t k, std::uint64_t n, double level) {
  if (n == 0) return {0, 1};
  const double z = normal_quantile(0.5 + level / 2), nn = static_cast<double>(n);
  const double ph = static_cast<double>(k) / nn;
  const double centre = (ph + z * z / (2 * nn)) / (1 + z * z / nn);
  const double half = z / (1 + z * z / nn) * std::sqrt(ph * (1 - ph) / nn + z * z / (4 * nn * nn));
  return {std::max(0.0, centre - half), std::min(1.0, centre + half)};
}

Interval quantile_interval(const std::vector<double> &s, double q, double level) {
  if (s.empty()) return {0, 0};
  const std::size_t n = s.size();
  const double alpha = 1 - level;
  // P(X <= k) for X ~ Binomial(n, q), accumulated from the pmf in log space (lgamma): exact for any n.
  const double lq = std::log(q), l1q = std::log1p(-q);
  auto pmf = [&](std::size_t k) {
    if (q <= 0) return k == 0 ? 1.0 : 0.0;
    if (q >= 1) return k == n ? 1.0 : 0.0;
    double kk = static_cast<double>(k), nn = static_cast<double>(n);
    return std::exp(std::lgamma(nn + 1) - std::lgamma(kk + 1) - std::lgamma(nn - kk + 1) + kk * lq + (nn - kk) * l1q);
  };
  // lower: the largest l (1-based rank) with P(X < l) <= alpha/2; upper: the smallest u with P(X >= u) <= alpha/2.
  std::size_t lo = 0, hi = n + 1;
  double cdf = 0;
  for (std::size_t k = 0; k <= n; ++k) {
    if (cdf <= alpha / 2) lo = k;  // P(X <= k - 1) = cdf: the k-th order statistic is still a lower bound
    else break;
    cdf += pmf(k);
  }
  double tail = 0;
  for (std::size_t k = n + 1; k-- > 0;) {
    tail += pmf(k);  // P(X >= k)
    if (tail <= alpha / 2) hi = k;
    else break;
  }
  const double low = lo == 0 ? -INFINITY : s[lo - 1];
  const double high = hi > n ? INFINITY : s[hi - 1];
  return {low, high};
}

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

namespace evalgraph::stats {

namespace {

// Inversion: walk the pmf up from k = 0 until the cdf passes u. Expected steps n·p + 1; the caller keeps
// n·p < kBinomialInversionMax with p <= 1/2, so (1-p)^n >= e^-278 does not underflow.
std::uint64_t binomial_by_inversion(SplitMix64 &rng, std::uint64_t n, double p) {
  const double u = rng.open_unit(), odds = p / (1 - p);
  double pmf = std::exp(static_cast<double>(n) * std::log1p(-p)), cdf = pmf;
  std::uint64_t k = 0;
  while (u > cdf && k < n) {
    pmf *= static_cast<double>(n - k) / static_cast<double>(k + 1) * odds;
    ++k;
    cdf += pmf;
    if (pmf == 0 && static_cast<double>(k) > static_cast<double>(n) * p) break;  // rounding left cdf below u
  }
  return k;
}

}  // namespace

std::uint64_t binomial_sample(SplitMix64 &rng, std::uint64_t n, double p) {
  if (n == 0 || p <= 0) return 0;
  if (p >= 1) return n;
  if (p > 0.5) return n - binomial_sample(rng, n, 1 - p);
  const double nn = static_cast<double>(n), mean = nn * p;
  if (mean < kBinomialInversionMax) return binomial_by_inversion(rng, n, p);
  const double x = std::round(mean + std::sqrt(mean * (1 - p)) * normal_quantile(rng.open_unit()));
  return x <= 0 ? 0 : x >= nn ? n : static_cast<std::uint64_t>(x);
}

std::vector<std::uint64_t> multinomial_sample(SplitMix64 &rng, const std::vector<std::uint64_t> &counts) {
  std::uint64_t items_left = 0;
  for (auto c : counts) items_left += c;
  std::uint64_t mass_left = items_left;  // the cells not yet drawn hold this share of the original items
  std::vector<std::uint64_t> out(counts.size(), 0);
  for (std::size_t i = 0; i < counts.size() && items_left > 0; ++i) {
    if (counts[i] == 0) continue;
    const std::uint64_t x =
        counts[i] == mass_left
            ? items_left
            : binomial_sample(rng, items_left, static_cast<double>(counts[i]) / static_cast<double>(mass_left));
    out[i] = x;
    items_left -= x;
    mass_left -= counts[i];
  }
  return out;
}

}  // namespace evalgraph::stats
