// The agreement statistics (engine/stats/agreement.h) against values worked out by hand (each case shows its
// sums), their "not defined" cases, the seeded samplers behind the bootstraps, and a timing at n = 1,000,000
// printed for information. agreement_reference.py checks the same functions against scipy and scikit-learn
// on random data.
#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>

#include "stats/agreement.h"
#include "stats/stats.h"

using namespace evalgraph::stats;

namespace {

const double z95 = normal_quantile(0.975);

bool interval_holds(const Stat &s) { return s.low <= s.value && s.value <= s.high; }

}  // namespace

TEST_CASE("confusion matrix: rows are the metric, columns the label", "[agreement]") {
  const Confusion c = confusion_matrix({0, 1, 1, 2, 0}, {0, 1, 0, 2, 2}, 3);
  CHECK(c == Confusion{{1, 0, 1}, {1, 1, 0}, {0, 0, 1}});
  CHECK_THROWS_AS(confusion_matrix({0, 3}, {0, 1}, 3), std::invalid_argument);
  CHECK_THROWS_AS(confusion_matrix({0, 1}, {0}, 3), std::invalid_argument);
  CHECK_THROWS_AS(accuracy(Confusion{{1, 2}, {3}}), std::invalid_argument);
  CHECK_THROWS_AS(precision(Confusion{{1, 2}, {3, 4}}, 2), std::invalid_argument);
}

TEST_CASE("accuracy, precision, recall and F1 of a 2x2 table, with Wilson intervals", "[agreement]") {
  // metric rows, label columns: [[20, 5], [10, 15]]; positive = 1: tp = 15, fp = 10 (metric 1, label 0), fn = 5.
  const Confusion c{{20, 5}, {10, 15}};
  const Stat acc = accuracy(c);
  CHECK(acc.value == Approx(35.0 / 50).epsilon(1e-12));
  CHECK(acc.low == Approx(wilson_interval(35, 50, 0.95).low).epsilon(1e-12));
  CHECK(acc.high == Approx(wilson_interval(35, 50, 0.95).high).epsilon(1e-12));
  CHECK(acc.method == "Wilson score");
  CHECK(acc.n == 50);
  // Wilson for 7 of 10 (a textbook value): [0.3968, 0.8922].
  const Stat seven = accuracy(Confusion{{7, 0}, {3, 0}});
  CHECK(seven.low == Approx(0.3968).margin(1e-4));
  CHECK(seven.high == Approx(0.8922).margin(1e-4));
  CHECK(precision(c, 1).value == Approx(15.0 / 25).epsilon(1e-12));
  CHECK(recall(c, 1).value == Approx(15.0 / 20).epsilon(1e-12));
  CHECK(precision(c, 1).low == Approx(wilson_interval(15, 25, 0.95).low).epsilon(1e-12));
  CHECK(recall(c, 0).value == Approx(20.0 / 30).epsilon(1e-12));
  const Stat f = f1(c, 1);  // 2 tp / (2 tp + fp + fn) = 30 / 45
  CHECK(f.value == Approx(2.0 / 3).epsilon(1e-12));
  CHECK(interval_holds(f));
  CHECK(f.low > 0.4);
  CHECK(f.high < 0.85);
  CHECK(f.method.find("bootstrap") != std::string::npos);
  CHECK(f.method.find("2000 resamples, seed 20261129") != std::string::npos);
}

TEST_CASE("Cohen's kappa and its Fleiss-Cohen-Everitt interval, worked by hand", "[agreement]") {
  // p = [[.4, .1], [.2, .3]], rows .5/.5, columns .6/.4: po = .7, pe = .5·.6 + .5·.4 = .5, kappa = .4.
  // Variance (FCE 1969): diagonal .4(1 - 1.1·.6)² + .3(1 - .9·.6)² = .04624 + .06348; off the diagonal
  // .6²(.1·(.6 + .5)² + .2·(.4 + .5)²) = .10188; less (.4 - .5·.6)² = .01: .2016 / (50 · .5²) = .016128.
  const Confusion c{{20, 5}, {10, 15}};
  const Stat k = cohen_kappa(c);
  REQUIRE(k.defined);
  CHECK(k.value == Approx(0.4).epsilon(1e-12));
  const double half = z95 * std::sqrt(0.016128);
  CHECK(k.low == Approx(0.4 - half).epsilon(1e-10));
  CHECK(k.high == Approx(0.4 + half).epsilon(1e-10));
  CHECK(k.method.find("Fleiss, Cohen & Everitt") != std::string::npos);
  // Two categories: quadratic weights are the plain ones.
  const Stat w = weighted_kappa(c);
  CHECK(w.value == Approx(k.value).epsilon(1e-12));
  CHECK(w.low == Approx(k.low).epsilon(1e-10));
  // Three ordered categories: a near miss costs a quarter of a far one. metric/label pairs (0,0) (1,1) (2,2)
  // (0,1) (2,1): observed disagreement (1/4 + 1/4)/5 = .1; rows (2, 1, 2)/5, columns (1, 3, 1)/5, expected
  // sum d_ij r_i c_j = (2·3·.25 + 2·1·1 + 1·1·.25 + 1·1·.25 + 2·1·1 + 2·3·.25)/25 = 7.5/25 = .3: 1 - .1/.3.
  const Stat w3 = weighted_kappa(confusion_matrix({0, 1, 2, 0, 2}, {0, 1, 2, 1, 1}, 3));
  CHECK(w3.value == Approx(1 - 0.1 / 0.3).epsilon(1e-12));
  // Perfect agreement: kappa 1 with zero variance.
  const Stat perfect = cohen_kappa(Confusion{{5, 0, 0}, {0, 3, 0}, {0, 0, 2}});
  CHECK(perfect.value == 1.0);
  CHECK(perfect.low == Approx(1.0));
  CHECK(perfect.high == 1.0);
}

TEST_CASE("balanced accuracy: the mean recall over the label's classes", "[agreement]") {
  // labels 0, 1, 1; metric 0, 2, 1: recall of class 0 is 1, of class 1 one half; class 2 only in the metric.
  const Stat b = balanced_accuracy(confusion_matrix({0, 2, 1}, {0, 1, 1}, 3));
  CHECK(b.value == Approx(0.75).epsilon(1e-12));
  CHECK(interval_holds(b));
  // One label class: its recall (scikit-learn gives it too).
  CHECK(balanced_accuracy(confusion_matrix({0, 1, 0, 0}, {0, 0, 0, 0}, 2)).value == Approx(0.75));
  // The same matrix gives the same interval: the bootstrap is seeded.
  const Confusion c{{30, 12}, {9, 41}};
  CHECK(balanced_accuracy(c).low == balanced_accuracy(c).low);
  CHECK(balanced_accuracy(c).high == balanced_accuracy(c).high);
}

TEST_CASE("classification: what is not defined says why", "[agreement]") {
  const Confusion none{{0, 0}, {0, 0}};
  CHECK_FALSE(accuracy(none).defined);
  CHECK(accuracy(none).why == "no items");
  CHECK_FALSE(balanced_accuracy(none).defined);
  const Confusion one_class{{12, 0}, {0, 0}};  // both codings say 0 throughout
  CHECK(accuracy(one_class).value == 1.0);
  const Stat k = cohen_kappa(one_class);
  CHECK_FALSE(k.defined);
  CHECK(k.why.find("one class only") != std::string::npos);
  CHECK(k.n == 12);
  CHECK_FALSE(weighted_kappa(one_class).defined);
  CHECK_FALSE(weighted_kappa(Confusion{{4}}).defined);
  CHECK(weighted_kappa(Confusion{{4}}).why.find("two categories") != std::string::npos);
  CHECK_FALSE(cohen_kappa(Confusion{{1, 0}, {0, 0}}).defined);  // n = 1: chance agreement is 1
  CHECK_FALSE(precision(one_class, 1).defined);
  CHECK(precision(one_class, 1).why.find("no positives") != std::string::npos);
  CHECK_FALSE(recall(one_class, 1).defined);
  CHECK_FALSE(f1(one_class, 1).defined);
  // Only the label has positives: precision is not defined, recall and F1 are 0.
  const Confusion missed{{5, 3}, {0, 0}};
  CHECK_FALSE(precision(missed, 1).defined);
  CHECK(recall(missed, 1).value == 0.0);
  CHECK(f1(missed, 1).value == 0.0);
}

TEST_CASE("AUROC and DeLong's interval, worked by hand", "[agreement]") {
  // positives .9 .8 .4, negatives .7 .4 .1: of 9 pairs the positive wins 3 + 3 + 1.5 (a tie counts one half).
  // Components: V10 = (1, 1, .5), V01 = (2/3, 2.5/3, 1); S10 = 1/12, S01 = 1/36; var = S10/3 + S01/3 = 1/27.
  const Stat a = auroc({0.9, 0.7, 0.8, 0.4, 0.4, 0.1}, {true, false, true, true, false, false});
  REQUIRE(a.defined);
  CHECK(a.value == Approx(7.5 / 9).epsilon(1e-12));
  const double auc = 7.5 / 9, se_logit = std::sqrt(1.0 / 27) / (auc * (1 - auc));
  const double logit = std::log(auc / (1 - auc));
  CHECK(a.low == Approx(1 / (1 + std::exp(-(logit - z95 * se_logit)))).epsilon(1e-10));
  CHECK(a.high == Approx(1 / (1 + std::exp(-(logit + z95 * se_logit)))).epsilon(1e-10));
  CHECK(a.method.find("DeLong") != std::string::npos);
  CHECK(a.method.find("logit") != std::string::npos);
  // Perfect separation: 1, with zero variance. One class: not defined. One positive: no interval.
  const Stat perfect = auroc({1, 2, 3, 4}, {false, false, true, true});
  CHECK(perfect.value == 1.0);
  CHECK(perfect.low == 1.0);
  CHECK_FALSE(auroc({1, 2, 3}, {true, true, true}).defined);
  CHECK(auroc({1, 2, 3}, {true, true, true}).why.find("one class") != std::string::npos);
  const Stat single = auroc({1, 2, 3}, {false, true, false});
  CHECK(single.value == 0.5);
  CHECK(single.low == 0.5);
  CHECK(single.method.find("no interval") != std::string::npos);
  CHECK_FALSE(auroc({1, NAN}, {true, false}).defined);
  CHECK_THROWS_AS(auroc({1, 2}, {true}), std::invalid_argument);
}

TEST_CASE("the threshold that maximises balanced accuracy, and its cross-validated estimate", "[agreement]") {
  // Scores 1..6, positives at 3, 5, 6. Candidates: 1 (BA .5), 1.5 (.667), 2.5 (tp 3, tn 2: .833), 3.5 (.667),
  // 4.5 (tp 2, tn 3: .833, a tie: the lower threshold stays), 5.5 (.667).
  const std::vector<double> score{1, 2, 3, 4, 5, 6};
  const std::vector<bool> positive{false, false, true, false, true, true};
  const ThresholdChoice t = best_threshold(score, positive, 3);
  CHECK(t.threshold == 2.5);
  CHECK(t.balanced_accuracy_in_sample.value == Approx(5.0 / 6).epsilon(1e-12));
  CHECK(t.balanced_accuracy_in_sample.method.find("in sample") != std::string::npos);
  REQUIRE(t.balanced_accuracy_cv.defined);  // three folds of one positive and one negative each
  CHECK(t.balanced_accuracy_cv.method.find("3-fold") != std::string::npos);
  CHECK(interval_holds(t.balanced_accuracy_cv));
  // Five folds need five items of each class.
  const ThresholdChoice five = best_threshold(score, positive);
  CHECK(five.balanced_accuracy_in_sample.defined);
  CHECK_FALSE(five.balanced_accuracy_cv.defined);
  CHECK(five.balanced_accuracy_cv.why.find("fewer than 5 items") != std::string::npos);
  const ThresholdChoice one = best_threshold(score, std::vector<bool>(6, true));
  CHECK_FALSE(one.balanced_accuracy_in_sample.defined);
  CHECK_FALSE(one.balanced_accuracy_cv.defined);
  // Separable scores: the cross-validated estimate finds the separation too.
  std::vector<double> s;
  std::vector<bool> p;
  for (int i = 0; i < 100; ++i) s.push_back(i), p.push_back(i >= 60);
  const ThresholdChoice sep = best_threshold(s, p);
  CHECK(sep.threshold == 59.5);
  CHECK(sep.balanced_accuracy_cv.value > 0.95);
}

TEST_CASE("Pearson, Spearman and Kendall's tau-b with Fisher z intervals, worked by hand", "[agreement]") {
  // x = 1..5, y = 2 4 5 4 5. Pearson: sum dx dy = 6, sum dx² = 10, sum dy² = 6: r = 6/sqrt(60).
  const std::vector<double> x{1, 2, 3, 4, 5}, y{2, 4, 5, 4, 5};
  const Stat r = pearson(x, y);
  CHECK(r.value == Approx(6 / std::sqrt(60.0)).epsilon(1e-12));
  const double zr = std::atanh(r.value);
  CHECK(r.low == Approx(std::tanh(zr - z95 / std::sqrt(2.0))).epsilon(1e-10));
  CHECK(r.high == Approx(std::tanh(zr + z95 / std::sqrt(2.0))).epsilon(1e-10));
  // Spearman: y's average ranks 1 2.5 4.5 2.5 4.5; sum dx dy = 7, sum dy² = 9: 7/sqrt(90).
  const Stat rho = spearman(x, y);
  CHECK(rho.value == Approx(7 / std::sqrt(90.0)).epsilon(1e-12));
  CHECK(rho.low == Approx(std::tanh(std::atanh(rho.value) - z95 * std::sqrt(1.06 / 2))).epsilon(1e-10));
  // Kendall: 7 concordant, 1 discordant, 2 pairs tied in y, none in x: 6 / sqrt(10 · 8).
  const Stat tau = kendall_tau_b(x, y);
  CHECK(tau.value == Approx(6 / std::sqrt(80.0)).epsilon(1e-12));
  CHECK(tau.high == Approx(std::tanh(std::atanh(tau.value) + z95 * std::sqrt(0.437 / 1))).epsilon(1e-10));
  CHECK(average_ranks({10, 20, 10, 30}) == std::vector<double>{1.5, 3, 1.5, 4});
  // Reversed order: tau = -1 exactly, and the interval is the point.
  const Stat reversed = kendall_tau_b({1, 2, 3, 4, 5, 6}, {6, 5, 4, 3, 2, 1});
  CHECK(reversed.value == -1.0);
  CHECK(reversed.low == -1.0);
}

TEST_CASE("correlations: what is not defined says why", "[agreement]") {
  CHECK_FALSE(pearson({1}, {2}).defined);
  CHECK(pearson({1}, {2}).why == "n < 2");
  CHECK(pearson({}, {}).why == "n < 2");
  for (const Stat &s :
       {pearson({3, 3, 3}, {1, 2, 3}), spearman({3, 3, 3}, {1, 2, 3}), kendall_tau_b({3, 3, 3}, {1, 2, 3})}) {
    CHECK_FALSE(s.defined);
    CHECK(s.why.find("all values equal") != std::string::npos);
  }
  CHECK(kendall_tau_b({1, 2, 3}, {5, 5, 5}).why == "all values equal (second series)");
  // n = 3: defined, but Fisher z needs n > 3.
  const Stat small = pearson({1, 2, 3}, {1, 3, 2});
  CHECK(small.value == Approx(0.5));
  CHECK(small.low == small.value);
  CHECK(small.method.find("no interval") != std::string::npos);
  CHECK_THROWS_AS(spearman({1, 2}, {1}), std::invalid_argument);
  CHECK_FALSE(pearson({1, 2, INFINITY}, {1, 2, 3}).defined);
  CHECK(kendall_tau_b({1, 2, INFINITY}, {1, 2, 3}).value == 1.0);  // ranks only: infinity is just the largest
  CHECK_THROWS_AS(pearson({1, 2, 3, 4}, {1, 3, 2, 4}, 1.0), std::invalid_argument);
  CHECK_THROWS_AS(accuracy(Confusion{{1, 0}, {0, 1}}, 0), std::invalid_argument);
  CHECK_THROWS_AS(krippendorff_alpha({{1, 2}}, AlphaLevel::nominal, 95), std::invalid_argument);
}

TEST_CASE("Krippendorff's alpha: Krippendorff's (2011) worked example", "[agreement]") {
  // Four coders, twelve units, missing values left out; unit 12 has one value and does not count.
  const std::vector<std::vector<double>> units{{1, 1, 1},    {2, 2, 3, 2}, {3, 3, 3, 3}, {3, 3, 3, 3},
                                               {2, 2, 2, 2}, {1, 2, 3, 4}, {4, 4, 4, 4}, {1, 1, 2, 1},
                                               {2, 2, 2, 2}, {5, 5, 5},    {1, 1},       {3}};
  const Stat nominal = krippendorff_alpha(units, AlphaLevel::nominal);
  const Stat ordinal = krippendorff_alpha(units, AlphaLevel::ordinal);
  const Stat interval = krippendorff_alpha(units, AlphaLevel::interval);
  CHECK(nominal.value == Approx(0.743).margin(0.0005));
  CHECK(ordinal.value == Approx(0.815).margin(0.0005));
  CHECK(interval.value == Approx(0.849).margin(0.0005));
  CHECK(nominal.n == 11);
  for (const Stat &s : {nominal, ordinal, interval}) {
    CHECK(interval_holds(s));
    CHECK(s.high <= 1.0);
    CHECK(s.method.find("bootstrap over units") != std::string::npos);
  }
  // Ten copies of every unit: nearly the same alpha (its expected disagreement has n(n - 1), not n², below),
  // an interval about sqrt(10) times narrower, the bootstrap drawing one multinomial over the 9 groups.
  std::vector<std::vector<double>> copies;
  for (int i = 0; i < 10; ++i) copies.insert(copies.end(), units.begin(), units.end());
  const Stat many = krippendorff_alpha(copies, AlphaLevel::interval);
  CHECK(many.value == Approx(interval.value).margin(0.01));
  const double ratio = (interval.high - interval.low) / (many.high - many.low);
  CHECK(ratio > std::sqrt(10.0) / 2);
  CHECK(ratio < std::sqrt(10.0) * 2);
  CHECK(many.method.find("110 pairable units in 9 groups") != std::string::npos);
}

TEST_CASE("Krippendorff's alpha: what is not defined says why, and a bounded bootstrap", "[agreement]") {
  CHECK_FALSE(krippendorff_alpha({}, AlphaLevel::nominal).defined);
  const Stat lonely = krippendorff_alpha({{1}, {2}, {3}}, AlphaLevel::nominal);
  CHECK_FALSE(lonely.defined);
  CHECK(lonely.why.find("fewer than two pairable values") != std::string::npos);
  const Stat same = krippendorff_alpha({{4, 4}, {4, 4, 4}, {2}}, AlphaLevel::interval);
  CHECK_FALSE(same.defined);
  CHECK(same.why.find("no variation") != std::string::npos);
  CHECK_FALSE(krippendorff_alpha({{1, INFINITY}, {2, 2}}, AlphaLevel::interval).defined);
  CHECK(krippendorff_alpha({{1, INFINITY}, {2, 2}}, AlphaLevel::ordinal).defined);
  // Perfect agreement with variation: alpha = 1.
  CHECK(krippendorff_alpha({{1, 1}, {2, 2, 2}}, AlphaLevel::ordinal).value == Approx(1.0));
  // 200,000 distinct units: the resamples are cut to the budget and the interval is the normal one.
  std::mt19937_64 g(3);
  std::normal_distribution<double> noise;
  std::vector<std::vector<double>> units(200000);
  for (auto &u : units) {
    const double truth = noise(g);
    u = {truth + noise(g), truth + noise(g)};
  }
  const Stat big = krippendorff_alpha(units, AlphaLevel::interval);
  CHECK(big.value == Approx(0.5).margin(0.01));  // reliability var(truth) / (var(truth) + var(noise))
  CHECK(interval_holds(big));
  CHECK(big.high - big.low < 0.02);
  CHECK(big.method.find("normal bootstrap") != std::string::npos);
  CHECK(big.method.find("resamples cut") != std::string::npos);
}

TEST_CASE("the seeded binomial and multinomial samplers", "[agreement]") {
  // Mean and variance of many draws, on both sides of the inversion bound and past p = 1/2 (symmetry).
  struct Case {
    std::uint64_t n;
    double p;
  };
  SplitMix64 rng{42};
  for (const Case c : {Case{50, 0.1}, Case{10000, 0.3}, Case{1000000, 1e-5}, Case{40, 0.9}, Case{5000, 0.97}}) {
    const int draws = 20000;
    double sum = 0, squares = 0;
    for (int i = 0; i < draws; ++i) {
      const auto x = static_cast<double>(binomial_sample(rng, c.n, c.p));
      CHECK(x <= static_cast<double>(c.n));
      sum += x, squares += x * x;
    }
    const double mean = sum / draws, var = squares / draws - mean * mean;
    const double nn = static_cast<double>(c.n), expect_var = nn * c.p * (1 - c.p);
    INFO("n = " << c.n << ", p = " << c.p);
    CHECK(mean == Approx(nn * c.p).margin(5 * std::sqrt(expect_var / draws)));
    CHECK(var == Approx(expect_var).epsilon(0.05));
  }
  CHECK(binomial_sample(rng, 10, 0.0) == 0);
  CHECK(binomial_sample(rng, 10, 1.0) == 10);
  const std::vector<std::uint64_t> cells{0, 7, 0, 1000, 3};
  const auto drawn = multinomial_sample(rng, cells);
  CHECK(drawn[0] == 0);
  CHECK(drawn[2] == 0);
  CHECK(drawn[1] + drawn[3] + drawn[4] == 1010);
}

TEST_CASE("timing at n = 1,000,000 (information only)", "[agreement]") {
  const std::size_t n = 1000000;
  std::mt19937_64 g(7);
  std::normal_distribution<double> noise;
  std::vector<double> x(n), y(n), score(n);
  std::vector<bool> positive(n);
  std::vector<std::vector<double>> ratings(n);
  std::uniform_int_distribution<int> scale(1, 5);
  for (std::size_t i = 0; i < n; ++i) {
    x[i] = noise(g), y[i] = 0.5 * x[i] + noise(g);
    positive[i] = noise(g) > 0.3, score[i] = noise(g) + positive[i];
    const int r = scale(g);
    ratings[i] = {double(r), double(std::min(5, r + (scale(g) > 4))), double(scale(g) > 1 ? r : scale(g))};
  }
  auto timed = [](const char *what, auto f) {
    const auto start = std::chrono::steady_clock::now();
    const Stat s = f();
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    char line[160];
    std::snprintf(line, sizeof line, "%-36s %7.0f ms  %.4f [%.4f, %.4f]", what, ms, s.value, s.low, s.high);
    WARN(line);
    CHECK(s.defined);
  };
  timed("auroc (DeLong)", [&] { return auroc(score, positive); });
  timed("best_threshold (5-fold CV)", [&] { return best_threshold(score, positive).balanced_accuracy_cv; });
  timed("pearson", [&] { return pearson(x, y); });
  timed("spearman", [&] { return spearman(x, y); });
  timed("kendall tau-b", [&] { return kendall_tau_b(x, y); });
  timed("alpha ordinal, 3 coders on a 5-point scale", [&] { return krippendorff_alpha(ratings, AlphaLevel::ordinal); });
}
