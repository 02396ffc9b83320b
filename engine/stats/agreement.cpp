// Agreement statistics of two codings into categories: accuracy, balanced accuracy, Cohen's kappa (plain and
// quadratically weighted), precision, recall and F1, each with its interval; and the bootstrap of a confusion
// matrix that F1 and balanced accuracy use. Rank statistics live in agreement_rank.cpp, Krippendorff's alpha
// in agreement_alpha.cpp.
#include "stats/agreement.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>

#include "stats/agreement_internal.h"
#include "stats/stats.h"

namespace evalgraph::stats {

Stat Stat::undefined(std::string why, std::size_t n) {
  Stat s;
  s.why = std::move(why);
  s.n = n;
  return s;
}

namespace detail {

void require_level(double level) {
  if (!(level > 0 && level < 1))
    throw std::invalid_argument("confidence level " + std::to_string(level) + " is not between 0 and 1 (e.g. 0.95)");
}

Stat interval_stat(double value, double low, double high, std::string method, std::size_t n) {
  Stat s;
  s.defined = true;
  s.value = value;
  // A percentile interval may miss its own point by rounding (keep it inside); no interval at all gives the point.
  s.low = std::isnan(low) ? value : std::min(low, value);
  s.high = std::isnan(high) ? value : std::max(high, value);
  s.method = std::move(method);
  s.n = n;
  return s;
}

std::string bootstrap_method(const std::string &what, std::size_t resamples, std::uint64_t seed) {
  return "percentile bootstrap " + what + " (" + std::to_string(resamples) + " resamples, seed " +
         std::to_string(seed) + ")";
}

Interval percentile_interval(std::vector<double> &draws, double level) {
  if (draws.empty()) return {NAN, NAN};
  std::sort(draws.begin(), draws.end());
  const double tail = (1 - level) / 2;
  return {quantile_sorted(draws, tail), quantile_sorted(draws, 1 - tail)};
}

Interval bootstrap_confusion(const Confusion &c, const std::function<std::optional<double>(const Confusion &)> &stat,
                             double level, std::uint64_t seed) {
  const std::size_t k = c.size();
  std::vector<std::uint64_t> cells;
  cells.reserve(k * k);
  for (const auto &row : c) cells.insert(cells.end(), row.begin(), row.end());
  SplitMix64 rng{seed};
  std::vector<double> draws;
  draws.reserve(kAgreementResamples);
  Confusion resampled(k, std::vector<std::uint64_t>(k));
  for (int r = 0; r < kAgreementResamples; ++r) {
    const auto drawn = multinomial_sample(rng, cells);
    for (std::size_t i = 0; i < k; ++i)
      std::copy_n(drawn.begin() + static_cast<std::ptrdiff_t>(i * k), k, resampled[i].begin());
    if (auto v = stat(resampled)) draws.push_back(*v);  // a resample where it is not defined does not count
  }
  return percentile_interval(draws, level);
}

}  // namespace detail

namespace {

constexpr const char *kConfusionBootstrap = "of the confusion matrix, its cells resampled as one multinomial";

struct Margins {
  std::vector<std::uint64_t> metric, label;  // row sums (the metric's categories), column sums (the label's)
  std::uint64_t n = 0;
  std::uint64_t agree = 0;  // the diagonal
};

Margins margins_of(const Confusion &c) {
  Margins m;
  const std::size_t k = c.size();
  m.metric.assign(k, 0);
  m.label.assign(k, 0);
  for (std::size_t i = 0; i < k; ++i) {
    if (c[i].size() != k)
      throw std::invalid_argument("confusion matrix: row " + std::to_string(i) + " has " + std::to_string(c[i].size()) +
                                  " cells, not " + std::to_string(k));
    for (std::size_t j = 0; j < k; ++j) {
      m.metric[i] += c[i][j];
      m.label[j] += c[i][j];
    }
    m.agree += c[i][i];
  }
  for (auto r : m.metric) m.n += r;
  return m;
}

std::optional<double> balanced_accuracy_value(const Confusion &c) {
  const Margins m = margins_of(c);
  double sum = 0;
  int classes = 0;
  for (std::size_t j = 0; j < c.size(); ++j) {
    if (m.label[j] == 0) continue;  // a class no label holds has no recall (scikit-learn leaves it out too)
    sum += static_cast<double>(c[j][j]) / static_cast<double>(m.label[j]);
    ++classes;
  }
  if (classes == 0) return std::nullopt;
  return sum / classes;
}

struct BinaryCounts {
  std::uint64_t tp = 0, fp = 0, fn = 0;
};

BinaryCounts binary_counts(const Confusion &c, int positive) {
  const Margins m = margins_of(c);
  if (positive < 0 || static_cast<std::size_t>(positive) >= c.size())
    throw std::invalid_argument("positive class " + std::to_string(positive) + " is not among the " +
                                std::to_string(c.size()) + " categories");
  const auto p = static_cast<std::size_t>(positive);
  BinaryCounts b;
  b.tp = c[p][p];
  b.fp = m.metric[p] - b.tp;
  b.fn = m.label[p] - b.tp;
  return b;
}

std::optional<double> f1_value(const BinaryCounts &b) {
  const std::uint64_t denominator = 2 * b.tp + b.fp + b.fn;
  if (denominator == 0) return std::nullopt;
  return 2.0 * static_cast<double>(b.tp) / static_cast<double>(denominator);
}

Stat share_with_wilson(std::uint64_t k, std::uint64_t n, double level) {
  const Interval iv = wilson_interval(k, n, level);
  return detail::interval_stat(static_cast<double>(k) / static_cast<double>(n), iv.low, iv.high, "Wilson score",
                               static_cast<std::size_t>(n));
}

// Kappa with disagreement weights d(i, j) (d(i, i) = 0, largest d_max), as scikit-learn computes it:
// 1 - sum d p_ij / sum d p_i. p_.j. Its variance is Fleiss, Cohen & Everitt's (1969) non-null one, written with
// the agreement weights w = 1 - d / d_max (the kappa is the same in either form).
Stat kappa_with_weights(const Confusion &c, const std::function<double(std::size_t, std::size_t)> &d, double d_max,
                        double level, const std::string &what) {
  const Margins m = margins_of(c);
  const std::size_t k = c.size();
  if (m.n == 0) return Stat::undefined("no items");
  const double n = static_cast<double>(m.n);
  std::vector<double> row(k), col(k);
  for (std::size_t i = 0; i < k; ++i) {
    row[i] = static_cast<double>(m.metric[i]) / n;
    col[i] = static_cast<double>(m.label[i]) / n;
  }
  double observed = 0, expected = 0;  // weighted disagreement, observed and by chance
  for (std::size_t i = 0; i < k; ++i)
    for (std::size_t j = 0; j < k; ++j) {
      observed += d(i, j) * static_cast<double>(c[i][j]) / n;
      expected += d(i, j) * row[i] * col[j];
    }
  // A sum of non-negative terms is 0 exactly when each is: both codings put every item in the same one class.
  if (expected == 0)
    return Stat::undefined("one class only: both codings put every item in the same class, so chance agreement is 1",
                           m.n);
  const double kappa = 1 - observed / expected;
  const double pe = 1 - expected / d_max;  // chance agreement in agreement weights
  auto w = [&](std::size_t i, std::size_t j) { return 1 - d(i, j) / d_max; };
  std::vector<double> w_row(k, 0), w_col(k, 0);  // w̄_i. = sum_j p_.j w_ij and w̄_.j = sum_i p_i. w_ij
  for (std::size_t i = 0; i < k; ++i)
    for (std::size_t j = 0; j < k; ++j) {
      w_row[i] += col[j] * w(i, j);
      w_col[j] += row[i] * w(i, j);
    }
  double sum = 0;
  for (std::size_t i = 0; i < k; ++i)
    for (std::size_t j = 0; j < k; ++j) {
      const double dev = w(i, j) - (w_row[i] + w_col[j]) * (1 - kappa);
      sum += static_cast<double>(c[i][j]) / n * dev * dev;
    }
  const double centre = kappa - pe * (1 - kappa);
  const double variance = std::max(0.0, (sum - centre * centre) / (n * (1 - pe) * (1 - pe)));
  const double half = normal_quantile(0.5 + level / 2) * std::sqrt(variance);
  return detail::interval_stat(kappa, std::max(-1.0, kappa - half), std::min(1.0, kappa + half),
                               what + "asymptotic SE (Fleiss, Cohen & Everitt 1969), clipped to [-1, 1]", m.n);
}

}  // namespace

Confusion confusion_matrix(const std::vector<int> &metric, const std::vector<int> &label, int k) {
  if (metric.size() != label.size())
    throw std::invalid_argument("confusion matrix: " + std::to_string(metric.size()) + " metric values but " +
                                std::to_string(label.size()) + " labels");
  if (k < 1) throw std::invalid_argument("confusion matrix: k must be at least 1");
  Confusion c(static_cast<std::size_t>(k), std::vector<std::uint64_t>(static_cast<std::size_t>(k), 0));
  for (std::size_t i = 0; i < metric.size(); ++i) {
    if (metric[i] < 0 || metric[i] >= k || label[i] < 0 || label[i] >= k)
      throw std::invalid_argument("confusion matrix: item " + std::to_string(i) + " has a category outside 0.." +
                                  std::to_string(k - 1));
    ++c[static_cast<std::size_t>(metric[i])][static_cast<std::size_t>(label[i])];
  }
  return c;
}

Stat accuracy(const Confusion &c, double level) {
  detail::require_level(level);
  const Margins m = margins_of(c);
  if (m.n == 0) return Stat::undefined("no items");
  return share_with_wilson(m.agree, m.n, level);
}

Stat balanced_accuracy(const Confusion &c, double level) {
  detail::require_level(level);
  const Margins m = margins_of(c);
  const auto value = balanced_accuracy_value(c);
  if (!value) return Stat::undefined("no items");
  const Interval iv = detail::bootstrap_confusion(c, balanced_accuracy_value, level, kAgreementSeed);
  return detail::interval_stat(*value, iv.low, iv.high,
                               detail::bootstrap_method(kConfusionBootstrap, kAgreementResamples, kAgreementSeed), m.n);
}

Stat cohen_kappa(const Confusion &c, double level) {
  detail::require_level(level);
  return kappa_with_weights(
      c, [](std::size_t i, std::size_t j) { return i == j ? 0.0 : 1.0; }, 1.0, level, "");
}

Stat weighted_kappa(const Confusion &c, double level) {
  detail::require_level(level);
  const std::size_t k = c.size();
  if (k < 2) return Stat::undefined("fewer than two categories on the scale", margins_of(c).n);
  const double d_max = static_cast<double>((k - 1) * (k - 1));
  auto d = [](std::size_t i, std::size_t j) {
    const double diff = static_cast<double>(i) - static_cast<double>(j);
    return diff * diff;
  };
  return kappa_with_weights(c, d, d_max, level, "quadratic weights; ");
}

namespace {
// The true positives' share of `of` (precision: of the predicted positives; recall: of the labelled ones), with
// its Wilson interval; n is every item of the table. Undefined, saying `none`, where `of` is 0.
Stat positive_share(const Confusion &c, std::uint64_t tp, std::uint64_t of, const char *none, double level) {
  if (of == 0) return Stat::undefined(none, margins_of(c).n);
  Stat s = share_with_wilson(tp, of, level);
  s.n = margins_of(c).n;
  return s;
}
}  // namespace

Stat precision(const Confusion &c, int positive, double level) {
  detail::require_level(level);
  const BinaryCounts b = binary_counts(c, positive);
  return positive_share(c, b.tp, b.tp + b.fp, "the metric predicts no positives", level);
}

Stat recall(const Confusion &c, int positive, double level) {
  detail::require_level(level);
  const BinaryCounts b = binary_counts(c, positive);
  return positive_share(c, b.tp, b.tp + b.fn, "no item is labelled positive", level);
}

Stat f1(const Confusion &c, int positive, double level) {
  detail::require_level(level);
  const BinaryCounts b = binary_counts(c, positive);
  const std::size_t n = margins_of(c).n;
  const auto value = f1_value(b);
  if (!value) return Stat::undefined("no item is labelled or predicted positive", n);
  auto stat = [positive](const Confusion &r) { return f1_value(binary_counts(r, positive)); };
  const Interval iv = detail::bootstrap_confusion(c, stat, level, kAgreementSeed);
  return detail::interval_stat(*value, iv.low, iv.high,
                               detail::bootstrap_method(kConfusionBootstrap, kAgreementResamples, kAgreementSeed), n);
}

}  // namespace evalgraph::stats
