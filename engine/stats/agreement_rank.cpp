// Rank statistics of agreement: average ranks, AUROC with DeLong's interval, the threshold that maximises
// balanced accuracy (with its cross-validated estimate), Pearson's r, Spearman's rho and Kendall's tau-b.
// Each is one sort (O(n log n)) and linear passes.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <utility>

#include "stats/agreement.h"
#include "stats/agreement_internal.h"
#include "stats/stats.h"

namespace evalgraph::stats {

namespace {

// Same lengths and a level in (0, 1), or std::invalid_argument.
void check_arguments(std::size_t a, std::size_t b, const char *what, double level) {
  detail::require_level(level);
  if (a != b)
    throw std::invalid_argument(std::string(what) + ": " + std::to_string(a) + " values against " + std::to_string(b));
}

bool any_nan(const std::vector<double> &v) {
  return std::any_of(v.begin(), v.end(), [](double x) { return std::isnan(x); });
}

bool any_infinite(const std::vector<double> &v) {
  return std::any_of(v.begin(), v.end(), [](double x) { return std::isinf(x); });
}

// (value, index) pairs sorted by value, then index: one cache-friendly sort for every rank computation here.
std::vector<std::pair<double, std::size_t>> sorted_with_index(const std::vector<double> &v) {
  std::vector<std::pair<double, std::size_t>> s(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) s[i] = {v[i], i};
  std::sort(s.begin(), s.end());
  return s;
}

// Fisher's z interval of a correlation r with the given variance of atanh(r); |r| = 1 gives [r, r].
Stat fisher_z(double r, std::size_t n, double variance, std::size_t min_n, const std::string &name, double level) {
  if (n <= min_n || std::fabs(r) >= 1) {
    Stat s = detail::interval_stat(r, r, r, "", n);
    s.method = std::fabs(r) >= 1 ? name + ": |r| = 1, no interval"
                                 : "no interval: " + name + " needs n > " + std::to_string(min_n);
    return s;
  }
  const double z = std::atanh(r), half = normal_quantile(0.5 + level / 2) * std::sqrt(variance);
  return detail::interval_stat(r, std::tanh(z - half), std::tanh(z + half), name, n);
}

// Pearson's r of x and y; nullopt reasons are filled into `why`.
std::optional<double> pearson_value(const std::vector<double> &x, const std::vector<double> &y, std::string &why) {
  const std::size_t n = x.size();
  auto constant = [](const std::vector<double> &v) {
    return std::all_of(v.begin(), v.end(), [&](double t) { return t == v[0]; });
  };
  if (n < 2)
    why = "n < 2";
  else if (constant(x))
    why = "all values equal (first series)";
  else if (constant(y))
    why = "all values equal (second series)";
  if (!why.empty()) return std::nullopt;
  long double sx = 0, sy = 0;
  for (std::size_t i = 0; i < n; ++i) sx += x[i], sy += y[i];
  const long double mx = sx / static_cast<long double>(n), my = sy / static_cast<long double>(n);
  long double sxx = 0, syy = 0, sxy = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const long double dx = x[i] - mx, dy = y[i] - my;
    sxx += dx * dx, syy += dy * dy, sxy += dx * dy;
  }
  const double r = static_cast<double>(sxy / std::sqrt(sxx * syy));
  return std::clamp(r, -1.0, 1.0);
}

// Pairs i < j with v[i] > v[j], counted by a bottom-up merge sort (sorts v).
std::uint64_t count_inversions(std::vector<double> &v) {
  const std::size_t n = v.size();
  std::vector<double> buffer(n);
  std::uint64_t inversions = 0;
  for (std::size_t width = 1; width < n; width *= 2) {
    for (std::size_t lo = 0; lo < n; lo += 2 * width) {
      const std::size_t mid = std::min(lo + width, n), hi = std::min(lo + 2 * width, n);
      std::size_t i = lo, j = mid, out = lo;
      while (i < mid && j < hi) {
        if (v[j] < v[i]) {
          inversions += mid - i;  // v[j] jumps every element left in the left run
          buffer[out++] = v[j++];
        } else {
          buffer[out++] = v[i++];
        }
      }
      while (i < mid) buffer[out++] = v[i++];
      while (j < hi) buffer[out++] = v[j++];
    }
    v.swap(buffer);
  }
  return inversions;
}

// Pairs tied within runs of equal keys of a sorted sequence: sum t(t-1)/2.
template <class It, class Eq>
std::uint64_t tied_pairs(It begin, It end, Eq equal) {
  std::uint64_t ties = 0;
  for (It i = begin; i != end;) {
    It j = i;
    while (j != end && equal(*j, *i)) ++j;
    const auto t = static_cast<std::uint64_t>(j - i);
    ties += t * (t - 1) / 2;
    i = j;
  }
  return ties;
}

}  // namespace

std::vector<double> average_ranks(const std::vector<double> &v) {
  const auto sorted = sorted_with_index(v);
  std::vector<double> ranks(v.size());
  for (std::size_t i = 0; i < sorted.size();) {
    std::size_t j = i;
    while (j + 1 < sorted.size() && sorted[j + 1].first == sorted[i].first) ++j;
    const double rank = (static_cast<double>(i) + static_cast<double>(j)) / 2 + 1;  // mean of ranks i+1 .. j+1
    for (std::size_t t = i; t <= j; ++t) ranks[sorted[t].second] = rank;
    i = j + 1;
  }
  return ranks;
}

Stat pearson(const std::vector<double> &x, const std::vector<double> &y, double level) {
  check_arguments(x.size(), y.size(), "pearson", level);
  const std::size_t n = x.size();
  if (any_nan(x) || any_nan(y)) return Stat::undefined("a value is not a number", n);
  if (any_infinite(x) || any_infinite(y)) return Stat::undefined("a value is infinite", n);
  std::string why;
  const auto r = pearson_value(x, y, why);
  if (!r) return Stat::undefined(why, n);
  const double variance = n > 3 ? 1.0 / static_cast<double>(n - 3) : 0;
  return fisher_z(*r, n, variance, 3, "Fisher z (SE 1/sqrt(n-3))", level);
}

Stat spearman(const std::vector<double> &x, const std::vector<double> &y, double level) {
  check_arguments(x.size(), y.size(), "spearman", level);
  const std::size_t n = x.size();
  if (any_nan(x) || any_nan(y)) return Stat::undefined("a value is not a number", n);
  std::string why;
  const auto r = pearson_value(average_ranks(x), average_ranks(y), why);
  if (!r) return Stat::undefined(why, n);
  const double variance = n > 3 ? 1.06 / static_cast<double>(n - 3) : 0;
  return fisher_z(*r, n, variance, 3, "Fisher z (variance 1.06/(n-3), Fieller, Hartley & Pearson 1957)", level);
}

// Knight's (1966) algorithm: sort by (x, y); the discordant pairs are the inversions of y in that order.
Stat kendall_tau_b(const std::vector<double> &x, const std::vector<double> &y, double level) {
  check_arguments(x.size(), y.size(), "kendall", level);
  const std::size_t n = x.size();
  if (any_nan(x) || any_nan(y)) return Stat::undefined("a value is not a number", n);
  if (n < 2) return Stat::undefined("n < 2", n);
  std::vector<std::pair<double, double>> xy(n);
  for (std::size_t i = 0; i < n; ++i) xy[i] = {x[i], y[i]};
  std::sort(xy.begin(), xy.end());
  const std::uint64_t x_ties = tied_pairs(xy.begin(), xy.end(), [](auto &a, auto &b) { return a.first == b.first; });
  const std::uint64_t joint_ties = tied_pairs(xy.begin(), xy.end(), [](auto &a, auto &b) { return a == b; });
  std::vector<double> ys(n);
  for (std::size_t i = 0; i < n; ++i) ys[i] = xy[i].second;
  const std::uint64_t discordant = count_inversions(ys);
  const std::uint64_t y_ties = tied_pairs(ys.begin(), ys.end(), [](double a, double b) { return a == b; });
  const std::uint64_t pairs = static_cast<std::uint64_t>(n) * (n - 1) / 2;
  if (pairs == x_ties) return Stat::undefined("all values equal (first series)", n);
  if (pairs == y_ties) return Stat::undefined("all values equal (second series)", n);
  // concordant - discordant = pairs - x_ties - y_ties + joint_ties - 2 discordant
  const double difference =
      static_cast<double>(pairs - x_ties - y_ties + joint_ties) - 2.0 * static_cast<double>(discordant);
  // One square root of the product: equal tie counts give exactly ±1 where the data are in (reverse) order.
  const double tau = std::clamp(
      difference / std::sqrt(static_cast<double>(pairs - x_ties) * static_cast<double>(pairs - y_ties)), -1.0, 1.0);
  const double variance = n > 4 ? 0.437 / static_cast<double>(n - 4) : 0;
  return fisher_z(tau, n, variance, 4, "Fisher z (variance 0.437/(n-4), Fieller, Hartley & Pearson 1957)", level);
}

// The structural components of DeLong et al. (1988) from one sort, as in Sun & Xu's (2014) midrank algorithm:
// a positive's component is the share of negatives below it (ties one half), a negative's the share of
// positives above it; the AUROC is the mean of either, its variance S10/m + S01/n.
Stat auroc(const std::vector<double> &score, const std::vector<bool> &positive, double level) {
  check_arguments(score.size(), positive.size(), "auroc", level);
  const std::size_t total = score.size();
  if (any_nan(score)) return Stat::undefined("a score is not a number", total);
  const auto m = static_cast<std::size_t>(std::count(positive.begin(), positive.end(), true)), n = total - m;
  if (m == 0 || n == 0) return Stat::undefined("one class only: the labels need both positives and negatives", total);
  std::vector<std::pair<double, bool>> sorted(total);
  for (std::size_t i = 0; i < total; ++i) sorted[i] = {score[i], positive[i]};
  std::sort(sorted.begin(), sorted.end());
  // Walks the tie groups, calling each(positives, negatives, v10, v01) with the components of its members.
  auto for_each_group = [&](auto each) {
    double pos_below = 0, neg_below = 0;
    for (std::size_t i = 0; i < total;) {
      double a = 0, b = 0;
      std::size_t j = i;
      for (; j < total && sorted[j].first == sorted[i].first; ++j) (sorted[j].second ? a : b) += 1;
      each(a, b, (neg_below + b / 2) / static_cast<double>(n), 1 - (pos_below + a / 2) / static_cast<double>(m));
      pos_below += a, neg_below += b;
      i = j;
    }
  };
  long double sum10 = 0;
  for_each_group([&](double a, double, double v10, double) { sum10 += a * v10; });
  const double auc = static_cast<double>(sum10 / static_cast<long double>(m));
  const std::string name = "DeLong (midranks, Sun & Xu 2014), interval on the logit scale, within [0, 1]";
  if (m < 2 || n < 2) {
    Stat s = detail::interval_stat(auc, auc, auc, "", total);
    s.method = "no interval: DeLong needs two positives and two negatives";
    return s;
  }
  long double s10 = 0, s01 = 0;
  for_each_group([&](double a, double b, double v10, double v01) {
    s10 += a * (v10 - auc) * (v10 - auc);
    s01 += b * (v01 - auc) * (v01 - auc);
  });
  const double variance = static_cast<double>(s10 / (m - 1) / m + s01 / (n - 1) / n);
  if (auc <= 0 || auc >= 1 || variance <= 0) return detail::interval_stat(auc, auc, auc, name, total);
  const double logit = std::log(auc / (1 - auc));
  const double half = normal_quantile(0.5 + level / 2) * std::sqrt(variance) / (auc * (1 - auc));
  auto expit = [](double t) { return 1 / (1 + std::exp(-t)); };
  return detail::interval_stat(auc, expit(logit - half), expit(logit + half), name, total);
}

namespace {

struct Scored {
  double score;
  bool positive;
  int fold;
};

double midpoint(double a, double b) {
  const double t = a / 2 + b / 2;  // halves first: no overflow near the largest doubles
  return t > a ? t : b;            // neighbours one ulp apart have no double between them
}

// The threshold that maximises balanced accuracy over the items of `sorted` (ascending scores) outside fold
// `skip` (-1: all), `pos` positives and `neg` negatives among them. Candidates: the lowest score (everything
// positive) and the midpoints between neighbouring distinct scores, lowest first; a later one must do strictly
// better, so ties go to the lower threshold. Compared exactly in integers: tp·neg + tn·pos = 2·pos·neg·BA.
double best_cut(const std::vector<Scored> &sorted, int skip, std::uint64_t pos, std::uint64_t neg) {
  bool started = false;
  double previous = 0, threshold = 0;
  std::uint64_t best = 0, pos_at_or_below = 0, neg_at_or_below = 0;
  for (const Scored &item : sorted) {
    if (item.fold == skip) continue;
    if (!started) {
      started = true;
      threshold = previous = item.score;
      best = pos * neg;  // everything positive: tp = pos, tn = 0
    } else if (item.score != previous) {
      const std::uint64_t criterion = (pos - pos_at_or_below) * neg + neg_at_or_below * pos;
      if (criterion > best) best = criterion, threshold = midpoint(previous, item.score);
      previous = item.score;
    }
    ++(item.positive ? pos_at_or_below : neg_at_or_below);
  }
  return threshold;
}

// Stratified folds: each class's items shuffled (Fisher-Yates, positives first, one generator) and dealt out
// round-robin, so every fold holds floor or ceil of 1/folds of each class.
std::vector<int> stratified_folds(const std::vector<bool> &positive, int folds, std::uint64_t seed) {
  SplitMix64 rng{seed};
  std::vector<int> fold(positive.size(), 0);
  for (bool cls : {true, false}) {
    std::vector<std::size_t> members;
    for (std::size_t i = 0; i < positive.size(); ++i)
      if (positive[i] == cls) members.push_back(i);
    for (std::size_t i = members.size(); i-- > 1;) std::swap(members[i], members[rng.below(i + 1)]);
    for (std::size_t p = 0; p < members.size(); ++p)
      fold[members[p]] = static_cast<int>(p % static_cast<std::size_t>(folds));
  }
  return fold;
}

Stat prefixed(Stat s, const std::string &prefix) {
  if (s.defined) s.method = prefix + s.method;
  return s;
}

}  // namespace

ThresholdChoice best_threshold(const std::vector<double> &score, const std::vector<bool> &positive, int folds,
                               std::uint64_t seed, double level) {
  check_arguments(score.size(), positive.size(), "best_threshold", level);
  ThresholdChoice out;
  out.folds = folds;
  const std::size_t total = score.size();
  const auto pos = static_cast<std::uint64_t>(std::count(positive.begin(), positive.end(), true)), neg = total - pos;
  std::string why = any_nan(score)         ? "a score is not a number"
                    : pos == 0 || neg == 0 ? "one class only: the labels need both positives and negatives"
                                           : "";
  if (!why.empty()) {
    out.balanced_accuracy_in_sample = out.balanced_accuracy_cv = Stat::undefined(why, total);
    return out;
  }
  const std::vector<int> fold = folds >= 2 ? stratified_folds(positive, folds, seed) : std::vector<int>(total, 0);
  std::vector<Scored> sorted(total);
  for (std::size_t i = 0; i < total; ++i) sorted[i] = {score[i], positive[i], fold[i]};
  std::sort(sorted.begin(), sorted.end(), [](const Scored &a, const Scored &b) { return a.score < b.score; });
  out.threshold = best_cut(sorted, -1, pos, neg);
  Confusion in_sample(2, std::vector<std::uint64_t>(2, 0));  // [predicted positive][labelled positive]
  for (const Scored &item : sorted) ++in_sample[item.score >= out.threshold][item.positive];
  out.balanced_accuracy_in_sample =
      prefixed(balanced_accuracy(in_sample, level), "in sample (the threshold chosen on the same items); ");
  const std::string cv = std::to_string(folds) + "-fold cross-validation";
  if (folds < 2) {
    out.balanced_accuracy_cv = Stat::undefined(cv + " needs at least 2 folds", total);
  } else if (pos < static_cast<std::uint64_t>(folds) || neg < static_cast<std::uint64_t>(folds)) {
    out.balanced_accuracy_cv =
        Stat::undefined("a class has fewer than " + std::to_string(folds) + " items, too few for " + cv + " (" +
                            std::to_string(pos) + " positive, " + std::to_string(neg) + " negative)",
                        total);
  } else {
    std::vector<std::uint64_t> fold_pos(static_cast<std::size_t>(folds), 0), fold_neg(fold_pos);
    for (const Scored &item : sorted) ++(item.positive ? fold_pos : fold_neg)[static_cast<std::size_t>(item.fold)];
    Confusion pooled(2, std::vector<std::uint64_t>(2, 0));
    for (int f = 0; f < folds; ++f) {
      const auto fi = static_cast<std::size_t>(f);
      const double t = best_cut(sorted, f, pos - fold_pos[fi], neg - fold_neg[fi]);
      for (const Scored &item : sorted)
        if (item.fold == f) ++pooled[item.score >= t][item.positive];
    }
    out.balanced_accuracy_cv = prefixed(balanced_accuracy(pooled, level),
                                        "stratified " + cv + " (folds shuffled with seed " + std::to_string(seed) +
                                            "), the pooled out-of-fold predictions; interval: ");
  }
  return out;
}

}  // namespace evalgraph::stats
