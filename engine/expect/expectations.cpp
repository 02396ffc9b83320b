#include "expect/expectations.h"

#include "agree/labels.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>

#include "stats/stats.h"
#include "util/junit.h"

namespace evalgraph {

using nlohmann::json;

namespace {

// A record field as the checks see it: the node's declared outputs, or a dataset column.
struct FieldCheck {
  const Pipeline &p;
  const std::vector<const NodeTypeInfo *> &types;
  const std::vector<std::string> &columns;
  std::vector<Diagnostic> &diags;

  // The index of node `id` in p.nodes, or npos.
  std::size_t node_index(const std::string &id) const {
    for (std::size_t i = 0; i < p.nodes.size(); ++i)
      if (p.nodes[i].id == id) return i;
    return std::string::npos;
  }
  std::vector<std::string> node_ids() const {
    std::vector<std::string> ids;
    for (const auto &n : p.nodes) ids.push_back(n.id);
    return ids;
  }
  // Whether node `id` writes `field`; reports the problem at `at` otherwise.
  const NodeTypeInfo *output(const std::string &id, const std::string &field, const Location &at,
                             const std::string &what) const {
    const std::size_t i = node_index(id);
    if (i != std::string::npos && types[i] == nullptr) return nullptr;  // its unknown type is reported already
    const NodeTypeInfo *t = i == std::string::npos ? nullptr : types[i];
    if (t == nullptr) {
      bool sink = std::any_of(p.sinks.begin(), p.sinks.end(), [&](const NodeDecl &s) { return s.id == id; });
      diags.push_back({at, sink ? fmt::format("{}: '{}' is a sink; expect reads the outputs of nodes ({})", what, id,
                                              join_list(node_ids()))
                                : fmt::format("{}: the pipeline has no node '{}'{}; its nodes: {}", what, id,
                                              did_you_mean(id, node_ids()), join_list(node_ids()))});
      return nullptr;
    }
    const auto &w = t->writes;
    if (std::find(w.begin(), w.end(), "*") == w.end() && std::find(w.begin(), w.end(), field) == w.end()) {
      diags.push_back({at, fmt::format("{}: node '{}' ({}) has no output '{}'{}; its outputs: {}", what, id, t->name,
                                       field, did_you_mean(field, w), join_list(w))});
      return nullptr;
    }
    return t;
  }
};

// A value inside a record, read without building a DOM; a string without escapes is a view into the record.
struct Scalar {
  enum Kind { missing, null, boolean, number, string, composite } kind = missing;
  double num = 0;
  std::string_view raw;  // a string's content when it has no escapes
  std::string owned;     // else its unescaped content
  bool escaped = false;
  std::string_view str() const { return escaped ? std::string_view(owned) : raw; }
};

void read_scalar(std::string_view v, Scalar &s) {
  s.kind = Scalar::missing;
  if (v.empty()) return;
  switch (v[0]) {
    case 'n': s.kind = Scalar::null; break;
    case 't': s.kind = Scalar::boolean, s.num = 1; break;
    case 'f': s.kind = Scalar::boolean, s.num = 0; break;
    case '"': {
      s.escaped = v.find('\\') != std::string_view::npos;
      if (!s.escaped) {
        s.kind = Scalar::string, s.raw = v.substr(1, v.size() - 2);
        break;
      }
      json j = json::parse(v, nullptr, false);
      if (j.is_string()) s.kind = Scalar::string, s.owned = j.get<std::string>();
      break;
    }
    case '{':
    case '[': s.kind = Scalar::composite; break;
    default: {
      double d = 0;
      auto r = std::from_chars(v.data(), v.data() + v.size(), d);
      if (r.ec == std::errc()) s.kind = Scalar::number, s.num = d;
      else if (r.ec == std::errc::result_out_of_range) s.kind = Scalar::composite;  // 1e999: no finite value
    }
  }
}

template <class Want>
bool equal(const Scalar &s, const Want &w) {
  const json &want = w.value;
  switch (s.kind) {
    case Scalar::null: return want.is_null();
    case Scalar::boolean: return want.is_boolean() && want.template get<bool>() == (s.num == 1);
    case Scalar::number: return want.is_number() && want.template get<double>() == s.num;
    case Scalar::string: return want.is_string() ? want.template get_ref<const std::string &>() == s.str()
                                                 : !w.text.empty() && w.text == s.str();
    default: return false;
  }
}

template <class Want>
bool equal_any(const Scalar &s, const std::vector<Want> &any_of) {
  for (const auto &w : any_of)
    if (equal(s, w)) return true;
  return false;
}

// A member of an object as the gathering sees it: the key as written (field names are plain: no escapes to
// undo) and the value's text.
struct Field {
  std::string_view key, value;
};

// The end of the string starting at text[i] (the opening quote): the index after its closing quote.
std::size_t string_end(std::string_view text, std::size_t i) {
  for (++i; i < text.size(); ++i) {
    if (text[i] == '"') return i + 1;
    if (text[i] == '\\') ++i;  // an escape: skip the escaped character
  }
  return text.size();
}

// The members of a JSON object the engine wrote (records reaching the sinks are checked JSON already: no
// validation here, the reason this is several times faster than rawjson::object_members). False when `text`
// is not an object.
bool fields(std::string_view text, std::vector<Field> &out) {
  out.clear();
  auto ws = [&](std::size_t i) {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\n' || text[i] == '\t' || text[i] == '\r')) ++i;
    return i;
  };
  std::size_t i = ws(0);
  if (i >= text.size() || text[i] != '{') return false;
  i = ws(i + 1);
  if (i < text.size() && text[i] == '}') return true;
  while (i < text.size() && text[i] == '"') {
    const std::size_t k = string_end(text, i);
    Field f{text.substr(i + 1, k - i - 2), {}};
    i = ws(k);
    if (i >= text.size() || text[i] != ':') return false;
    i = ws(i + 1);
    const std::size_t start = i;
    int depth = 0;
    for (; i < text.size(); ++i) {
      const char c = text[i];
      if (c == '"') i = string_end(text, i) - 1;
      else if (c == '{' || c == '[') ++depth;
      else if (c == '}' || c == ']') {
        if (depth-- == 0) break;
      } else if (c == ',' && depth == 0) break;
    }
    std::size_t end = i;
    while (end > start && (text[end - 1] == ' ' || text[end - 1] == '\n' || text[end - 1] == '\t' || text[end - 1] == '\r')) --end;
    f.value = text.substr(start, end - start);
    out.push_back(f);
    if (i >= text.size()) return false;
    if (text[i] == '}') return true;
    i = ws(i + 1);
  }
  return false;
}

// The objects of one record split so far (a node's output is read by several expectations: split once).
struct Splits {
  std::vector<std::pair<const char *, std::vector<Field>>> done;
  std::size_t used = 0;
  void clear() { used = 0; }
  const std::vector<Field> *of(std::string_view obj) {
    for (std::size_t i = 0; i < used; ++i)
      if (done[i].first == obj.data()) return &done[i].second;
    if (used == done.size()) done.emplace_back();
    auto &slot = done[used];
    if (!fields(obj, slot.second)) return nullptr;
    slot.first = obj.data();
    return &done[used++].second;
  }
};

// The value at first.rest[0].rest[1]... of a record whose top-level members are `top`; empty when absent.
std::string_view find(const std::vector<Field> &top, std::string_view first, const std::vector<std::string> &rest,
                      Splits &splits) {
  std::string_view v;
  for (const auto &m : top)
    if (m.key == first) {
      v = m.value;
      break;
    }
  for (const auto &k : rest) {
    const std::vector<Field> *members = v.empty() || v[0] != '{' ? nullptr : splits.of(v);
    if (members == nullptr) return {};
    std::string_view next;
    for (const auto &m : *members)
      if (m.key == k) {
        next = m.value;
        break;
      }
    v = next;
  }
  return v;
}

std::string num(double v) {
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  return fmt::format("{:.4g}", v);
}

json finite_or_null(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

}  // namespace

void check_expectations(const Pipeline &p, const std::vector<const NodeTypeInfo *> &types,
                        const std::vector<std::string> &columns, std::vector<Diagnostic> &diags) {
  FieldCheck fc{p, types, columns, diags};
  for (const auto &d : p.expect) {
    if (d.node.empty() || d.path.empty() || !d.label_field.empty()) continue;  // the parser's, check_agreement's
    const std::string what = fmt::format("expect '{}'", d.metric);
    const NodeTypeInfo *t = fc.output(d.node, d.path[0], d.metric_at, what);
    if (t != nullptr && d.path.size() == 1) {
      const std::string type = t->output_type(d.path[0]);
      const bool share = d.stat == "share";
      if (type == "string" && !share)
        diags.push_back({d.stat_at, fmt::format("{}: '{}' is text; its {} means nothing — use stat: share with "
                                                "equals: \"...\"", what, d.path[0], d.stat)});
      else if (type == "boolean" && !share && d.stat != "mean")
        diags.push_back({d.stat_at, fmt::format("{}: '{}' is true/false; use stat: share (with equals: true or false) "
                                                "or mean (the share of true), not {}", what, d.path[0], d.stat)});
      else if (type == "array" || type == "object")
        diags.push_back({d.metric_at, fmt::format("{}: '{}' is {}; expect takes a number or a boolean{}", what,
                                                  d.path[0], type == "array" ? "a list" : "an object",
                                                  type == "object" ? " (name a key inside it: node.field.key)" : "")});
      else if (share && !type.empty()) {
        const json &e = d.equals;
        bool fits = e.is_null() || (type == "boolean" && e.is_boolean()) ||
                    ((type == "number" || type == "integer") && e.is_number()) || (type == "string" && e.is_string());
        if (!fits)
          diags.push_back({d.stat_at, fmt::format("{}: '{}' is {}, so no value equals {}{}", what, d.path[0], type,
                                                  e.dump(), e.is_boolean() && d.equals.get<bool>() ? " (the default "
                                                  "of equals; give equals: with a value of that type)" : "")});
      }
    }
    for (std::size_t i = 0; i < d.where.size(); ++i) {
      const std::string &f = d.where[i].first;
      if (std::find(columns.begin(), columns.end(), f) != columns.end()) continue;
      std::size_t dot = f.find('.');
      if (dot != std::string::npos && fc.node_index(f.substr(0, dot)) != std::string::npos) {
        std::string rest = f.substr(dot + 1);
        fc.output(f.substr(0, dot), rest.substr(0, rest.find('.')), d.where_at[i], what + " where");
        continue;
      }
      diags.push_back({d.where_at[i], fmt::format("{} where: '{}' is neither a column of the dataset{} nor a node's "
                                                  "output (node.field); columns: {}", what, f,
                                                  did_you_mean(f, columns), join_list(columns))});
    }
  }
}

void check_agreement(const Pipeline &p, const std::vector<const NodeTypeInfo *> &types,
                     const std::vector<std::string> &columns, std::vector<Diagnostic> &diags) {
  FieldCheck fc{p, types, columns, diags};
  const LabelsDecl &l = p.labels;
  auto field = [&](const std::string &name, const Location &at, const std::string &what) -> const LabelFieldDecl * {
    if (!l.declared) {
      diags.push_back({at, fmt::format("{}: the pipeline declares no labels; add labels: {{path: labels.jsonl, key: "
                                       "id, fields: {{{}: {{type: binary}}}}}}", what, name)});
      return nullptr;
    }
    const LabelFieldDecl *f = l.field(name);
    if (f == nullptr)
      diags.push_back({at, fmt::format("{}: '{}' is not a label field{}; labels.fields: {}", what, name,
                                       did_you_mean(name, l.field_names()), join_list(l.field_names()))});
    return f;
  };
  for (const auto &a : p.agreement) {
    const std::string what = fmt::format("agreement '{}'", a.display());
    if (!a.node.empty() && !a.path.empty()) fc.output(a.node, a.path[0], a.metric_at, what);
    const LabelFieldDecl *f = a.label.empty() ? nullptr : field(a.label, a.label_at, what);
    std::string why;
    if (f != nullptr && !a.positive.is_null() &&
        (f->type == "number" || !agree::code_label(*f, a.positive.dump(), why)))
      diags.push_back({a.at, fmt::format("{}: positive {} is not a value of label '{}' ({}{})", what, a.positive.dump(),
                                         a.label, f->type, why.empty() ? "" : ": " + why)});
  }
  for (const auto &d : p.expect) {
    if (d.label_field.empty()) continue;
    const std::string what = fmt::format("expect '{}'", d.label());
    if (!d.node.empty() && !d.path.empty()) fc.output(d.node, d.path[0], d.metric_at, what);
    field(d.label_field, d.label_at, what);
  }
  if (!l.declared || columns.empty()) return;
  const bool has_key = std::find(columns.begin(), columns.end(), l.key) != columns.end();
  if (!l.path.empty() && !has_key)
    diags.push_back({l.key_where, fmt::format("labels key '{}' is not a field of the data set{}; it names the record "
                                              "in both files. Columns: {}", l.key, did_you_mean(l.key, columns),
                                              join_list(columns))});
  if (l.path.empty())
    for (const auto &f : l.fields)
      if (std::find(columns.begin(), columns.end(), f.name) == columns.end())
        diags.push_back({f.at, fmt::format("label field '{}' is not a field of the data set (labels without path: "
                                           "are the records' own fields){}; columns: {}", f.name,
                                           did_you_mean(f.name, columns), join_list(columns))});
}

ExpectationSet::ExpectationSet(const std::vector<ExpectDecl> &decls) {
  auto wants = [](const json &v) {
    std::vector<Want> out;
    for (const json &x : v.is_array() ? v : json::array({v}))
      out.push_back({x, x.is_number() || x.is_boolean() ? x.dump() : std::string()});
    return out;
  };
  for (const auto &d : decls) {
    Item it;
    it.decl = &d;
    it.share = d.stat == "share";
    it.equals = wants(d.equals);
    for (const auto &[field, want] : d.where) {
      WherePath w{field, field, {}, wants(want)};
      if (std::size_t dot = field.find('.'); dot != std::string::npos) {
        w.first = field.substr(0, dot);
        for (std::size_t s = dot + 1;;) {
          std::size_t e = field.find('.', s);
          w.rest.push_back(field.substr(s, e == std::string::npos ? std::string::npos : e - s));
          if (e == std::string::npos) break;
          s = e + 1;
        }
      }
      it.where.push_back(std::move(w));
    }
    items_.push_back(std::move(it));
  }
}

void ExpectationSet::observe(std::string_view record) {
  thread_local std::vector<Field> top;
  thread_local Splits scratch;
  thread_local Scalar s;
  if (!fields(record, top)) return;
  scratch.clear();
  static const std::vector<std::string> kNone;
  std::lock_guard lk(mu_);
  for (auto &it : items_) {
    if (!it.decl->label_field.empty()) continue;  // judged from the agreement (judge_label_gate)
    bool match = true;
    for (const auto &w : it.where) {
      // A column of that very name (dots included) first, else node.field[.key].
      bool column = w.rest.empty() ||
                    std::any_of(top.begin(), top.end(), [&](const Field &m) { return m.key == w.field; });
      read_scalar(column ? find(top, w.field, kNone, scratch) : find(top, w.first, w.rest, scratch), s);
      if (!equal_any(s, w.any_of)) {
        match = false;
        break;
      }
    }
    if (!match) continue;
    read_scalar(find(top, it.decl->node, it.decl->path, scratch), s);
    if (s.kind == Scalar::missing || s.kind == Scalar::null) {
      ++it.missing;
      continue;
    }
    if (it.share) {
      ++it.present;
      it.hits += equal_any(s, it.equals) ? 1 : 0;
      continue;
    }
    if (s.kind != Scalar::number && s.kind != Scalar::boolean) {
      ++it.not_numeric;
      continue;
    }
    it.booleans += s.kind == Scalar::boolean ? 1 : 0;
    it.values.push_back(s.num);
  }
}

namespace {

// An entry's statistic over its n values, with its interval (none for min and max) and how it was computed.
struct Estimate {
  double value = 0;
  stats::Interval ci{NAN, NAN};
  std::string method;
  double level = 0.95;
};

Estimate estimate(const ExpectDecl &d, const std::vector<double> &values, std::size_t booleans, std::size_t hits,
                  std::size_t n) {
  Estimate e;
  e.level = d.confidence > 0 ? d.confidence : 0.95;  // the interval is shown even when not judged
  if (d.stat == "share") {
    e.value = static_cast<double>(hits) / static_cast<double>(n);
    e.ci = stats::wilson_interval(hits, n, e.level);
    e.method = "Wilson score interval of the share";
  } else if (d.stat == "mean" && booleans == n) {
    e.value = stats::mean(values);
    e.ci = stats::wilson_interval(static_cast<std::uint64_t>(std::llround(e.value * static_cast<double>(n))), n, e.level);
    e.method = "Wilson score interval of the share of true";
  } else if (d.stat == "mean") {
    e.value = stats::mean(values);
    e.ci = stats::mean_interval(values, e.level);
    e.method = "mean ± z·sd/√n";
  } else {
    std::vector<double> s = values;
    std::sort(s.begin(), s.end());
    if (d.stat == "min") e.value = s.front();
    else if (d.stat == "max") e.value = s.back();
    else {
      e.value = stats::quantile_sorted(s, d.quantile);
      e.ci = stats::quantile_interval(s, d.quantile, e.level);
      e.method = "order statistics (exact binomial ranks)";
    }
  }
  return e;
}

// Why the entry fails, "" when it passes: the point value, or with `confidence` the interval's end on the
// bound's side, against min and max.
std::string failure(const ExpectDecl &d, const Estimate &e, std::size_t n, std::size_t missing, std::size_t not_numeric) {
  const bool judged_interval = d.confidence > 0;
  const double lo = judged_interval ? e.ci.low : e.value, hi = judged_interval ? e.ci.high : e.value;
  if (n == 0)
    return fmt::format("no record{} had a value for {} ({} missing{})", d.where.empty() ? "" : " matching where",
                       d.metric, missing, not_numeric > 0 ? fmt::format(", {} not numbers", not_numeric) : "");
  if (d.has_min && !(lo >= d.min))
    return judged_interval ? fmt::format("the {:g} % interval's lower end {} is below the minimum {} ({} {})",
                                         d.confidence * 100, num(lo), num(d.min), d.stat, num(e.value))
                           : fmt::format("{} {} is below the minimum {}", d.stat, num(e.value), num(d.min));
  if (d.has_max && !(hi <= d.max))
    return judged_interval ? fmt::format("the {:g} % interval's upper end {} is above the maximum {} ({} {})",
                                         d.confidence * 100, num(hi), num(d.max), d.stat, num(e.value))
                           : fmt::format("{} {} is above the maximum {}", d.stat, num(e.value), num(d.max));
  return "";
}

}  // namespace

namespace {

// An `expect:` entry with `label:`, judged from the agreement's statistics (their 95 % intervals).
json judge_label_gate(const ExpectDecl &d, const json *agreement) {
  json r = {{"name", d.label()}, {"metric", d.metric.empty() ? d.label_field : d.metric}, {"label", d.label_field},
            {"stat", d.stat}, {"where", json::object()}, {"missing", 0}, {"line", d.at.str()}};
  if (d.has_min) r["min"] = d.min;
  if (d.has_max) r["max"] = d.max;
  if (d.confidence > 0) r["confidence"] = d.confidence;
  r["judged"] = d.confidence > 0 ? "interval" : "value";
  json stat;
  std::string why;
  if (agreement == nullptr || agreement->is_null()) {
    why = "no agreement was computed (the run has no labels)";
  } else if (d.stat == "alpha") {
    const json &a = (*agreement)["alpha"];
    if (a.contains(d.label_field)) stat = a[d.label_field];
    else why = fmt::format("label '{}' has no records labelled by two or more people: alpha needs several annotators",
                           d.label_field);
  } else {
    for (const auto &e : (*agreement)["entries"])
      if (e["metric"] == d.metric && e["label"] == d.label_field) {
        r["missing"] = e["left_out"].value("metric_missing", 0);  // labelled records without the metric
        if (e["stats"].contains(d.stat)) stat = e["stats"][d.stat];
        else why = fmt::format("{} does not apply to {} vs label '{}' ({}; it has {})", d.stat, d.metric,
                               d.label_field, e["kind"].get<std::string>(), join_list([&] {
                                 std::vector<std::string> k;
                                 for (const auto &[name, v] : e["stats"].items()) k.push_back(name);
                                 return k;
                               }()));
      }
  }
  r["n"] = stat.is_object() ? stat.value("n", json(0)) : json(0);
  r["value"] = nullptr;
  if (stat.is_object() && !stat.value("defined", false) && why.empty())
    why = fmt::format("{} is not defined: {}", d.stat, stat.value("why", std::string("?")));
  if (why.empty() && stat.is_object()) {
    const double v = stat["value"], lo = stat["low"], hi = stat["high"];
    r["value"] = v;
    r["interval"] = {lo, hi};
    r["interval_level"] = 0.95;
    r["interval_method"] = stat.value("method", "");
    // The bounds are judged as for any expectation: the value, or with confidence the interval's end.
    why = failure(d, Estimate{v, {lo, hi}, stat.value("method", std::string()), 0.95}, stat.value("n", std::size_t{1}), 0, 0);
  }
  r["passed"] = why.empty();
  if (!why.empty()) r["message"] = why;
  return r;
}

}  // namespace

json ExpectationSet::evaluate(const json *agreement) const {
  std::lock_guard lk(mu_);
  json results = json::array();
  std::size_t failed = 0;
  for (const auto &it : items_) {
    const ExpectDecl &d = *it.decl;
    if (!d.label_field.empty()) {
      results.push_back(judge_label_gate(d, agreement));
      if (!results.back()["passed"].get<bool>()) ++failed;
      continue;
    }
    json r = {{"name", d.label()},     {"metric", d.metric},  {"stat", d.stat},
              {"where", json::object()}, {"missing", it.missing}, {"line", d.at.str()}};
    for (const auto &[f, v] : d.where) r["where"][f] = v;
    if (d.stat == "share") r["equals"] = d.equals;
    if (d.has_min) r["min"] = d.min;
    if (d.has_max) r["max"] = d.max;
    if (d.confidence > 0) r["confidence"] = d.confidence;
    if (it.not_numeric > 0) r["not_numeric"] = it.not_numeric;

    const std::size_t n = d.stat == "share" ? it.present : it.values.size();
    r["n"] = n;
    Estimate e;
    if (n > 0) {
      e = estimate(d, it.values, it.booleans, it.hits, n);
      r["value"] = e.value;
      if (!e.method.empty()) {
        r["interval"] = {finite_or_null(e.ci.low), finite_or_null(e.ci.high)};
        r["interval_level"] = e.level;
        r["interval_method"] = e.method;
      }
    } else {
      r["value"] = nullptr;
    }
    std::string why = failure(d, e, n, it.missing, it.not_numeric);
    r["judged"] = d.confidence > 0 ? "interval" : "value";
    r["passed"] = why.empty();
    if (!why.empty()) {
      r["message"] = why;
      ++failed;
    }
    results.push_back(std::move(r));
  }
  return {{"passed", failed == 0}, {"failed", failed}, {"total", items_.size()}, {"results", results}};
}

namespace {

std::string bound_text(const json &r) {
  std::string b;
  if (r.contains("min")) b += "≥ " + num(r["min"].get<double>());
  if (r.contains("max")) b += std::string(b.empty() ? "" : ", ") + "≤ " + num(r["max"].get<double>());
  return b;
}

std::string value_text(const json &r) {
  if (r["value"].is_null()) return "—";
  std::string v = num(r["value"].get<double>());
  if (r.contains("interval")) {
    auto end = [](const json &x, const char *inf) { return x.is_null() ? std::string(inf) : num(x.get<double>()); };
    v += fmt::format(" [{}, {}]", end(r["interval"][0], "-inf"), end(r["interval"][1], "inf"));
  }
  return v;
}

}  // namespace

std::string expectations_text(const json &verdict) {
  std::vector<std::array<std::string, 5>> rows{{"", "expectation", "value [interval]", "bound", "n"}};
  for (const auto &r : verdict["results"])
    rows.push_back({r["passed"].get<bool>() ? "PASS" : "FAIL", r["name"].get<std::string>(), value_text(r),
                    bound_text(r) + (r["judged"] == "interval" ? fmt::format(" ({:g} % interval)",
                                                                             r["confidence"].get<double>() * 100)
                                                               : ""),
                    std::to_string(r["n"].get<std::size_t>())});
  // Column widths in code points (the bounds hold '≥').
  auto width = [](const std::string &s) {
    return static_cast<std::size_t>(std::count_if(s.begin(), s.end(), [](char c) { return (c & 0xC0) != 0x80; }));
  };
  std::array<std::size_t, 5> w{};
  for (const auto &row : rows)
    for (std::size_t c = 0; c < 5; ++c) w[c] = std::max(w[c], width(row[c]));
  std::string o = fmt::format("expectations: {} of {} passed\n",
                              verdict["total"].get<std::size_t>() - verdict["failed"].get<std::size_t>(),
                              verdict["total"].get<std::size_t>());
  for (const auto &row : rows) {
    o += " ";
    for (std::size_t c = 0; c < 5; ++c) o += " " + row[c] + std::string(w[c] - width(row[c]), ' ');
    while (!o.empty() && o.back() == ' ') o.pop_back();
    o += "\n";
  }
  for (const auto &r : verdict["results"])
    if (!r["passed"].get<bool>())
      o += fmt::format("  FAIL {}: {} ({})\n", r["name"].get<std::string>(), r["message"].get<std::string>(),
                       r["line"].get<std::string>());
  return o;
}

std::string expectations_markdown(const json &verdict, const std::string &title) {
  auto cell = [](std::string s) {
    std::string o;
    for (char c : s) o += c == '|' ? std::string("\\|") : c == '\n' ? std::string(" ") : std::string(1, c);
    return o;
  };
  const bool ok = verdict["passed"].get<bool>();
  std::string o = fmt::format("### {} {}: {} of {} expectations passed\n\n", ok ? "✅" : "❌", cell(title),
                              verdict["total"].get<std::size_t>() - verdict["failed"].get<std::size_t>(),
                              verdict["total"].get<std::size_t>());
  o += "| | expectation | value [interval] | bound | n | |\n|---|---|---|---|---:|---|\n";
  for (const auto &r : verdict["results"])
    o += fmt::format("| {} | {} | {} | {}{} | {} | {} |\n", r["passed"].get<bool>() ? "✅" : "❌",
                     cell(r["name"].get<std::string>()), value_text(r), bound_text(r),
                     r["judged"] == "interval" ? fmt::format(" ({:g} % interval)", r["confidence"].get<double>() * 100) : "",
                     r["n"].get<std::size_t>(), cell(r.value("message", std::string())));
  return o + "\n";
}

std::string expectations_junit(const json &verdict, const std::string &pipeline, double seconds) {
  std::vector<junit::Case> cases;
  for (const auto &r : verdict["results"]) {
    junit::Case c;
    c.classname = "evalgraph.expect." + pipeline;
    c.name = r["name"].get<std::string>();
    c.failed = !r["passed"].get<bool>();
    std::string detail = fmt::format("{} {} = {} (n = {}, {} missing); bound {}; judged: the {}; {}", r["metric"].get<std::string>(),
                                     r["stat"].get<std::string>(), value_text(r), r["n"].get<std::size_t>(),
                                     r["missing"].get<std::size_t>(), bound_text(r), r["judged"].get<std::string>(),
                                     r["line"].get<std::string>());
    if (c.failed) {
      c.message = r["message"].get<std::string>();
      c.details = c.message + "\n" + detail;
    } else {
      c.details = detail;
    }
    cases.push_back(std::move(c));
  }
  return junit::document("evalgraph expect: " + pipeline, cases, seconds);
}

bool announce_expectations(const json &verdict, const std::string &pipeline, bool quiet) {
  if (!verdict.is_object() || !verdict.contains("results")) return true;
  if (!quiet) std::fputs(expectations_text(verdict).c_str(), stderr);
  if (const char *summary = std::getenv("GITHUB_STEP_SUMMARY"); summary != nullptr && *summary != '\0') {
    std::ofstream out(summary, std::ios::app);
    out << expectations_markdown(verdict, pipeline);
    if (!out)
      std::fprintf(stderr, "evalgraph: warning: could not append to GITHUB_STEP_SUMMARY (%s)\n", summary);
  }
  return verdict.value("passed", true);
}

}  // namespace evalgraph
