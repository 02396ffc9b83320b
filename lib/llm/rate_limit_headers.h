// What a provider's response says about its rate limits (docs/llm-providers.md, "Rate limits"):
//   OpenAI, Azure OpenAI (and servers that copy them: Groq, Together, vLLM behind a gateway, ...):
//     x-ratelimit-limit-requests / -tokens       the bucket's size
//     x-ratelimit-remaining-requests / -tokens   what is left now
//     x-ratelimit-reset-requests / -tokens       the time until the bucket is full again: "6m0s", "1.5s", "20ms"
//   Anthropic: anthropic-ratelimit-requests-{limit,remaining,reset} and -tokens-* (else -input-tokens-*), the reset
//     as an RFC 3339 time ("2024-05-01T12:00:30Z");
//   everyone: retry-after (seconds or an HTTP date) and retry-after-ms on a 429 or 503.
// Read by LlmService's header callback (transport.cpp) one header line at a time; used by RateController.
#pragma once

#include <ctime>
#include <string_view>

namespace evalgraph::llm {

// One bucket's reading (requests or tokens); a value the response did not carry is -1.
struct LimitReading {
  double limit = -1, remaining = -1, reset_s = -1;
  bool known() const { return remaining >= 0; }
};

struct RateLimitHeaders {
  LimitReading requests, tokens;
  bool anthropic_tokens = false;  // tokens came from anthropic-ratelimit-tokens-* (they win over input-tokens-*)
  bool any() const { return requests.known() || tokens.known(); }
};

// Reads one header (`name` lower case, `value` trimmed) into `h` when it is a rate-limit header; false otherwise.
// `now`: the wall clock, for Anthropic's reset times.
bool read_rate_limit_header(std::string_view name, std::string_view value, std::time_t now, RateLimitHeaders &h);

// "6m0s", "1h2m3.5s", "1.5s", "20ms", "250us", "0s", or a bare number of seconds ("1.5") -> seconds; -1 when it is
// none of these.
double parse_duration_s(std::string_view v);

// An RFC 3339 time ("2024-05-01T12:00:30Z", "...T12:00:30.5+02:00") -> seconds from `now` (0 when past); -1 when
// it is not one.
double seconds_until_rfc3339(std::string_view v, std::time_t now);

}  // namespace evalgraph::llm
