// `expect:` entries as written: their shape here; whether their nodes, fields and stats fit the plugins is
// checked with the plan (expect/expectations.cpp). An entry with `label:` gates on agreement with people.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>

#include "config/yaml_parse.h"

namespace evalgraph::config_detail {

namespace {

// `stat:` — mean, median, min, max, share or a percentile p1 ... p99 (kept as its quantile).
void parse_expect_stat(Ctx &ctx, const YAML::Node &st, ExpectDecl &d) {
  d.stat = scalar(ctx, st, "expect 'stat'");
  d.stat_at = ctx.at(st);
  const std::string &s = d.stat;
  int pct = 0;
  bool is_p = s.size() >= 2 && s.size() <= 3 && s[0] == 'p' &&
              std::all_of(s.begin() + 1, s.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
  if (is_p) pct = std::atoi(s.c_str() + 1);
  if (is_p && pct >= 1 && pct <= 99)
    d.quantile = pct / 100.0;
  else if (s == "median")
    d.quantile = 0.5;
  else if (s != "mean" && s != "min" && s != "max" && s != "share")
    ctx.error(st, fmt::format("unknown expect stat '{}'{}; use mean, median, min, max, p1 ... p99 (e.g. p5, p95) or "
                              "share (with equals)",
                              s, did_you_mean(s, {"mean", "median", "min", "max", "share"})));
}

// A finite number under `key`; false (with a message when it is there but no number) otherwise.
bool expect_number(Ctx &ctx, const YAML::Node &n, const char *key, double &v) {
  auto x = n[key];
  if (!x) return false;
  json j = to_json(ctx, x, nullptr, "");
  if (!j.is_number() || !std::isfinite(j.get<double>())) {
    ctx.error(x, fmt::format("expect '{}' must be a number", key));
    return false;
  }
  v = j.get<double>();
  return true;
}

// min, max, equals and confidence, each checked against the stat they go with.
void parse_expect_bounds(Ctx &ctx, const YAML::Node &n, ExpectDecl &d) {
  d.has_min = expect_number(ctx, n, "min", d.min);
  d.has_max = expect_number(ctx, n, "max", d.max);
  if (!n["min"] && !n["max"])
    ctx.error(n, fmt::format("expect '{}' needs a bound: min, max or both (e.g. min: 0.6)", d.metric));
  if (d.has_min && d.has_max && d.min > d.max)
    ctx.error(n["min"], fmt::format("expect '{}': min {} is above max {}; nothing could pass", d.metric, d.min, d.max));
  if (auto eq = n["equals"]) {
    d.equals = to_json(ctx, eq, nullptr, "");
    if (d.stat != "share")
      ctx.error(eq, "expect 'equals' goes with stat: share (the share of records whose value equals it)");
    else if (d.equals.is_object() || d.equals.is_array())
      ctx.error(eq, "expect 'equals' must be one value (true, a number or a text)");
  }
  if (d.stat == "share" && ((d.has_min && (d.min < 0 || d.min > 1)) || (d.has_max && (d.max < 0 || d.max > 1))))
    ctx.error(n, "a share lies between 0 and 1: give min/max as fractions (0.05 for 5 %)");
  if (auto c = n["confidence"]) {
    if (expect_number(ctx, n, "confidence", d.confidence) && !(d.confidence >= 0.5 && d.confidence < 1)) {
      ctx.error(c, "expect 'confidence' is the interval's level, from 0.5 to below 1 (e.g. 0.95)");
      d.confidence = 0;
    } else if (d.stat == "min" || d.stat == "max") {
      ctx.error(c, fmt::format("stat {} has no interval; use p5 or p95 with confidence, or drop confidence", d.stat));
    }
  }
}

// `where: {field: value or [values]}` — which records the entry judges.
void parse_expect_where(Ctx &ctx, const YAML::Node &w, ExpectDecl &d) {
  if (!expect(ctx, w, YAML::NodeType::Map, "expect 'where' (field: value)")) return;
  for (const auto &kv : w) {
    json v = to_json(ctx, kv.second, nullptr, "");
    bool ok = v.is_primitive() || (v.is_array() && !v.empty() &&
                                   std::all_of(v.begin(), v.end(), [](const json &x) { return x.is_primitive(); }));
    if (!ok) ctx.error(kv.second, "expect 'where' compares a field with one value or a list of values (any of them)");
    d.where.emplace_back(kv.first.Scalar(), v);
    d.where_at.push_back(ctx.at(kv.first));
  }
}

// An entry with `label:` gates on an agreement statistic (docs/agreement.md); `alpha` needs no metric.
void parse_label_gate(Ctx &ctx, const YAML::Node &n, ExpectDecl &d) {
  const YAML::Node l = n["label"];
  d.label_field = scalar(ctx, l, "expect 'label'");
  d.label_at = ctx.at(l);
  if (!n["stat"]) {
    ctx.error(n, fmt::format("an 'expect' entry with label: needs a stat: one of {}", join_list(kLabelGateStats)));
    return;
  }
  d.stat = scalar(ctx, n["stat"], "expect 'stat'");
  d.stat_at = ctx.at(n["stat"]);
  if (std::find(kLabelGateStats.begin(), kLabelGateStats.end(), d.stat) == kLabelGateStats.end())
    ctx.error(n["stat"], fmt::format("unknown agreement stat '{}'{}; use one of {}", d.stat,
                                     did_you_mean(d.stat, kLabelGateStats), join_list(kLabelGateStats)));
  if (d.stat == "alpha" && n["metric"])
    ctx.error(n["metric"], "stat: alpha is the people's agreement among themselves; it takes no metric");
  if (d.stat != "alpha" && !n["metric"])
    ctx.error(n, fmt::format("expect stat {} compares a metric with label '{}': add metric: node.field", d.stat,
                             d.label_field));
  if (auto c = n["confidence"]; c && c.IsScalar() && c.Scalar() != "0.95")
    ctx.error(c,
              "an agreement gate judges the statistic's 95 % interval: write confidence: 0.95 (or leave it out to "
              "judge the value)");
  for (const char *k : {"where", "equals"})
    if (n[k])
      ctx.error(n[k], fmt::format("expect '{}' does not go with label: (agreement is over every labelled record)", k));
}

}  // namespace

// `metric: node.field[.sub...]` split into the node and the path inside its output.
void parse_metric(Ctx &ctx, const YAML::Node &m, const char *what, std::string &metric, std::string &node,
                  std::vector<std::string> &path) {
  metric = scalar(ctx, m, what);
  if (!split_metric(metric, node, path))
    ctx.error(m, fmt::format("{} '{}' must name a node's output as node.field, e.g. o0.O0", what, metric));
}

// One entry of `expect:`: its shape here; whether its node, field and stat fit the plugins is checked with the
// plan (expect/expectations.cpp).
void parse_expect(Ctx &ctx, const YAML::Node &n, std::vector<ExpectDecl> &out) {
  if (!expect(ctx, n, YAML::NodeType::Map, "an 'expect' entry ({metric: node.field, stat: mean, min: 0.5})")) return;
  check_keys(ctx, n, {"metric", "stat", "min", "max", "equals", "confidence", "where", "name", "label"},
             "an 'expect' entry");
  ExpectDecl d;
  d.at = d.metric_at = d.stat_at = d.label_at = ctx.at(n);
  if (auto m = n["metric"]) {
    d.metric_at = ctx.at(m);
    parse_metric(ctx, m, "expect metric", d.metric, d.node, d.path);
  } else if (!n["label"]) {
    ctx.error(n, "an 'expect' entry needs 'metric: node.field', e.g. {metric: o0.O0, stat: mean, min: 0.6}");
  }
  if (n["label"])
    parse_label_gate(ctx, n, d);
  else if (auto st = n["stat"])
    parse_expect_stat(ctx, st, d);
  if (auto nm = n["name"]) d.name = scalar(ctx, nm, "expect 'name'");
  parse_expect_bounds(ctx, n, d);
  if (auto w = n["where"]) parse_expect_where(ctx, w, d);
  out.push_back(std::move(d));
}

}  // namespace evalgraph::config_detail

namespace evalgraph {

bool split_metric(const std::string &metric, std::string &node, std::vector<std::string> &path) {
  node.clear();
  path.clear();
  std::size_t start = 0;
  for (;;) {
    std::size_t dot = metric.find('.', start);
    std::string part = metric.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (start == 0) node = part;
    else path.push_back(part);
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return !node.empty() && !path.empty() &&
         std::none_of(path.begin(), path.end(), [](const std::string &x) { return x.empty(); });
}

}  // namespace evalgraph
