// The statistics of one agreement entry, the people's ceiling and Krippendorff's alpha (agree/agreement.h):
// pairs of (metric, label consensus) are formed from the gathered rows, then stats/agreement.h computes.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <numeric>
#include <optional>
#include <set>

#include "agree/agreement.h"
#include "stats/agreement.h"

namespace evalgraph::agree {
using nlohmann::json;
using Row = AgreementSet::Row;
using Entry = AgreementSet::Entry;

namespace {

constexpr std::size_t kCellIds = 200;       // record ids listed per confusion cell
constexpr std::size_t kDisagreements = 50;  // records listed where metric and label disagree most

enum class Kind { classification, score_vs_binary, correlation };
const char *kind_name(Kind k) {
  return k == Kind::classification ? "classification" : k == Kind::score_vs_binary ? "score_vs_binary" : "correlation";
}

json stat_json(const stats::Stat &s) {
  if (!s.defined) return {{"defined", false}, {"why", s.why}, {"n", s.n}};
  return {{"defined", true}, {"value", s.value}, {"low", s.low}, {"high", s.high}, {"method", s.method}, {"n", s.n}};
}

// A label field's scale, worked out once: the number an ordinal or number label stands for (the declared value
// when they are all numbers, else its rank), and whether its labels are votes for a category.
struct Scale {
  bool categorical = false, ordinal = false;
  std::vector<double> values;  // ordinal with numeric values: by code
  explicit Scale(const LabelFieldDecl &f) : categorical(f.type == "binary" || f.type == "category"), ordinal(f.type == "ordinal") {
    if (ordinal && std::all_of(f.values.begin(), f.values.end(), [](const json &v) { return v.is_number(); }))
      for (const auto &v : f.values) values.push_back(v.get<double>());
  }
  double operator()(double code) const {
    auto i = static_cast<std::size_t>(code);
    return i < values.size() ? values[i] : code;
  }
};

// What the people say about one field of one record: the majority (binary, category; a tie is none), or the mean
// (ordinal, number; for ordinal also the nearest point of the scale, none when the mean lies halfway).
struct Consensus {
  bool labelled = false, tie = false;
  double code = 0;  // the category (classification)
  double mean = 0;  // on the scale (correlation)
};

Consensus consensus(const Scale &f, std::uint32_t field, const Label *labels, std::uint32_t n,
                    std::int64_t without = -1) {
  Consensus c;
  // The votes per code: a few distinct codes per record, kept without allocating.
  constexpr std::size_t kInline = 16;
  std::array<std::pair<double, int>, kInline> small{};
  std::size_t distinct = 0;
  std::map<double, int> more;
  double sum = 0, sum_scale = 0;
  int k = 0;
  for (std::uint32_t i = 0; i < n; ++i) {
    const Label &l = labels[i];
    if (l.field != field || static_cast<std::int64_t>(l.annotator) == without) continue;
    std::size_t j = 0;
    while (j < distinct && small[j].first != l.code) ++j;
    if (j < distinct) ++small[j].second;
    else if (distinct < kInline) small[distinct++] = {l.code, 1};
    else ++more[l.code];
    sum += l.code;
    sum_scale += f(l.code);
    ++k;
  }
  if (k == 0) return c;
  c.labelled = true;
  c.mean = sum_scale / k;
  if (f.categorical) {
    int best = 0, second = 0;
    auto vote = [&](double code, int v) {
      if (v > best) {
        second = best;
        best = v;
        c.code = code;
      } else if (v > second) {
        second = v;
      }
    };
    if (more.empty()) {
      for (std::size_t j = 0; j < distinct; ++j) vote(small[j].first, small[j].second);
    } else {
      for (std::size_t j = 0; j < distinct; ++j) more[small[j].first] += small[j].second;
      for (const auto &[code, v] : more) vote(code, v);
    }
    c.tie = best == second;
  } else if (f.ordinal) {
    double m = sum / k;
    c.tie = std::fabs(m - std::floor(m) - 0.5) < 1e-12;
    c.code = std::round(m);
  } else {
    c.code = c.mean;
  }
  return c;
}

// The metric's value as JSON text, for coding it on the label's scale.
std::string metric_text(const Entry &e, const MetricValue &v) {
  if (v.type == MetricValue::boolean) return v.num != 0 ? "true" : "false";
  if (v.type == MetricValue::text) return json(e.texts[static_cast<std::size_t>(v.num)]).dump();
  return fmt::format("{}", v.num);
}

json metric_json(const Entry &e, const MetricValue &v) {
  if (v.type == MetricValue::boolean) return v.num != 0;
  if (v.type == MetricValue::text) return e.texts[static_cast<std::size_t>(v.num)];
  if (v.type == MetricValue::number) return v.num;
  return nullptr;
}

// The metric's values coded on a label field's scale, each distinct value coded once (a million records hold few
// distinct booleans, texts or points of a scale; a continuous score is never on a scale and needs no lookup).
class MetricCoder {
 public:
  MetricCoder(const Entry &e, const LabelFieldDecl &f) : e_(e), f_(f) {
    for (const auto &v : f.values) numeric_values_ = numeric_values_ || v.is_number();
  }
  std::optional<double> code(const MetricValue &v) {
    if (v.type == MetricValue::number) {
      if (f_.type == "binary") return v.num == 0 || v.num == 1 ? std::optional<double>(v.num) : std::nullopt;
      if (f_.type == "number") return v.num;
      for (std::size_t i = 0; i < f_.values.size() && numeric_values_; ++i)
        if (f_.values[i].is_number() && f_.values[i].get<double>() == v.num) return static_cast<double>(i);
      if (v.num != std::floor(v.num) || numeric_values_) return std::nullopt;  // a score, or not a point
    }
    auto key = std::make_pair(static_cast<int>(v.type), v.num);
    auto it = cache_.find(key);
    if (it != cache_.end()) return it->second;
    std::string why;
    return cache_[key] = code_label(f_, metric_text(e_, v), why);
  }

 private:
  const Entry &e_;
  const LabelFieldDecl &f_;
  bool numeric_values_ = false;
  std::map<std::pair<int, double>, std::optional<double>> cache_;
};

// Which comparison an entry is: by the label's type and, for binary and ordinal labels, by the metric's values.
Kind kind_of(const Entry &e, const LabelFieldDecl &f, MetricCoder &coder, bool &on_scale) {
  on_scale = false;
  if (f.type == "number") return Kind::correlation;
  if (f.type == "category") return Kind::classification;
  bool all_on_scale = true, any_number = false;
  for (const auto &v : e.values) {
    if (v.type == MetricValue::missing || v.type == MetricValue::tie) continue;
    any_number = any_number || v.type == MetricValue::number;
    if (!coder.code(v)) all_on_scale = false;
    if (!all_on_scale && any_number) break;
  }
  if (f.type == "binary") return all_on_scale || !any_number ? Kind::classification : Kind::score_vs_binary;
  on_scale = all_on_scale;
  return all_on_scale ? Kind::classification : Kind::correlation;
}

// The pairs an entry is computed on, and why the other rows were left out.
struct Pairs {
  std::vector<double> x, y;  // metric, label (codes for classification, scale values for correlation)
  std::vector<std::uint32_t> row;
  std::size_t metric_missing = 0, metric_tie = 0, unlabelled = 0, tie = 0, off_scale = 0;
};

Pairs make_pairs(const Entry &e, const LabelFieldDecl &f, MetricCoder &coder, Kind kind, bool classify,
                 const std::vector<Row> &rows, const std::vector<Label> &all) {
  Pairs p;
  const Scale scale(f);
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const MetricValue &v = e.values[r];
    const Consensus c = consensus(scale, e.field, all.data() + rows[r].labels_at, rows[r].labels_n);
    if (!c.labelled) {
      ++p.unlabelled;
      continue;
    }
    if (v.type == MetricValue::missing || v.type == MetricValue::tie) {
      ++(v.type == MetricValue::tie ? p.metric_tie : p.metric_missing);
      continue;
    }
    double x = 0;
    if (classify) {
      auto code = coder.code(v);
      if (!code) {
        ++p.off_scale;
        continue;
      }
      x = *code;
    } else if (v.type == MetricValue::text) {
      ++p.off_scale;
      continue;
    } else {
      x = v.num;
    }
    // The label as a class (a classification, or the class a score is ranked against): a majority tie, or an
    // ordinal mean halfway between two points, has none; taking the first vote would depend on the file's order.
    if (c.tie && (classify || kind == Kind::score_vs_binary)) {
      ++p.tie;
      continue;
    }
    p.x.push_back(x);
    p.y.push_back(classify ? c.code : kind == Kind::score_vs_binary ? c.code : c.mean);
    p.row.push_back(static_cast<std::uint32_t>(r));
  }
  return p;
}

std::vector<int> as_ints(const std::vector<double> &v) {
  std::vector<int> out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) out[i] = static_cast<int>(v[i]);
  return out;
}

int positive_code(const AgreementDecl &d, const LabelFieldDecl &f) {
  if (d.positive.is_null()) return f.type == "binary" ? 1 : -1;
  std::string why;
  auto c = code_label(f, d.positive.dump(), why);
  return c ? static_cast<int>(*c) : -1;
}

std::vector<std::string> categories(const LabelFieldDecl &f) {
  if (f.type == "binary") return {"false", "true"};
  std::vector<std::string> out;
  for (const auto &v : f.values) out.push_back(v.is_string() ? v.get<std::string>() : v.dump());
  return out;
}

}  // namespace

namespace {

// The headline statistic of a comparison (what each annotator is measured in against the rest).
std::string headline(Kind kind, bool on_scale) {
  if (kind == Kind::score_vs_binary) return "auroc";
  if (kind == Kind::correlation) return "spearman";
  return on_scale ? "weighted_kappa" : "kappa";
}

stats::Stat headline_stat(const std::string &name, const Pairs &p, int k, int positive) {
  if (name == "spearman") return stats::spearman(p.x, p.y);
  if (name == "auroc") {
    std::vector<bool> pos(p.y.size());
    for (std::size_t i = 0; i < p.y.size(); ++i) pos[i] = static_cast<int>(p.y[i]) == positive;
    return stats::auroc(p.x, pos);
  }
  auto c = stats::confusion_matrix(as_ints(p.x), as_ints(p.y), k);
  return name == "weighted_kappa" ? stats::weighted_kappa(c) : stats::cohen_kappa(c);
}

void classification_stats(json &out, const Pairs &p, const LabelFieldDecl &f, int positive, bool on_scale) {
  const int k = static_cast<int>(categories(f).size());
  const Scale scale(f);
  auto c = stats::confusion_matrix(as_ints(p.x), as_ints(p.y), k);
  json &s = out["stats"];
  s["accuracy"] = stat_json(stats::accuracy(c));
  s["balanced_accuracy"] = stat_json(stats::balanced_accuracy(c));
  s["kappa"] = stat_json(stats::cohen_kappa(c));
  if (on_scale) {
    s["weighted_kappa"] = stat_json(stats::weighted_kappa(c));
    std::vector<double> xs(p.x.size()), ys(p.y.size());
    for (std::size_t i = 0; i < p.x.size(); ++i) {
      xs[i] = scale(p.x[i]);
      ys[i] = scale(p.y[i]);
    }
    s["spearman"] = stat_json(stats::spearman(xs, ys));
    s["kendall"] = stat_json(stats::kendall_tau_b(xs, ys));
    s["pearson"] = stat_json(stats::pearson(xs, ys));
  }
  if (positive >= 0) {
    s["precision"] = stat_json(stats::precision(c, positive));
    s["recall"] = stat_json(stats::recall(c, positive));
    s["f1"] = stat_json(stats::f1(c, positive));
  }
  out["categories"] = categories(f);
  out["confusion"] = c;
}

void score_stats(json &out, const Pairs &p, int positive) {
  std::vector<bool> pos(p.y.size());
  for (std::size_t i = 0; i < p.y.size(); ++i) pos[i] = static_cast<int>(p.y[i]) == positive;
  json &s = out["stats"];
  s["auroc"] = stat_json(stats::auroc(p.x, pos));
  auto t = stats::best_threshold(p.x, pos);
  s["balanced_accuracy"] = stat_json(t.balanced_accuracy_in_sample);
  s["balanced_accuracy_cv"] = stat_json(t.balanced_accuracy_cv);
  out["threshold"] = t.balanced_accuracy_in_sample.defined ? json(t.threshold) : json(nullptr);
  out["folds"] = t.folds;
}

void correlation_stats(json &out, const Pairs &p) {
  json &s = out["stats"];
  s["spearman"] = stat_json(stats::spearman(p.x, p.y));
  s["kendall"] = stat_json(stats::kendall_tau_b(p.x, p.y));
  s["pearson"] = stat_json(stats::pearson(p.x, p.y));
}

// Record ids per confusion cell ("row,col"), at most kCellIds each.
json cell_ids(const Pairs &p, const std::vector<Row> &rows) {
  json cells = json::object();
  for (std::size_t i = 0; i < p.x.size(); ++i) {
    json &ids = cells[fmt::format("{},{}", static_cast<int>(p.x[i]), static_cast<int>(p.y[i]))];
    if (ids.size() < kCellIds) ids.push_back(rows[p.row[i]].key);
  }
  return cells;
}

// The records where metric and label disagree most, first: a category apart (ordinal: by how far on the scale),
// a score on the wrong side by its rank, a pair of ranks apart.
json disagreements(const Entry &e, const LabelFieldDecl &f, Kind kind, bool classify, int positive, const Pairs &p,
                   const std::vector<Row> &rows) {
  std::vector<double> d(p.x.size());
  const double n1 = std::max<double>(1, static_cast<double>(p.x.size()) - 1);
  if (classify) {
    const double span = std::max<double>(1, static_cast<double>(categories(f).size()) - 1);
    for (std::size_t i = 0; i < d.size(); ++i)
      d[i] = p.x[i] == p.y[i] ? 0 : f.type == "ordinal" ? std::fabs(p.x[i] - p.y[i]) / span : 1;
  } else if (kind == Kind::score_vs_binary) {
    auto r = stats::average_ranks(p.x);
    for (std::size_t i = 0; i < d.size(); ++i) {
      double pr = (r[i] - 1) / n1;
      d[i] = static_cast<int>(p.y[i]) == positive ? 1 - pr : pr;
    }
  } else {
    auto rx = stats::average_ranks(p.x), ry = stats::average_ranks(p.y);
    for (std::size_t i = 0; i < d.size(); ++i) d[i] = std::fabs(rx[i] - ry[i]) / n1;
  }
  std::vector<std::size_t> order(d.size());
  std::iota(order.begin(), order.end(), 0);
  const std::size_t top = std::min(kDisagreements, order.size());
  std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(top), order.end(),
                    [&](std::size_t a, std::size_t b) { return d[a] != d[b] ? d[a] > d[b] : a < b; });
  json out = json::array();
  for (std::size_t i = 0; i < top && d[order[i]] > 0; ++i) {
    const std::size_t j = order[i];
    json label = classify || kind == Kind::score_vs_binary ? label_value(f, p.y[j]) : json(p.y[j]);
    out.push_back({{"id", rows[p.row[j]].key},
                   {"metric", metric_json(e, e.values[p.row[j]])},
                   {"label", label},
                   {"distance", d[j]}});
  }
  return out;
}

// Each annotator against the consensus of the others, in the entry's headline statistic.
json people_ceiling(const Entry &e, const LabelFieldDecl &f, const LabelSet &labels, Kind kind, bool on_scale,
                    int positive, const std::vector<Row> &rows, const std::vector<Label> &all,
                    const json &metric_stat) {
  std::set<std::uint32_t> who;
  for (const auto &l : all)
    if (l.field == e.field) who.insert(l.annotator);
  if (who.size() < 2) return nullptr;
  const Scale scale(f);
  const std::string stat = headline(kind, on_scale);
  const bool classify = kind == Kind::classification;
  const bool as_class = classify || kind == Kind::score_vs_binary;  // the rest's majority (a tie: none)
  json per = json::array();
  double sum = 0;
  int defined = 0;
  for (std::uint32_t a : who) {
    Pairs p;
    for (std::size_t r = 0; r < rows.size(); ++r) {
      const Label *ls = all.data() + rows[r].labels_at;
      const Label *mine = nullptr;
      for (std::uint32_t i = 0; i < rows[r].labels_n; ++i)
        if (ls[i].field == e.field && ls[i].annotator == a) mine = &ls[i];
      if (mine == nullptr) continue;
      Consensus rest = consensus(scale, e.field, ls, rows[r].labels_n, a);
      if (!rest.labelled || (as_class && rest.tie)) continue;
      p.x.push_back(as_class ? mine->code : scale(mine->code));
      p.y.push_back(as_class ? rest.code : rest.mean);
    }
    stats::Stat s = headline_stat(stat, p, static_cast<int>(categories(f).size()), positive);
    json j = stat_json(s);
    j["annotator"] = labels.annotators()[a];
    if (s.defined) {
      sum += s.value;
      ++defined;
    }
    per.push_back(std::move(j));
  }
  json out = {{"annotators", who.size()},
              {"stat", stat},
              {"per_annotator", per},
              {"mean", defined > 0 ? json(sum / defined) : json(nullptr)}};
  if (defined > 0 && metric_stat.value("defined", false)) {
    const double m = sum / defined;
    out["metric"] = metric_stat["value"];
    out["verdict"] = metric_stat["high"].get<double>() < m  ? "below the people"
                     : metric_stat["low"].get<double>() > m ? "above the people"
                                                            : "about as well as the people agree with each other";
  }
  return out;
}

}  // namespace

json evaluate_entry(const Entry &e, const LabelSet &labels, const std::vector<Row> &rows,
                    const std::vector<Label> &all) {
  const LabelFieldDecl &f = labels.decl().fields[e.field];
  bool on_scale = false;
  MetricCoder coder(e, f);
  const Kind kind = kind_of(e, f, coder, on_scale);
  const bool classify = kind == Kind::classification;
  const int positive = kind == Kind::score_vs_binary && e.decl.positive.is_null() ? 1 : positive_code(e.decl, f);
  Pairs p = make_pairs(e, f, coder, kind, classify, rows, all);
  json out = {{"name", e.decl.display()}, {"metric", e.decl.metric}, {"label", e.decl.label},
              {"kind", kind_name(kind)},  {"label_type", f.type},    {"n", p.x.size()},
              {"stats", json::object()}};
  if (positive >= 0 && (f.type == "binary" || !e.decl.positive.is_null())) out["positive"] = label_value(f, positive);
  out["left_out"] = {{"metric_missing", p.metric_missing},
                     {"metric_tie", p.metric_tie},
                     {"unlabelled", p.unlabelled},
                     {"tie", p.tie},
                     {"off_scale", p.off_scale}};
  if (classify) {
    classification_stats(out, p, f, positive, on_scale);
    out["cells"] = cell_ids(p, rows);
  } else if (kind == Kind::score_vs_binary) {
    score_stats(out, p, positive);
  } else {
    correlation_stats(out, p);
  }
  const std::string head = headline(kind, on_scale);
  out["headline"] = head;
  out["people"] = people_ceiling(e, f, labels, kind, on_scale, positive, rows, all, out["stats"][head]);
  out["disagreements"] = disagreements(e, f, kind, classify, positive, p, rows);
  return out;
}

json people_alpha(const LabelSet &labels, const std::vector<Row> &rows, const std::vector<Label> &all) {
  json out = json::object();
  const auto &fields = labels.decl().fields;
  std::vector<std::set<std::uint32_t>> who(fields.size());
  for (const auto &l : all) who[l.field].insert(l.annotator);
  std::vector<double> u;
  for (std::uint32_t fi = 0; fi < fields.size(); ++fi) {
    if (who[fi].size() < 2) continue;  // one person: nothing to agree among
    std::vector<std::vector<double>> units;
    for (const auto &r : rows) {
      u.clear();
      for (std::uint32_t i = 0; i < r.labels_n; ++i)
        if (const Label &l = all[r.labels_at + i]; l.field == fi) u.push_back(l.code);
      if (u.size() >= 2) units.push_back(u);
    }
    const std::string &t = fields[fi].type;
    const auto level = t == "number"    ? stats::AlphaLevel::interval
                       : t == "ordinal" ? stats::AlphaLevel::ordinal
                                        : stats::AlphaLevel::nominal;
    json a = stat_json(stats::krippendorff_alpha(units, level));
    a["level"] = t == "number" ? "interval" : t == "ordinal" ? "ordinal" : "nominal";
    a["annotators"] = who[fi].size();
    a["units"] = units.size();
    out[fields[fi].name] = std::move(a);
  }
  return out;
}

}  // namespace evalgraph::agree
