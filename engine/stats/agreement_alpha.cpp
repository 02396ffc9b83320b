// Krippendorff's alpha among coders (Krippendorff 2011, "Computing Krippendorff's Alpha-Reliability"), from the
// coincidence matrix's sufficient statistics instead of the matrix itself, so many distinct values cost nothing:
//   alpha = 1 - (n - 1) · sum_u [sum_{i != j in u} delta²(v_i, v_j)] / (m_u - 1) / sum_c sum_k n_c n_k delta²(c, k)
// nominal: delta² = [c != k]; interval: (c - k)²; ordinal: (sum_{g=c..k} n_g - (n_c + n_k)/2)², which is the
// interval metric on the positions s_c = sum_{g<c} n_g + n_c / 2 (so all three are sums of squares around means).
// The interval: a bootstrap over units, the units grouped by their multiset of values so that a resample costs
// the groups, not the units, where units repeat (ratings on a scale); bounded in work (see kAlphaBootstrapWork).
#include <algorithm>
#include <bit>
#include <cmath>
#include <numeric>
#include <string>

#include "stats/agreement.h"
#include "stats/agreement_internal.h"
#include "stats/stats.h"

namespace evalgraph::stats {

namespace {

// The bootstrap's budget: resamples × (work of one resample) stays under kAlphaBootstrapWork operations, with
// kAgreementResamples at most and kAlphaMinResamples at least. One resample's work: the draw (4 per unit, or 10
// per group of identical units, whichever is less) and alpha (interval: 1 per group; nominal and ordinal: 2 per
// distinct value in a group, 1 per distinct value). Ratings on a scale repeat, so their groups are few and all
// 2000 resamples fit; interval alpha of continuous values gets 2000 up to 5,000 units, fewer beyond, and the
// floor of 20 (the work growing linearly from there) beyond 500,000. Cut below kAgreementResamples, the interval
// is the normal one from the bootstrap's standard error, which few resamples estimate well where percentiles
// would not; a cut only happens with thousands of distinct units, where alpha's distribution is close to normal.
constexpr double kAlphaBootstrapWork = 5e7;
constexpr std::size_t kAlphaMinResamples = 20;

struct Entry {
  std::size_t value;  // index into AlphaData::distinct
  double count;       // how often the unit holds that value
};

struct UnitGroup {
  std::size_t first = 0, last = 0;  // its values and their counts: AlphaData::entries[first, last) (not for interval)
  double m = 0;                     // values in one such unit
  double lowest = 0, highest = 0;   // equal: the unit holds one value only
  double nominal_do = 0;            // sum_{i != j} [v_i != v_j] / (m - 1): fixed by the unit
  double interval_do = 0;           // the same with (v_i - v_j)²
  double sum = 0, sum_squares = 0;  // of the unit's values less the centre (the interval level's marginals)
};

// The interval level needs sums per group only; nominal and ordinal need each group's values as indices into
// the sorted distinct values (`distinct`, `entries`), which costs a sort of the groups' values.
struct AlphaData {
  std::vector<double> distinct;  // the distinct pairable values, ascending (not for interval)
  std::vector<Entry> entries;
  std::vector<UnitGroup> groups;
  std::vector<std::uint64_t> units;  // units per group
  std::size_t total_units = 0;
};

struct Workspace {
  std::vector<double> n_c, x;  // the coincidence marginals and the positions of one resample
};

// sum_{i != j} (x_i - x_j)² over a unit's values = 2 m sum (x - mean)²; `x` maps a value index to a position.
template <class Position>
double pair_squares(const AlphaData &d, const UnitGroup &g, Position x) {
  double sum = 0;
  for (std::size_t e = g.first; e < g.last; ++e) sum += d.entries[e].count * x(d.entries[e].value);
  const double mean = sum / g.m;
  double squares = 0;
  for (std::size_t e = g.first; e < g.last; ++e)
    squares += d.entries[e].count * (x(d.entries[e].value) - mean) * (x(d.entries[e].value) - mean);
  return 2 * g.m * squares;
}

// One group from one of its units' sorted values; entries only where the level needs them.
void add_group(AlphaData &d, const double *values, std::size_t size, double centre, std::uint64_t units,
               bool with_entries) {
  UnitGroup g;
  g.m = static_cast<double>(size);
  g.lowest = values[0], g.highest = values[size - 1];
  double unit_mean = 0, same = 0;
  for (std::size_t i = 0; i < size; ++i) unit_mean += values[i] - centre;
  unit_mean /= g.m;
  for (std::size_t i = 0; i < size; ++i) {
    const double x = values[i] - centre;
    g.sum += x, g.sum_squares += x * x, g.interval_do += (x - unit_mean) * (x - unit_mean);
  }
  g.interval_do *= 2 * g.m / (g.m - 1);
  g.first = g.last = d.entries.size();
  for (std::size_t i = 0; i < size;) {
    std::size_t j = i;
    while (j < size && values[j] == values[i]) ++j;
    const auto run = static_cast<double>(j - i);
    same += run * run;
    if (with_entries) {
      const auto index = std::lower_bound(d.distinct.begin(), d.distinct.end(), values[i]) - d.distinct.begin();
      d.entries.push_back({static_cast<std::size_t>(index), run});
    }
    i = j;
  }
  g.last = d.entries.size();
  g.nominal_do = (g.m * g.m - same) / (g.m - 1);
  d.groups.push_back(g);
  d.units.push_back(units);
}

std::uint64_t mix(std::uint64_t z) {  // SplitMix64's finaliser
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// The pairable units (two values or more), each sorted, grouped where they hold the same values: sorted by a
// hash of their values (integers sort fast), a run of equal hashes checked for a collision and split if need be.
AlphaData group_units(const std::vector<std::vector<double>> &units, AlphaLevel level) {
  AlphaData d;
  std::vector<double> flat;  // every pairable unit's sorted values, one after the other
  std::vector<std::size_t> start{0};
  std::vector<std::pair<std::uint64_t, std::size_t>> keyed;  // (hash of the unit's values, unit)
  std::size_t values = 0;
  for (const auto &u : units) values += u.size();
  flat.reserve(values), start.reserve(units.size() + 1), keyed.reserve(units.size());
  for (const auto &u : units) {
    if (u.size() < 2) continue;  // a value with no other in its unit is not pairable
    flat.insert(flat.end(), u.begin(), u.end());
    std::sort(flat.end() - static_cast<std::ptrdiff_t>(u.size()), flat.end());
    std::uint64_t h = mix(u.size());
    for (auto v = flat.end() - static_cast<std::ptrdiff_t>(u.size()); v != flat.end(); ++v)
      h = mix(h ^ std::bit_cast<std::uint64_t>(*v == 0 ? 0.0 : *v));  // -0 and +0 are one value
    keyed.emplace_back(h, start.size() - 1);
    start.push_back(flat.size());
  }
  d.total_units = keyed.size();
  long double total = 0;  // the mean pairable value centres the interval positions (less cancellation)
  for (double v : flat) total += v;
  const double centre = flat.empty() ? 0 : static_cast<double>(total / static_cast<long double>(flat.size()));
  auto begin = [&](std::size_t u) { return flat.begin() + static_cast<std::ptrdiff_t>(start[u]); };
  auto end = [&](std::size_t u) { return flat.begin() + static_cast<std::ptrdiff_t>(start[u + 1]); };
  auto same = [&](std::size_t a, std::size_t b) { return std::equal(begin(a), end(a), begin(b), end(b)); };
  std::sort(keyed.begin(), keyed.end());
  std::vector<std::pair<std::size_t, std::uint64_t>> representatives;  // (one unit of the group, units in it)
  for (std::size_t i = 0; i < keyed.size();) {
    std::size_t j = i + 1;
    while (j < keyed.size() && keyed[j].first == keyed[i].first) ++j;
    bool collision = false;
    for (std::size_t t = i + 1; t < j && !collision; ++t) collision = !same(keyed[i].second, keyed[t].second);
    if (collision)
      std::sort(keyed.begin() + static_cast<std::ptrdiff_t>(i), keyed.begin() + static_cast<std::ptrdiff_t>(j),
                [&](const auto &a, const auto &b) {
                  return std::lexicographical_compare(begin(a.second), end(a.second), begin(b.second), end(b.second));
                });
    for (std::size_t g = i; g < j;) {  // without a collision, one group
      std::size_t h = g + 1;
      while (h < j && (!collision || same(keyed[g].second, keyed[h].second))) ++h;
      representatives.emplace_back(keyed[g].second, h - g);
      g = h;
    }
    i = j;
  }
  const bool with_entries = level != AlphaLevel::interval;
  d.groups.reserve(representatives.size()), d.units.reserve(representatives.size());
  if (with_entries) {  // the distinct values are those of the groups: a sort of far fewer values than all
    for (const auto &[u, n_units] : representatives) d.distinct.insert(d.distinct.end(), begin(u), end(u));
    std::sort(d.distinct.begin(), d.distinct.end());
    d.distinct.erase(std::unique(d.distinct.begin(), d.distinct.end()), d.distinct.end());
  }
  for (const auto &[u, n_units] : representatives)
    add_group(d, &flat[start[u]], start[u + 1] - start[u], centre, n_units, with_entries);
  return d;
}

// sum_c sum_k n_c n_k delta²(c, k) and sum_u w_u (sum_{i != j in u} delta²) / (m_u - 1), from the marginals.
std::pair<double, double> expected_observed(const AlphaData &d, const std::vector<std::uint64_t> &weight,
                                            AlphaLevel level, double n, Workspace &work) {
  double expected = 0, observed = 0;
  if (level == AlphaLevel::nominal) {
    for (double c : work.n_c) expected += c * c;
    expected = n * n - expected;
  } else {
    std::vector<double> &x = work.x;  // ordinal positions s_c = sum_{g<c} n_g + n_c / 2
    double below = 0;
    for (std::size_t c = 0; c < x.size(); ++c) x[c] = below + work.n_c[c] / 2, below += work.n_c[c];
    double mean = 0;
    for (std::size_t c = 0; c < x.size(); ++c) mean += work.n_c[c] * x[c];
    mean /= n;
    for (std::size_t c = 0; c < x.size(); ++c) expected += work.n_c[c] * (x[c] - mean) * (x[c] - mean);
    expected *= 2 * n;
  }
  for (std::size_t g = 0; g < d.groups.size(); ++g) {
    if (weight[g] == 0) continue;
    const UnitGroup &u = d.groups[g];
    const double unit_do = level == AlphaLevel::nominal
                               ? u.nominal_do
                               : pair_squares(d, u, [&](std::size_t c) { return work.x[c]; }) / (u.m - 1);
    observed += static_cast<double>(weight[g]) * unit_do;
  }
  return {expected, observed};
}

// Alpha with `weight[g]` units of group g (the data: their counts; a resample: its draw). nullopt: the
// weighted values show no variation (alpha is 0/0). The interval level needs only sums per group (O(groups)).
std::optional<double> alpha_with_weights(const AlphaData &d, const std::vector<std::uint64_t> &weight, AlphaLevel level,
                                         Workspace &work) {
  double n = 0;
  bool varies = false;
  const double none = NAN;
  double single = none;  // the one value seen so far, while every weighted unit holds one value only
  for (std::size_t g = 0; g < d.groups.size() && !varies; ++g) {
    if (weight[g] == 0) continue;
    const UnitGroup &u = d.groups[g];
    varies = u.lowest != u.highest || (!std::isnan(single) && single != u.lowest);
    single = u.lowest;
  }
  if (!varies) return std::nullopt;
  if (level == AlphaLevel::interval) {
    double s1 = 0, s2 = 0, observed = 0;
    for (std::size_t g = 0; g < d.groups.size(); ++g) {
      const auto w = static_cast<double>(weight[g]);
      n += w * d.groups[g].m, s1 += w * d.groups[g].sum, s2 += w * d.groups[g].sum_squares;
      observed += w * d.groups[g].interval_do;
    }
    const double expected = 2 * (n * s2 - s1 * s1);
    if (!(expected > 0)) return std::nullopt;  // values that differ by less than rounding around their mean
    return 1 - (n - 1) * observed / expected;
  }
  work.n_c.assign(d.distinct.size(), 0);
  work.x.resize(d.distinct.size());
  for (std::size_t g = 0; g < d.groups.size(); ++g)
    if (weight[g] > 0)
      for (std::size_t e = d.groups[g].first; e < d.groups[g].last; ++e)
        work.n_c[d.entries[e].value] += d.entries[e].count * static_cast<double>(weight[g]);
  for (double c : work.n_c) n += c;
  const auto [expected, observed] = expected_observed(d, weight, level, n, work);
  return 1 - (n - 1) * observed / expected;
}

const char *level_name(AlphaLevel level) {
  return level == AlphaLevel::nominal ? "nominal" : level == AlphaLevel::ordinal ? "ordinal" : "interval";
}

// Resamples units with replacement: unit by unit where the groups are many (a draw is a random access, about
// kRandomAccessCost operations), else one multinomial over the groups (a binomial each, about kBinomialCost).
constexpr double kRandomAccessCost = 4, kBinomialCost = 10;

class UnitSampler {
 public:
  explicit UnitSampler(const AlphaData &d) : d_(d), by_unit_(cost_by_unit() <= cost_by_group()) {
    if (by_unit_ && d.total_units != d.groups.size())  // every group one unit: a unit's index is its group's
      for (std::size_t g = 0; g < d.units.size(); ++g)
        group_of_unit_.insert(group_of_unit_.end(), d.units[g], static_cast<std::uint32_t>(g));
  }
  double cost() const { return std::min(cost_by_unit(), cost_by_group()); }
  void draw(SplitMix64 &rng, std::vector<std::uint64_t> &weight) const {
    if (!by_unit_) {
      weight = multinomial_sample(rng, d_.units);
      return;
    }
    weight.assign(d_.units.size(), 0);
    const std::size_t units = d_.total_units;
    if (group_of_unit_.empty())
      for (std::size_t i = 0; i < units; ++i) ++weight[rng.below(units)];
    else
      for (std::size_t i = 0; i < units; ++i) ++weight[group_of_unit_[rng.below(units)]];
  }

 private:
  double cost_by_unit() const { return kRandomAccessCost * static_cast<double>(d_.total_units); }
  double cost_by_group() const { return kBinomialCost * static_cast<double>(d_.groups.size()); }
  const AlphaData &d_;
  bool by_unit_;
  std::vector<std::uint32_t> group_of_unit_;
};

Stat alpha_interval(const AlphaData &d, AlphaLevel level, double value, double ci_level) {
  const UnitSampler sampler(d);
  const double evaluation = level == AlphaLevel::interval
                                ? static_cast<double>(d.groups.size())
                                : static_cast<double>(2 * d.entries.size() + d.distinct.size());
  const auto affordable = static_cast<std::size_t>(kAlphaBootstrapWork / std::max(1.0, sampler.cost() + evaluation));
  const std::size_t resamples =
      std::clamp(affordable, kAlphaMinResamples, static_cast<std::size_t>(kAgreementResamples));
  SplitMix64 rng{kAgreementSeed};
  Workspace work;
  std::vector<double> draws;
  draws.reserve(resamples);
  std::vector<std::uint64_t> weight;
  for (std::size_t r = 0; r < resamples; ++r) {
    sampler.draw(rng, weight);
    if (auto a = alpha_with_weights(d, weight, level, work)) draws.push_back(*a);
  }
  const std::string what = "over units (" + std::string(level_name(level)) + "; " + std::to_string(d.total_units) +
                           " pairable units in " + std::to_string(d.groups.size()) + " groups of identical values)";
  std::string method = detail::bootstrap_method(what, resamples, kAgreementSeed);
  if (resamples == static_cast<std::size_t>(kAgreementResamples) || draws.size() < 2) {
    const Interval iv = detail::percentile_interval(draws, ci_level);
    return detail::interval_stat(value, iv.low, iv.high, method, d.total_units);
  }
  double mean = 0, squares = 0;
  for (double a : draws) mean += a;
  mean /= static_cast<double>(draws.size());
  for (double a : draws) squares += (a - mean) * (a - mean);
  const double half = normal_quantile(0.5 + ci_level / 2) * std::sqrt(squares / static_cast<double>(draws.size() - 1));
  method.replace(0, std::string("percentile").size(), "normal");
  method += "; resamples cut to keep the work near " + std::to_string(static_cast<long>(kAlphaBootstrapWork)) +
            " operations, so the interval is alpha ± z · the bootstrap's standard error";
  return detail::interval_stat(value, value - half, std::min(1.0, value + half), method, d.total_units);
}

}  // namespace

Stat krippendorff_alpha(const std::vector<std::vector<double>> &units, AlphaLevel level, double ci_level) {
  detail::require_level(ci_level);
  for (const auto &u : units) {
    if (std::any_of(u.begin(), u.end(), [](double v) { return std::isnan(v); }))
      return Stat::undefined("a value is not a number (leave a missing value out of its unit)");
    if (level == AlphaLevel::interval && std::any_of(u.begin(), u.end(), [](double v) { return std::isinf(v); }))
      return Stat::undefined("a value is infinite: the interval metric needs finite numbers");
  }
  const AlphaData d = group_units(units, level);
  if (d.total_units == 0)
    return Stat::undefined("fewer than two pairable values: no unit has values from two coders", 0);
  Workspace work;
  const auto value = alpha_with_weights(d, d.units, level, work);
  if (!value) return Stat::undefined("no variation: every pairable value is the same", d.total_units);
  return alpha_interval(d, level, *value, ci_level);
}

}  // namespace evalgraph::stats
