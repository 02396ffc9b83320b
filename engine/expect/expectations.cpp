#include "expect/expectations.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>

#include "compare/stats.h"
#include "util/junit.h"
#include "util/raw_json.h"

namespace evalgraph {

using nlohmann::json;

namespace {

std::string join(const std::vector<std::string> &v) {
  std::string s;
  for (const auto &x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

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
                                              join(node_ids()))
                                : fmt::format("{}: the pipeline has no node '{}'{}; its nodes: {}", what, id,
                                              did_you_mean(id, node_ids()), join(node_ids()))});
      return nullptr;
    }
    const auto &w = t->writes;
    if (std::find(w.begin(), w.end(), "*") == w.end() && std::find(w.begin(), w.end(), field) == w.end()) {
      diags.push_back({at, fmt::format("{}: node '{}' ({}) has no output '{}'{}; its outputs: {}", what, id, t->name,
                                       field, did_you_mean(field, w), join(w))});
      return nullptr;
    }
    return t;
  }
};

// A value inside a record, read without building a DOM.
struct Scalar {
  enum Kind { missing, null, boolean, number, string, composite } kind = missing;
  double num = 0;
  std::string str;
};

Scalar read_scalar(std::string_view v) {
  Scalar s;
  if (v.empty()) return s;
  switch (v[0]) {
    case 'n': s.kind = Scalar::null; break;
    case 't': s.kind = Scalar::boolean, s.num = 1; break;
    case 'f': s.kind = Scalar::boolean, s.num = 0; break;
    case '"': {
      json j = json::parse(v, nullptr, false);
      if (j.is_string()) s.kind = Scalar::string, s.str = j.get<std::string>();
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
  return s;
}

bool equal(const Scalar &s, const json &want) {
  if (want.is_array()) return std::any_of(want.begin(), want.end(), [&](const json &w) { return equal(s, w); });
  switch (s.kind) {
    case Scalar::null: return want.is_null();
    case Scalar::boolean: return want.is_boolean() && want.get<bool>() == (s.num == 1);
    case Scalar::number: return want.is_number() && want.get<double>() == s.num;
    // A CSV field is text: `where: {year: 2024}` matches "2024" as YAML wrote the number.
    case Scalar::string:
      return want.is_string() ? want.get_ref<const std::string &>() == s.str
                              : (want.is_number() || want.is_boolean()) && want.dump() == s.str;
    default: return false;
  }
}

// The value at keys[0].keys[1]... of an object's members (`top`, of `text`); empty when absent.
std::string_view find(std::string_view text, const std::vector<rawjson::Member> &top, const std::string &first,
                      const std::vector<std::string> &rest, std::vector<rawjson::Member> &scratch) {
  std::string_view v;
  for (const auto &m : top)
    if (m.key == first) v = text.substr(m.value.off, m.value.len);
  for (const auto &k : rest) {
    if (v.empty() || v[0] != '{' || !rawjson::object_members(v, scratch)) return {};
    std::string_view next;
    for (const auto &m : scratch)
      if (m.key == k) next = v.substr(m.value.off, m.value.len);
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
    if (d.node.empty() || d.path.empty()) continue;  // reported by the parser
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
                                                  did_you_mean(f, columns), join(columns))});
    }
  }
}

ExpectationSet::ExpectationSet(const std::vector<ExpectDecl> &decls) {
  for (const auto &d : decls) items_.push_back({&d, {}, 0, 0, 0, 0, 0});
}

void ExpectationSet::observe(std::string_view record) {
  thread_local std::vector<rawjson::Member> top, scratch;
  if (!rawjson::object_members(record, top)) return;
  std::lock_guard lk(mu_);
  for (auto &it : items_) {
    const ExpectDecl &d = *it.decl;
    bool match = true;
    for (const auto &[field, want] : d.where) {
      std::size_t dot = field.find('.');
      bool column = std::any_of(top.begin(), top.end(), [&](const rawjson::Member &m) { return m.key == field; });
      std::string_view v;
      if (column || dot == std::string::npos) {
        v = find(record, top, field, {}, scratch);
      } else {
        std::vector<std::string> rest;
        for (std::size_t s = dot + 1;;) {
          std::size_t e = field.find('.', s);
          rest.push_back(field.substr(s, e == std::string::npos ? std::string::npos : e - s));
          if (e == std::string::npos) break;
          s = e + 1;
        }
        v = find(record, top, field.substr(0, dot), rest, scratch);
      }
      if (!equal(read_scalar(v), want)) {
        match = false;
        break;
      }
    }
    if (!match) continue;
    Scalar s = read_scalar(find(record, top, d.node, d.path, scratch));
    if (s.kind == Scalar::missing || s.kind == Scalar::null) {
      ++it.missing;
      continue;
    }
    if (d.stat == "share") {
      ++it.present;
      it.hits += equal(s, d.equals) ? 1 : 0;
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

json ExpectationSet::evaluate() const {
  std::lock_guard lk(mu_);
  json results = json::array();
  std::size_t failed = 0;
  for (const auto &it : items_) {
    const ExpectDecl &d = *it.decl;
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
    double value = 0;
    stats::Interval ci{NAN, NAN};
    std::string method;
    if (n > 0) {
      const double level = d.confidence > 0 ? d.confidence : 0.95;  // the interval is shown even when not judged
      if (d.stat == "share") {
        value = static_cast<double>(it.hits) / static_cast<double>(n);
        ci = stats::wilson_interval(it.hits, n, level);
        method = "Wilson score interval of the share";
      } else if (d.stat == "mean" && it.booleans == n) {
        value = stats::mean(it.values);
        ci = stats::wilson_interval(static_cast<std::uint64_t>(std::llround(value * static_cast<double>(n))), n, level);
        method = "Wilson score interval of the share of true";
      } else if (d.stat == "mean") {
        value = stats::mean(it.values);
        ci = stats::mean_interval(it.values, level);
        method = "mean ± z·sd/√n";
      } else {
        std::vector<double> s = it.values;
        std::sort(s.begin(), s.end());
        if (d.stat == "min") value = s.front();
        else if (d.stat == "max") value = s.back();
        else {
          value = stats::quantile_sorted(s, d.quantile);
          ci = stats::quantile_interval(s, d.quantile, level);
          method = "order statistics (exact binomial ranks)";
        }
      }
      r["value"] = value;
      if (!method.empty()) {
        r["interval"] = {finite_or_null(ci.low), finite_or_null(ci.high)};
        r["interval_level"] = level;
        r["interval_method"] = method;
      }
    } else {
      r["value"] = nullptr;
    }

    // The verdict: the point value, or with `confidence` the interval's end on the bound's side.
    const bool judged_interval = d.confidence > 0;
    const double lo = judged_interval ? ci.low : value, hi = judged_interval ? ci.high : value;
    std::string why;
    if (n == 0) {
      why = fmt::format("no record{} had a value for {} ({} missing{})", d.where.empty() ? "" : " matching where",
                        d.metric, it.missing, it.not_numeric > 0 ? fmt::format(", {} not numbers", it.not_numeric) : "");
    } else if (d.has_min && !(lo >= d.min)) {
      why = judged_interval ? fmt::format("the {:g} % interval's lower end {} is below the minimum {} ({} {})",
                                          d.confidence * 100, num(lo), num(d.min), d.stat, num(value))
                            : fmt::format("{} {} is below the minimum {}", d.stat, num(value), num(d.min));
    } else if (d.has_max && !(hi <= d.max)) {
      why = judged_interval ? fmt::format("the {:g} % interval's upper end {} is above the maximum {} ({} {})",
                                          d.confidence * 100, num(hi), num(d.max), d.stat, num(value))
                            : fmt::format("{} {} is above the maximum {}", d.stat, num(value), num(d.max));
    }
    r["judged"] = judged_interval ? "interval" : "value";
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
