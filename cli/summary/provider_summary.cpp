#include "summary/provider_summary.h"

#include <fmt/format.h>

namespace evalgraph::summary {

using nlohmann::json;

namespace {

long long count(const json &o, const char *key) {
  const auto it = o.find(key);
  return it != o.end() && it->is_number() ? it->get<long long>() : 0;
}

double number(const json &o, const char *key) {
  const auto it = o.find(key);
  return it != o.end() && it->is_number() ? it->get<double>() : 0.0;
}

// "1 retry", "2 retries".
std::string counted(long long n, const char *one, const char *many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

// What held the calls back longest (RateController's Hold names), in words, with the seconds it held them.
std::string held_by(const json &rate) {
  const std::string limit = rate.value("limit", std::string("none"));
  if (limit == "none") return "never held back (fewer calls ready than the window)";
  const double s = rate.contains("held_s") ? number(rate["held_s"], limit.c_str()) : 0.0;
  std::string what = limit;
  if (limit == "ceiling")
    what = "the ceiling (max_in_flight)";
  else if (limit == "latency")
    what = "latency (the adaptive window)";
  else if (limit == "requests" || limit == "tokens")
    what = "the " + limit + " limit";
  else if (limit == "refusals")
    what = "refusals (the cap after 429s or 503s)";
  return fmt::format("held by {} for {:.1f} s", what, s);
}

std::string rate_line(const json &rate) {
  const json c = rate.value("concurrency", json::object());
  const bool adaptive = rate.value("adaptive", true);
  const std::string window = adaptive ? fmt::format("adaptive, ceiling {}", count(rate, "ceiling"))
                                      : fmt::format("fixed window of {}", count(rate, "ceiling"));
  const long long overloaded = count(rate, "http_503");
  return fmt::format("    concurrency min/median/max {}/{}/{} ({}), {}; {} × 429{}, {:.1f} s waiting for capacity\n",
                     count(c, "min"), count(c, "median"), count(c, "max"), window, held_by(rate),
                     count(rate, "http_429"), overloaded > 0 ? fmt::format(", {} × 503", overloaded) : "",
                     number(rate, "capacity_wait_s"));
}

}  // namespace

std::string provider_lines(const std::string &name, const json &s) {
  if (!s.is_object()) return fmt::format("  provider {}: {}\n", name, s.dump());
  const long long calls = count(s, "calls");
  if (calls == 0) return fmt::format("  provider {}: not called\n", name);
  const long long merged = count(s, "merged"), malformed = count(s, "malformed_responses");
  const long long estimated = count(s, "usage_estimated_calls");
  std::string out = fmt::format(
      "  provider {}: {} ({}, {}{}), {} failed, {}{}; {} prompt + {} completion tokens{}; mean latency {:.2f} s\n",
      name, counted(calls, "call", "calls"), counted(count(s, "http_requests"), "HTTP request", "HTTP requests"),
      counted(count(s, "cache_hits"), "cache hit", "cache hits"),
      merged > 0 ? fmt::format(", {} merged with an identical call", merged) : "", count(s, "errors"),
      counted(count(s, "retries"), "retry", "retries"),
      malformed > 0 ? ", " + counted(malformed, "malformed answer", "malformed answers") : "",
      count(s, "prompt_tokens"), count(s, "completion_tokens"),
      estimated > 0 ? fmt::format(" (counted by us for {} calls)", estimated) : "", number(s, "latency_mean_s"));
  if (const auto r = s.find("rate"); r != s.end() && r->is_object()) out += rate_line(*r);
  return out;
}

}  // namespace evalgraph::summary
