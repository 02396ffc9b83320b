// `evalgraph estimate PIPELINE`: the dry run (engine/entry/estimate_entry.h) as a table or JSON on stdout.
#include "estimate/estimate.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>

namespace evalgraph::estimate {
using nlohmann::json;

std::string format_table(const json &e) {
  auto n = [](const json &v) { return v.is_number() ? fmt::format("{:.0f}", v.get<double>()) : std::string("?"); };
  auto usd = [](const json &v) { return v.is_number() ? fmt::format("${:.4f}", v.get<double>()) : std::string("?"); };
  std::string out = fmt::format("{:<20} {:>10} {:>10} {:>10} {:>14} {:>22} {:>24}\n", "node", "calls", "cached", "to call",
                                "prompt tokens", "output tokens (lo-hi)", "cost USD (low-high)");
  auto row = [&](const std::string &name, const json &v) {
    out += fmt::format("{:<20} {:>10} {:>10} {:>10} {:>14} {:>22} {:>24}\n", name, n(v["calls"]), n(v["cached"]), n(v["to_call"]),
                       n(v["prompt_tokens_to_call"]), n(v["output_tokens_low"]) + "-" + n(v["output_tokens_high"]),
                       usd(v["cost_usd_low"]) + "-" + usd(v["cost_usd_high"]));
  };
  for (const auto &[id, v] : e["nodes"].items()) row(id, v);
  row("total", e);
  const long long runs = e["records"].get<long long>();
  const int reps = std::max(1, e["replications"].get<int>());
  out += fmt::format("records: {} ({} x {} replication{}); prompt tokens: {}", runs, runs / reps, reps, reps == 1 ? "" : "s",
                     e["tokenizer"]["counter"].get<std::string>());
  if (e["tokenizer"]["approximation_error"].is_object())
    out += fmt::format(" (measured error: mean {}%, p95 {}%; the cost range allows ±{}% on prompt tokens)",
                       e["tokenizer"]["approximation_error"]["mean_abs_pct"].get<double>(),
                       e["tokenizer"]["approximation_error"]["p95_abs_pct"].get<double>(),
                       e["tokenizer"]["prompt_band_pct"].get<double>());
  out += "\n";
  for (const auto &[prov, v] : e["providers"].items())
    out += fmt::format("provider {}: {} calls to make, {} in flight at most, expected wall time {}{}\n", prov, n(v["to_call"]),
                       v["max_in_flight"].get<int>(),
                       v["wall_time_s"].is_number() ? fmt::format("{:.1f} s", v["wall_time_s"].get<double>()) : std::string("unknown (no latency cached)"),
                       v.contains("price") && v["price"].is_null() ? "; no price: counted as free" : "");
  out += fmt::format("expected wall time: {}\n",
                     e["wall_time_s"].is_number() ? fmt::format("{:.1f} s", e["wall_time_s"].get<double>()) : std::string("unknown"));
  return out;
}

int run_command(const std::string &pipeline_file, bool as_json, const Options &opt, const std::vector<std::string> &plugin_dirs) {
  PluginRegistry reg;
  load_plugins(reg, plugin_dirs);
  PlannedPipeline l = plan_pipeline_file(pipeline_file, reg);
  json e = estimate(l.pipeline, l.plan, opt);
  if (as_json) std::printf("%s\n", e.dump(2).c_str());
  else std::printf("%s", format_table(e).c_str());
  return 0;
}

}  // namespace evalgraph::estimate
