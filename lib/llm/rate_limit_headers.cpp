// See rate_limit_headers.h.
#include "llm/rate_limit_headers.h"

#include <cctype>
#include <cstdlib>
#include <string>

namespace evalgraph::llm {

namespace {

// A number at the front of `v` (digits, one '.'): its value and length; length 0 when there is none.
double leading_number(std::string_view v, std::size_t &len) {
  len = 0;
  bool dot = false;
  while (len < v.size() && (std::isdigit(static_cast<unsigned char>(v[len])) || (v[len] == '.' && !dot))) {
    dot = dot || v[len] == '.';
    ++len;
  }
  if (len == 0 || (len == 1 && dot)) {
    len = 0;
    return 0;
  }
  return std::strtod(std::string(v.substr(0, len)).c_str(), nullptr);
}

double number_or_minus_one(std::string_view v) {
  std::size_t len = 0;
  double d = leading_number(v, len);
  return len == v.size() && len > 0 ? d : -1;
}

// A whole number of `n` digits at v[pos], or -1.
int digits(std::string_view v, std::size_t pos, std::size_t n) {
  if (pos + n > v.size()) return -1;
  int out = 0;
  for (std::size_t i = pos; i < pos + n; ++i) {
    if (!std::isdigit(static_cast<unsigned char>(v[i]))) return -1;
    out = out * 10 + (v[i] - '0');
  }
  return out;
}

}  // namespace

double parse_duration_s(std::string_view v) {
  if (v.empty()) return -1;
  if (double bare = number_or_minus_one(v); bare >= 0) return bare;
  double total = 0;
  while (!v.empty()) {
    std::size_t len = 0;
    double n = leading_number(v, len);
    if (len == 0) return -1;
    v.remove_prefix(len);
    std::size_t u = 0;
    while (u < v.size() && std::isalpha(static_cast<unsigned char>(v[u]))) ++u;
    std::string_view unit = v.substr(0, u);
    if (unit.empty() && v.substr(0, 2) == "\xc2\xb5") {  // "µs"
      unit = "us";
      u = v.size() >= 3 && v[2] == 's' ? 3 : 0;
      if (u == 0) return -1;
    }
    v.remove_prefix(u);
    if (unit == "h")
      total += n * 3600;
    else if (unit == "m")
      total += n * 60;
    else if (unit == "s")
      total += n;
    else if (unit == "ms")
      total += n / 1e3;
    else if (unit == "us")
      total += n / 1e6;
    else if (unit == "ns")
      total += n / 1e9;
    else
      return -1;
  }
  return total;
}

double seconds_until_rfc3339(std::string_view v, std::time_t now) {
  // YYYY-MM-DDTHH:MM:SS[.frac](Z|±HH:MM)
  if (v.size() < 20 || v[4] != '-' || v[7] != '-' || (v[10] != 'T' && v[10] != 't' && v[10] != ' ') || v[13] != ':' ||
      v[16] != ':')
    return -1;
  std::tm tm{};
  tm.tm_year = digits(v, 0, 4) - 1900;
  tm.tm_mon = digits(v, 5, 2) - 1;
  tm.tm_mday = digits(v, 8, 2);
  tm.tm_hour = digits(v, 11, 2);
  tm.tm_min = digits(v, 14, 2);
  tm.tm_sec = digits(v, 17, 2);
  if (tm.tm_year < 70 || tm.tm_mon < 0 || tm.tm_mday < 1 || tm.tm_hour < 0 || tm.tm_min < 0 || tm.tm_sec < 0) return -1;
  std::size_t pos = 19;
  double frac = 0;
  if (pos < v.size() && v[pos] == '.') {
    std::size_t len = 0;
    frac = leading_number(v.substr(pos), len);
    pos += len;
  }
  long offset = 0;
  if (pos < v.size() && (v[pos] == 'Z' || v[pos] == 'z')) {
    ++pos;
  } else if (pos + 6 <= v.size() && (v[pos] == '+' || v[pos] == '-') && v[pos + 3] == ':') {
    int hh = digits(v, pos + 1, 2), mm = digits(v, pos + 4, 2);
    if (hh < 0 || mm < 0) return -1;
    offset = (v[pos] == '+' ? 1 : -1) * (hh * 3600L + mm * 60L);
    pos += 6;
  } else {
    return -1;
  }
  if (pos != v.size()) return -1;
  const double at = static_cast<double>(timegm(&tm) - offset) + frac;
  const double d = at - static_cast<double>(now);
  return d < 0 ? 0 : d;
}

namespace {
// One field of a limit: its size, what is left of it, or when it resets (`reset_s`, as the provider's format
// gives it: a duration for OpenAI, a time for Anthropic). False for a field we do not read.
bool read_limit_field(std::string_view what, std::string_view value, double reset_s, LimitReading &r) {
  if (what == "limit")
    r.limit = number_or_minus_one(value);
  else if (what == "remaining")
    r.remaining = number_or_minus_one(value);
  else if (what == "reset")
    r.reset_s = reset_s;
  else
    return false;
  return true;
}
}  // namespace

bool read_rate_limit_header(std::string_view name, std::string_view value, std::time_t now, RateLimitHeaders &h) {
  constexpr std::string_view kOpenAi = "x-ratelimit-", kAnthropic = "anthropic-ratelimit-";
  if (name.substr(0, kOpenAi.size()) == kOpenAi) {
    name.remove_prefix(kOpenAi.size());  // limit-requests, remaining-tokens, reset-requests, ...
    const auto dash = name.find('-');
    if (dash == std::string_view::npos) return false;
    const std::string_view what = name.substr(0, dash), which = name.substr(dash + 1);
    LimitReading *r = which == "requests" ? &h.requests : which == "tokens" ? &h.tokens : nullptr;
    if (r == nullptr) return false;
    return read_limit_field(what, value, what == "reset" ? parse_duration_s(value) : -1, *r);
  }
  if (name.substr(0, kAnthropic.size()) != kAnthropic) return false;
  name.remove_prefix(kAnthropic.size());  // requests-limit, tokens-remaining, input-tokens-reset, ...
  const auto dash = name.rfind('-');
  if (dash == std::string_view::npos) return false;
  const std::string_view which = name.substr(0, dash), what = name.substr(dash + 1);
  LimitReading *r = nullptr;
  if (which == "requests") {
    r = &h.requests;
  } else if (which == "tokens") {
    if (!h.anthropic_tokens) h.tokens = LimitReading{};  // the combined bucket wins over input-tokens
    h.anthropic_tokens = true;
    r = &h.tokens;
  } else if (which == "input-tokens" && !h.anthropic_tokens) {
    r = &h.tokens;
  }
  if (r == nullptr) return false;
  return read_limit_field(what, value, what == "reset" ? seconds_until_rfc3339(value, now) : -1, *r);
}

}  // namespace evalgraph::llm
