// `evalgraph compare`: the comparison as the table printed by default and as compare.html (compare.h).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "compare/compare.h"
#include "compare/compare_internal.h"

namespace evalgraph::compare {

using nlohmann::json;

namespace detail {

std::string num(double v, int prec) {
  if (std::isnan(v)) return "-";
  std::string s = fmt::format("{:.{}f}", v, prec);
  return s == "-0.0000" ? "0.0000" : s;
}

std::string pval(double p) { return p < 0.0001 ? fmt::format("{:.1e}", p) : fmt::format("{:.4f}", p); }

std::string show(const json &v) {
  if (v.is_null()) return "(absent)";
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_float()) return num(v.get<double>());
  return v.dump();
}

}  // namespace detail

using detail::num;
using detail::pval;
using detail::show;

std::string text_report(const json &c) {
  std::string o;
  o += fmt::format("A: {} ({}, {} records)\n", c["a"]["path"].get<std::string>(), c["a"]["pipeline"].get<std::string>(),
                   c["a"]["records"].get<std::size_t>());
  o += fmt::format("B: {} ({}, {} records)\n", c["b"]["path"].get<std::string>(), c["b"]["pipeline"].get<std::string>(),
                   c["b"]["records"].get<std::size_t>());
  o += fmt::format("paired by {}: {} pairs; unpaired: {} only in A, {} only in B\n", c["paired_by"].get<std::string>(),
                   c["n_paired"].get<std::size_t>(), c["unpaired_a"].get<std::size_t>(), c["unpaired_b"].get<std::size_t>());
  for (const char *side : {"a", "b"}) {
    const json &ids = c[std::string("unpaired_") + side + "_ids"];
    if (ids.empty()) continue;
    std::string list;
    for (std::size_t i = 0; i < ids.size() && i < 10; ++i) list += (i ? ", " : "") + ids[i].get<std::string>();
    if (ids.size() > 10) list += fmt::format(", ... and {} more (--json lists all)", ids.size() - 10);
    o += fmt::format("  only in {}: {}\n", side[0] == 'a' ? "A" : "B", list);
  }
  if (!c["parameter_differences"].empty()) {
    o += "settings that differ (A -> B):\n";
    for (const auto &d : c["parameter_differences"]) o += fmt::format("  {}: {} -> {}\n", d["path"].get<std::string>(), show(d["a"]), show(d["b"]));
  } else {
    o += "settings: identical (pipeline, dataset, node types, plugin versions, parameters)\n";
  }
  o += fmt::format("\n95% CI: paired bootstrap, {} resamples, seed {}; p: Wilcoxon signed-rank (numbers), exact McNemar (booleans)\n\n",
                   c["bootstrap"]["resamples"].get<int>(), c["bootstrap"]["seed"].get<std::uint64_t>());
  std::size_t w = 6;
  for (const auto &m : c["metrics"]) w = std::max(w, m["node"].get<std::string>().size() + 1 + m["field"].get<std::string>().size());
  w = std::min<std::size_t>(w, 48);
  o += fmt::format("{:<{}}  {:>6}  {:>8}  {:>8}  {:>8}  {:>20}  {:>8}  {}\n", "metric", w, "n", "mean_a", "mean_b", "diff", "95% CI", "p", "test");
  std::size_t constant = 0;
  for (const auto &m : c["metrics"]) {
    std::string name = m["node"].get<std::string>() + "." + m["field"].get<std::string>();
    if (m.value("constant", false)) {
      ++constant;
      continue;
    }
    if (m["diff"].is_null()) {
      o += fmt::format("{:<{}}  {:>6}  (no paired values)\n", name, w, 0);
      continue;
    }
    std::string ci = fmt::format("[{}, {}]", num(m["ci_low"].get<double>()), num(m["ci_high"].get<double>()));
    double p = m["p_value"].get<double>();
    o += fmt::format("{:<{}}  {:>6}  {:>8}  {:>8}  {:>8}  {:>20}  {:>8}{} {}\n", name, w, m["n"].get<std::size_t>(),
                     num(m["mean_a"].get<double>()), num(m["mean_b"].get<double>()), num(m["diff"].get<double>()), ci,
                     pval(p), p < 0.05 ? "*" : " ", m["test"].get<std::string>() == "mcnemar_exact" ? "McNemar" : "Wilcoxon");
  }
  if (c["metrics"].empty()) o += "(no numeric or boolean node output that both runs have)\n";
  if (!c["metrics_in_one_run_only"].empty()) {
    std::string a, b;
    for (const auto &m : c["metrics_in_one_run_only"]) {
      std::string &list = m["in"] == "a" ? a : b;
      if (!list.empty()) list += ", ";
      list += m["node"].get<std::string>() + "." + m["field"].get<std::string>();
    }
    if (!a.empty()) o += "values only in A (not compared): " + a + "\n";
    if (!b.empty()) o += "values only in B (not compared): " + b + "\n";
  }
  o += fmt::format("(* p < 0.05; {} paired records changed in at least one value", c["records_changed"].get<std::size_t>());
  if (constant > 0) o += fmt::format("; {} values that are the same constant in every record of both runs are not shown, --json lists them", constant);
  o += ")\n";
  if (!c["changed"].empty()) {
    o += "\nchanged most:\n";
    for (const auto &ch : c["changed"]) {
      std::string vals;
      std::size_t k = 0;
      for (const auto &v : ch["values"]) {
        if (k++ == 4) {
          vals += fmt::format(" ... ({} in all)", ch["values"].size());
          break;
        }
        vals += fmt::format("  {}.{} {} -> {}", v["node"].get<std::string>(), v["field"].get<std::string>(), show(v["a"]), show(v["b"]));
      }
      o += fmt::format("  {}:{}\n", ch["id"].get<std::string>(), vals);
    }
  }
  return o;
}

namespace {

std::string esc(const std::string &s) {
  std::string o;
  o.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      default: o += c;
    }
  }
  return o;
}

constexpr const char *kHtmlHead = R"(<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>evalgraph compare</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;color:#1d2330;background:#f6f7f9}
header{background:#1d2330;color:#fff;padding:14px 24px}header h1{margin:0;font-size:20px}header .sub{opacity:.8;font-size:13px}
main{padding:16px 24px;max-width:1400px}section{background:#fff;border:1px solid #dde1e8;border-radius:6px;padding:12px 16px;margin-bottom:16px}
h2{font-size:16px;margin:0 0 8px}table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:4px 8px;border-bottom:1px solid #eef0f3;vertical-align:top}
th{background:#f0f2f5;font-weight:600}td.n{text-align:right;font-variant-numeric:tabular-nums}.sig{font-weight:700;color:#b3261e}
.up{color:#1b7f3b}.down{color:#b3261e}code{background:#f0f2f5;padding:1px 4px;border-radius:3px}.muted{color:#667085}
</style></head><body>
<header><h1>evalgraph compare</h1><div class="sub">)";

// The page header and the two runs: folders, pipelines, records, and how they were paired.
void html_runs(std::string &o, const json &c) {
  o += esc(fmt::format("A: {} — B: {}", c["a"]["path"].get<std::string>(), c["b"]["path"].get<std::string>()));
  o += "</div></header><main>\n<section id=\"runs\"><h2>Runs</h2><table><tr><th></th><th>folder</th><th>pipeline</th><th>records</th></tr>";
  for (const char *s : {"a", "b"})
    o += fmt::format("<tr><td>{}</td><td><code>{}</code></td><td>{}</td><td class=\"n\">{}</td></tr>", s[0] == 'a' ? "A" : "B",
                     esc(c[s]["path"].get<std::string>()), esc(c[s]["pipeline"].get<std::string>()), c[s]["records"].get<std::size_t>());
  o += fmt::format("</table><p>Paired by <b>{}</b>: <b id=\"n-paired\">{}</b> pairs; unpaired: {} only in A, {} only in B.</p>",
                   esc(c["paired_by"].get<std::string>()), c["n_paired"].get<std::size_t>(), c["unpaired_a"].get<std::size_t>(),
                   c["unpaired_b"].get<std::size_t>());
  for (const char *side : {"a", "b"}) {
    const json &ids = c[std::string("unpaired_") + side + "_ids"];
    if (ids.empty()) continue;
    o += fmt::format("<details><summary>only in {} ({})</summary><p>", side[0] == 'a' ? "A" : "B", ids.size());
    for (std::size_t i = 0; i < ids.size(); ++i) o += (i ? ", " : "") + esc(ids[i].get<std::string>());
    o += "</p></details>";
  }
}

// The settings that differ between the runs (A → B).
void html_settings(std::string &o, const json &c) {
  o += "</section>\n<section id=\"settings\"><h2>Settings that differ (A → B)</h2>";
  if (c["parameter_differences"].empty()) o += "<p class=\"muted\">none: same pipeline, dataset, node types, plugin versions and parameters</p>";
  else {
    o += "<table><tr><th>setting</th><th>A</th><th>B</th></tr>";
    for (const auto &d : c["parameter_differences"])
      o += fmt::format("<tr><td><code>{}</code></td><td>{}</td><td>{}</td></tr>", esc(d["path"].get<std::string>()), esc(show(d["a"])),
                       esc(show(d["b"])));
    o += "</table>";
  }
}

// One row per compared metric: the means, the diff with its interval drawn, p and the test.
void html_metrics(std::string &o, const json &c) {
  o += "</section>\n<section id=\"metrics\"><h2>Metrics</h2>";
  o += fmt::format("<p class=\"muted\">diff = mean B − mean A over the paired records; 95 % interval: paired bootstrap ({} resamples, seed {}); "
                   "p: Wilcoxon signed-rank for numbers, exact McNemar for booleans. The bar shows the interval, the dot the diff; "
                   "the grey line is 0.</p>",
                   c["bootstrap"]["resamples"].get<int>(), c["bootstrap"]["seed"].get<std::uint64_t>());
  double span = 1e-9;
  for (const auto &m : c["metrics"])
    if (!m["diff"].is_null()) span = std::max({span, std::fabs(m["ci_low"].get<double>()), std::fabs(m["ci_high"].get<double>())});
  o += "<table><tr><th>node</th><th>field</th><th>n</th><th>mean A</th><th>mean B</th><th>diff</th><th>95 % CI</th><th></th><th>p</th><th>test</th></tr>";
  std::size_t constant = 0;
  for (const auto &m : c["metrics"]) {
    if (m.value("constant", false)) {
      ++constant;
      continue;
    }
    o += fmt::format("<tr class=\"metric\"><td>{}</td><td>{}</td><td class=\"n\">{}</td>", esc(m["node"].get<std::string>()),
                     esc(m["field"].get<std::string>()), m["n"].get<std::size_t>());
    if (m["diff"].is_null()) {
      o += "<td colspan=\"7\" class=\"muted\">no record has a value in both runs</td></tr>";
      continue;
    }
    double lo = m["ci_low"].get<double>(), hi = m["ci_high"].get<double>(), df = m["diff"].get<double>(), p = m["p_value"].get<double>();
    auto x = [&](double v) { return 100 + v / span * 95; };
    std::string svg = fmt::format(
        "<svg width=\"200\" height=\"16\" viewBox=\"0 0 200 16\"><line x1=\"100\" y1=\"0\" x2=\"100\" y2=\"16\" stroke=\"#bbb\"/>"
        "<rect x=\"{:.1f}\" y=\"5\" width=\"{:.1f}\" height=\"6\" fill=\"{}\" opacity=\".5\"/><circle cx=\"{:.1f}\" cy=\"8\" r=\"3.5\" fill=\"{}\"/></svg>",
        x(lo), std::max(1.0, x(hi) - x(lo)), p < 0.05 ? "#b3261e" : "#5b6b8c", x(df), p < 0.05 ? "#b3261e" : "#1d2330");
    o += fmt::format("<td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n {}\">{}</td><td class=\"n\">[{}, {}]</td><td>{}</td>"
                     "<td class=\"n{}\">{}</td><td>{}</td></tr>",
                     num(m["mean_a"].get<double>()), num(m["mean_b"].get<double>()), df > 0 ? "up" : (df < 0 ? "down" : ""), num(df), num(lo),
                     num(hi), svg, p < 0.05 ? " sig" : "", pval(p), m["test"].get<std::string>() == "mcnemar_exact" ? "exact McNemar" : "Wilcoxon signed-rank");
  }
  o += "</table>";
  if (constant > 0) o += fmt::format("<p class=\"muted\">{} values that are the same constant in every record of both runs (weights, thresholds) are not shown; compare.json lists them.</p>", constant);
}

// The records that changed most, each with its changed values.
void html_changed(std::string &o, const json &c) {
  o += "</section>\n<section id=\"changed\"><h2>Records that changed most</h2>";
  if (c["changed"].empty()) o += "<p class=\"muted\">no paired record changed in any value</p>";
  for (const auto &ch : c["changed"]) {
    o += fmt::format("<details class=\"changed\"><summary><b>{}</b> — {} value(s) changed, largest |Δ| {}</summary>"
                     "<table><tr><th>node.field</th><th>A</th><th>B</th></tr>",
                     esc(ch["id"].get<std::string>()), ch["n_changed"].get<std::size_t>(), num(ch["max_abs_diff"].get<double>()));
    for (const auto &v : ch["values"])
      o += fmt::format("<tr><td>{}.{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>", esc(v["node"].get<std::string>()),
                       esc(v["field"].get<std::string>()), esc(show(v["a"])), esc(show(v["b"])));
    o += "</table></details>";
  }
}

}  // namespace

std::string html_report(const json &c) {
  std::string o = kHtmlHead;
  html_runs(o, c);
  html_settings(o, c);
  html_metrics(o, c);
  html_changed(o, c);
  o += "</section>\n<script>document.querySelectorAll('details.changed').forEach((d,i)=>{if(i<3)d.open=true;});</script>\n</main></body></html>\n";
  return o;
}

}  // namespace evalgraph::compare
