#pragma once
// Agreement between a metric and people's labels, and among the people: the statistics behind `agreement:`,
// `evalgraph agree`, the `expect:` gates with `label:` and the report's "Agreement with people" (docs/agreement.md).
// One implementation for all of them. Every statistic carries a 95 % (or `level`) interval and names the method
// that gave it; a statistic that the data cannot define (one class, n < 2, all values equal, ...) is "not
// defined" with the reason instead of a number. Deterministic: the bootstraps draw from a seeded generator of
// their own, so the same data give the same figures on every machine. A `level` outside (0, 1) throws
// std::invalid_argument.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace evalgraph::stats {

constexpr std::uint64_t kAgreementSeed = 20261129;
constexpr int kAgreementResamples = 2000;

// One statistic: a value with its interval and method, or the reason it is not defined.
struct Stat {
  bool defined = false;
  double value = 0;
  double low = 0, high = 0;  // the interval; low = high = value where no interval is known
  std::string method;        // "Wilson score", "DeLong", "Fisher z", "asymptotic (Fleiss, Cohen & Everitt 1969)",
                             // "bootstrap (2000 resamples, seed 20261129)", ...
  std::string why;           // when !defined: "one class only", "n < 2", "all values equal", ...
  std::size_t n = 0;         // the pairs it was computed on (alpha: the pairable units)
  static Stat undefined(std::string why, std::size_t n = 0);
};

// ---- classification: two codings of the same items into categories 0 .. k-1 ----

// counts[i][j]: items the metric put in category i and the label in category j (rows: metric, columns: label).
// A category outside 0 .. k-1 or vectors of different lengths throw std::invalid_argument (so does a matrix that
// is not square, or a `positive` outside it, below).
using Confusion = std::vector<std::vector<std::uint64_t>>;
Confusion confusion_matrix(const std::vector<int> &metric, const std::vector<int> &label, int k);

// As scikit-learn's accuracy_score; Wilson score interval. Not defined without items.
Stat accuracy(const Confusion &c, double level = 0.95);
// Mean recall over the label's classes that occur (scikit-learn's balanced_accuracy_score, which also leaves out
// a class only the metric uses); one label class gives that class's recall. Interval: percentile bootstrap of
// the matrix (kAgreementResamples multinomial resamples of its cells, seed kAgreementSeed).
Stat balanced_accuracy(const Confusion &c, double level = 0.95);
// Unweighted, as scikit-learn's cohen_kappa_score; interval kappa ± z·SE with Fleiss, Cohen & Everitt's (1969)
// non-null asymptotic SE, clipped to [-1, 1]. Not defined when chance agreement is 1 (both codings use one and
// the same class only; scikit-learn gives nan).
Stat cohen_kappa(const Confusion &c, double level = 0.95);
// Quadratically weighted kappa over ordered categories 0 .. k-1 (weights (i-j)^2/(k-1)^2), as scikit-learn's
// cohen_kappa_score(weights="quadratic", labels=0..k-1); the same asymptotic SE with weights. Not defined for
// k < 2 or when both codings use one and the same class only.
Stat weighted_kappa(const Confusion &c, double level = 0.95);
// With `positive` the index of the positive class (one against the rest): precision, recall (Wilson) and F1
// (bootstrap of the matrix, as balanced_accuracy). Not defined where scikit-learn warns and sets 0: precision
// without predicted positives, recall without labelled positives, F1 with neither.
Stat precision(const Confusion &c, int positive, double level = 0.95);
Stat recall(const Confusion &c, int positive, double level = 0.95);
Stat f1(const Confusion &c, int positive, double level = 0.95);

// ---- a number against a binary label ----

// AUROC of `score` for `positive` (true = the positive class); ties count one half (Mann-Whitney), as
// scikit-learn's roc_auc_score. Interval: DeLong (fast midrank algorithm of Sun & Xu 2014, one sort), on the logit
// scale, so it stays inside [0, 1]; an AUROC of 0 or 1 has zero variance and the interval [value, value], and so
// has a single positive or negative (no DeLong variance; `method` says so). Not defined with one class only.
Stat auroc(const std::vector<double> &score, const std::vector<bool> &positive, double level = 0.95);

struct ThresholdChoice {
  Stat balanced_accuracy_in_sample;  // at the chosen threshold, on all data (flatters itself)
  double threshold = 0;              // predict positive when score >= threshold
  Stat balanced_accuracy_cv;         // stratified k-fold: the threshold chosen on k-1 folds, applied to the k-th
  int folds = 5;
};
// The threshold that maximises balanced accuracy, and that balanced accuracy estimated by stratified
// `folds`-fold cross-validation. Candidates: the lowest score (everything positive) and the midpoints between
// neighbouring distinct scores; equal balanced accuracies go to the lower threshold. Cross-validation: each
// class shuffled with SplitMix64(seed) and dealt round-robin into the folds; each fold's threshold chosen on the
// others; the balanced accuracy of the pooled out-of-fold predictions, its interval a bootstrap of their
// confusion matrix. Both not defined with one class only; the CV one also when a class has fewer than `folds`
// items (or folds < 2). Intervals as balanced_accuracy.
ThresholdChoice best_threshold(const std::vector<double> &score, const std::vector<bool> &positive, int folds = 5,
                               std::uint64_t seed = kAgreementSeed, double level = 0.95);

// ---- number or ordinal against number or ordinal ----

// Pearson's r (Fisher z interval), Spearman's rho (average ranks for ties; Fisher z with the Fieller-Hartley-Pearson
// variance 1.06/(n-3)) and Kendall's tau-b (Knight's O(n log n) algorithm; Fisher z with variance 0.437/(n-4)),
// as scipy.stats.pearsonr, spearmanr and kendalltau (variant 'b'). Not defined for n < 2 or when either series
// has all values equal; with n <= 3 (tau: n <= 4) or |r| = 1 the interval is [value, value] and `method` says
// why. Vectors of different lengths throw std::invalid_argument; a NaN makes it not defined, and so does an
// infinity for Pearson (Spearman and Kendall use ranks only, as AUROC and the threshold do).
Stat pearson(const std::vector<double> &x, const std::vector<double> &y, double level = 0.95);
Stat spearman(const std::vector<double> &x, const std::vector<double> &y, double level = 0.95);
Stat kendall_tau_b(const std::vector<double> &x, const std::vector<double> &y, double level = 0.95);

// ---- among people: Krippendorff's alpha ----

enum class AlphaLevel { nominal, ordinal, interval };
// units[u] = the values the coders gave unit u (missing values left out; units with fewer than two values do not
// count). Ordinal uses the ranks of the distinct values, as Krippendorff (2011) defines it. Interval: a bootstrap
// over the pairable units (seed kAgreementSeed), the units grouped by their values where they repeat; at most
// kAgreementResamples resamples, fewer (and then a normal interval from the bootstrap's standard error) where
// thousands of distinct units would make it costly: the work stays near 5e7 operations, with at least 20
// resamples (agreement_alpha.cpp has the budget). Not defined with fewer than two pairable values or when they
// are all equal; NaN values (and infinite ones at the interval level) make it not defined. Stat::n is the number
// of pairable units.
Stat krippendorff_alpha(const std::vector<std::vector<double>> &units, AlphaLevel level, double ci_level = 0.95);

// ---- shared helpers ----

// Average ranks (1-based; ties get the mean of the ranks they span), as scipy.stats.rankdata.
std::vector<double> average_ranks(const std::vector<double> &v);

}  // namespace evalgraph::stats
