// The statistics of `evalgraph compare` against values worked out by hand (binomial and signed-rank
// distributions counted on paper; see each case).
#include <catch2/catch.hpp>
#include <cmath>
#include <random>

#include "stats/stats.h"

using namespace evalgraph::stats;

TEST_CASE("exact McNemar p for known tables") {
  // b = 2, c = 8: 2 * P(X <= 2 | n = 10, 1/2) = 2 * (1 + 10 + 45) / 1024
  CHECK(mcnemar_exact_p(2, 8) == Approx(112.0 / 1024).epsilon(1e-12));
  CHECK(mcnemar_exact_p(8, 2) == Approx(112.0 / 1024).epsilon(1e-12));
  // b = 1, c = 9: 2 * (1 + 10) / 1024
  CHECK(mcnemar_exact_p(1, 9) == Approx(22.0 / 1024).epsilon(1e-12));
  // b = 0, c = 6: 2 / 64
  CHECK(mcnemar_exact_p(0, 6) == Approx(2.0 / 64).epsilon(1e-12));
  // balanced tables and no discordant pairs: p = 1
  CHECK(mcnemar_exact_p(5, 5) == 1.0);
  CHECK(mcnemar_exact_p(0, 0) == 1.0);
  // large tables stay finite: b = 400, c = 600 is far beyond chance
  double p = mcnemar_exact_p(400, 600);
  CHECK(p > 0);
  CHECK(p < 1e-9);
}

TEST_CASE("Wilcoxon signed-rank: exact p for small hand-worked samples") {
  // All five positive: W+ = 15 is the maximum, P(W+ >= 15) = 1/32, two-sided 2/32.
  CHECK(wilcoxon_signed_rank_p({1, 2, 3, 4, 5}) == Approx(0.0625).epsilon(1e-12));
  // Zeros are dropped (Wilcoxon's method): the same p.
  CHECK(wilcoxon_signed_rank_p({0, 0, 0.5, 1, 1.5, 2, 2.5}) == Approx(0.0625).epsilon(1e-12));
  // d = -1, 2, 3, -4, 5, 6: W- = 1 + 4 = 5; 10 of the 64 sign patterns have a rank sum <= 5
  // ({}, {1}, {2}, {3}, {1,2}, {4}, {1,3}, {5}, {1,4}, {2,3}), so p = 2 * 10/64.
  CHECK(wilcoxon_signed_rank_p({-1, 2, 3, -4, 5, 6}) == Approx(0.3125).epsilon(1e-12));
  // Ties: |d| = 1, 1, 1, 2 get mid ranks 2, 2, 2, 4; W+ = 2 + 2 + 4 = 8 of 10. Sign patterns with
  // W+ >= 8: {2,2,4} three ways and {2,2,2,4}: 4 of 16, two-sided p = 0.5.
  CHECK(wilcoxon_signed_rank_p({1, 1, -1, 2}) == Approx(0.5).epsilon(1e-12));
  // Symmetric: p = 1.
  CHECK(wilcoxon_signed_rank_p({-1, 1}) == Approx(1.0));
  CHECK(wilcoxon_signed_rank_p({0, 0, 0}) == 1.0);
  CHECK(wilcoxon_signed_rank_p({}) == 1.0);
}

TEST_CASE("Wilcoxon signed-rank: the normal approximation beyond the exact range agrees with the exact p") {
  // The same shifted sample, once just inside the exact range and once with each value twice (beyond it):
  // both must say clearly significant, and a symmetric sample not at all.
  std::mt19937_64 g(7);
  std::normal_distribution<double> nd(0.15, 1.0);
  std::vector<double> d;
  for (std::size_t i = 0; i < kWilcoxonExactMax; ++i) d.push_back(nd(g));
  double exact = wilcoxon_signed_rank_p(d);
  std::vector<double> dd = d;
  dd.insert(dd.end(), d.begin(), d.end());
  double approx = wilcoxon_signed_rank_p(dd);
  CHECK(exact < 0.05);
  CHECK(approx < exact);
  std::vector<double> sym;
  for (std::size_t i = 1; i <= 500; ++i) {
    sym.push_back(static_cast<double>(i));
    sym.push_back(-static_cast<double>(i));
  }
  CHECK(wilcoxon_signed_rank_p(sym) == Approx(1.0));
  // n = 20 exact vs normal: the exact two-sided p of all-positive is 2 / 2^20.
  std::vector<double> pos;
  for (int i = 1; i <= 20; ++i) pos.push_back(i);
  CHECK(wilcoxon_signed_rank_p(pos) == Approx(2.0 / 1048576).epsilon(1e-9));
}

TEST_CASE("paired bootstrap interval") {
  // No difference: [0, 0].
  Interval z = paired_bootstrap_ci({0, 0, 0, 0});
  CHECK(z.low == 0);
  CHECK(z.high == 0);
  Interval c = paired_bootstrap_ci({0.25, 0.25, 0.25});
  CHECK(c.low == 0.25);
  CHECK(c.high == 0.25);
  // d = {0, 1}: a resample mean is 0, 0.5 or 1 with probability 1/4, 1/2, 1/4: the 2.5 % and 97.5 %
  // quantiles are 0 and 1.
  Interval two = paired_bootstrap_ci({0, 1});
  CHECK(two.low == 0);
  CHECK(two.high == 1);
  // Fixed seed: the same interval every time; a different seed gives a (slightly) different one.
  std::vector<double> d;
  std::mt19937_64 g(1);
  std::normal_distribution<double> nd(0.3, 1.0);
  for (int i = 0; i < 200; ++i) d.push_back(nd(g));
  Interval x = paired_bootstrap_ci(d), y = paired_bootstrap_ci(d);
  CHECK(x.low == y.low);
  CHECK(x.high == y.high);
  // It brackets the mean and is about ±1.96·sd/√n wide (sd ≈ 1, n = 200: ±0.139).
  double m = mean(d);
  CHECK(x.low < m);
  CHECK(x.high > m);
  CHECK((x.high - x.low) / 2 == Approx(1.96 / std::sqrt(200.0)).epsilon(0.15));
  CHECK(paired_bootstrap_ci({}).low == 0);
}
