// The agreement as a short table for the terminal (evalgraph agree; the end of a run with agreement:).
#include <fmt/format.h>

#include "agree/agreement.h"

namespace evalgraph::agree {
using nlohmann::json;

namespace {

std::string stat_text(const json &s) {
  if (!s.value("defined", false)) return "not defined: " + s.value("why", std::string("?"));
  return fmt::format("{:.3f} [{:.3f}, {:.3f}]", s["value"].get<double>(), s["low"].get<double>(),
                     s["high"].get<double>());
}

}  // namespace

std::string agreement_text(const json &a) {
  std::string o;
  const json &l = a["labels"];
  o += fmt::format("labels: {} of {} records labelled ({})", l.value("labelled", 0), l.value("records", 0),
                   l.value("source", std::string()));
  if (l.value("unknown_keys", 0) > 0)
    o += fmt::format("; {} labelled records are not in the run", l["unknown_keys"].get<std::size_t>());
  if (!l["annotators"].empty()) o += fmt::format("; {} annotators", l["annotators"].size());
  o += "\n";
  for (const auto &e : a["entries"]) {
    const json &out = e["left_out"];
    o += fmt::format("\n{} ({}, n = {}", e["name"].get<std::string>(), e["kind"].get<std::string>(),
                     e["n"].get<std::size_t>());
    for (const auto &[why, n] : out.items())
      if (n.get<std::size_t>() > 0) o += fmt::format(", {} {}", n.get<std::size_t>(), why);
    o += ")\n";
    for (const auto &[name, s] : e["stats"].items()) o += fmt::format("  {:<22} {}\n", name, stat_text(s));
    if (e.contains("threshold") && !e["threshold"].is_null())
      o += fmt::format("  {:<22} {:.6g} (maximises balanced accuracy)\n", "threshold", e["threshold"].get<double>());
    if (e["people"].is_object()) {
      const json &p = e["people"];
      o += fmt::format("  people: {} annotators, each against the rest in {}: mean {}\n",
                       p["annotators"].get<std::size_t>(), p["stat"].get<std::string>(),
                       p["mean"].is_null() ? "not defined" : fmt::format("{:.3f}", p["mean"].get<double>()));
      if (p.contains("verdict")) o += fmt::format("  the metric agrees {}\n", p["verdict"].get<std::string>());
    }
  }
  for (const auto &[field, s] : a["alpha"].items())
    o += fmt::format("\nKrippendorff's alpha of '{}' ({}, {} annotators, {} records): {}\n", field,
                     s["level"].get<std::string>(), s["annotators"].get<std::size_t>(), s["units"].get<std::size_t>(),
                     stat_text(s));
  return o;
}

}  // namespace evalgraph::agree
