// LlmService's retries (llm_service_impl.h): what a failed attempt was (a curl error, a cut answer, an HTTP
// status) and whether and when it is tried again: exponential backoff with full jitter, at least what the
// server's Retry-After asks, within max_attempts, retry_after_max_s and retry_total_max_s.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <random>
#include <string>

#include <fmt/format.h>

#include "llm/llm_service_impl.h"
#include "util/stop.h"

namespace evalgraph::llm {

using namespace detail;  // the pieces LlmService's files share (llm_service_impl.h)

namespace {

// Seconds to wait from a Retry-After value (delta-seconds or HTTP-date); negative when absent/unparseable.
double parse_retry_after(const std::string& v) {
  if (v.empty()) return -1;
  char* end = nullptr;
  double d = std::strtod(v.c_str(), &end);
  if (end && end != v.c_str() && trim(end).empty()) return d < 0 ? 0 : d;
  time_t t = curl_getdate(v.c_str(), nullptr);
  if (t < 0) return -1;
  double diff = std::difftime(t, std::time(nullptr));
  return diff < 0 ? 0 : diff;
}

bool retryable_curl(CURLcode c) {
  switch (c) {
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_COULDNT_CONNECT:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
    case CURLE_AGAIN:
      return true;
    default:
      return false;
  }
}

bool retryable_status(long s) { return s == 408 || s == 409 || s == 425 || s == 429 || s >= 500; }

std::string size_words(std::size_t n) {
  if (n >= (std::size_t(1) << 30) && n % (std::size_t(1) << 30) == 0) return fmt::format("{} GiB", n >> 30);
  if (n >= (std::size_t(1) << 20) && n % (std::size_t(1) << 20) == 0) return fmt::format("{} MiB", n >> 20);
  if (n >= 1024 && n % 1024 == 0) return fmt::format("{} KiB", n >> 10);
  return fmt::format("{} bytes", n);
}

std::string duration_words(double s) {
  if (!std::isfinite(s) || s > 1e9) return "forever";
  if (s >= 2 * 86400) return fmt::format("{:.0f} days", s / 86400);
  if (s >= 2 * 3600) return fmt::format("{:.0f} hours", s / 3600);
  if (s >= 3600) return fmt::format("an hour ({:.0f} s)", s);
  if (s >= 120) return fmt::format("{:.0f} minutes", s / 60);
  return fmt::format("{:.0f} s", s);
}

}  // namespace

// A transfer that curl could not complete: cut at a size limit, timed out, or a network error.
void LlmService::Impl::read_curl_failure(const Transfer& t, CURLcode code, const ProviderConfig& cfg, Outcome& o) {
  if (t.too_large) {
    o.err = fmt::format(
        "the answer is larger than max_response_bytes ({}){}; it was cut there. If answers this "
        "large are expected, raise the provider key max_response_bytes (e.g. max_response_bytes: {})",
        size_words(t.limit), t.content_encoding.empty() ? "" : " after decompression",
        size_words(std::max(t.limit * 4, std::size_t(32) << 20)));
  } else if (t.over_total) {
    o.err = fmt::format("the answers being received from this provider together passed max_response_bytes_in_flight "
                        "({}); this one was cut (raise max_response_bytes_in_flight, or lower max_in_flight)",
                        size_words(t.total_limit));
    o.retryable = true;
  } else if (code == CURLE_OPERATION_TIMEDOUT) {
    o.err = fmt::format("timeout after {} s ({})", cfg.timeout_s, t.errbuf[0] ? t.errbuf : curl_easy_strerror(code));
    o.retryable = true;
  } else {
    o.err = fmt::format("{} ({})", curl_easy_strerror(code), t.errbuf[0] ? t.errbuf : "no details");
    o.retryable = retryable_curl(code);
  }
}

// Any other HTTP status: a redirect (never followed) or an error, with the server's Retry-After.
void LlmService::Impl::read_http_failure(const Transfer& t, long status, Outcome& o) {
  if (status >= 300 && status < 400) {
    o.err = t.location.empty()
                ? fmt::format("HTTP {}: a redirect without a Location header (redirects are not followed)", status)
                : fmt::format(
                      "HTTP {}: redirect to {} not followed (redirects are not followed: set base_url to the "
                      "address that answers)",
                      status, snippet(t.location));
    return;
  }
  o.err = fmt::format("HTTP {}: {}", status, server_message(t.body));
  o.retryable = retryable_status(status);
  o.retry_after = parse_retry_after(t.retry_after);
  double ms = parse_retry_after(t.retry_after_ms);
  if (ms >= 0) o.retry_after = std::max(o.retry_after, ms / 1000.0);
}

// A failed attempt: retried after a backoff (at least what the server asked) while attempts and time are
// left; otherwise the call fails with the reason in words.
void LlmService::Impl::retry_or_fail(const JobPtr& job, const ProviderConfig& cfg, const Outcome& o,
                                     const std::string& retry_after_text) {
  const std::string& err = o.err;
  if (cancel_flag.load()) {
    fail(job, "cancelled");
    return;
  }
  if (o.retryable && stop_requested()) {  // no retry after a stop: the call is left for --resume
    fail(job, fmt::format("{} (last attempt: {})", stop_message(), err), true);
    return;
  }
  if (o.retryable && o.retry_after > cfg.retry_after_max_s) {  // not worth waiting for: fail now, in its words
    std::string msg = fmt::format(
        "provider '{}': the server asks to wait {} before a retry (Retry-After: {}), longer than retry_after_max_s "
        "({} s); the call fails now: {}",
        cfg.name, duration_words(o.retry_after), snippet(retry_after_text), cfg.retry_after_max_s, err);
    log(LogLevel::error, msg);
    fail(job, std::move(msg));
    return;
  }
  if (o.retryable && job->attempts < cfg.max_attempts) {
    int retry_no = job->attempts;  // 1 for the first retry
    double cap = std::min(cfg.backoff_max_s, cfg.backoff_initial_s * std::pow(2.0, retry_no - 1));
    double delay = std::uniform_real_distribution<double>(0.0, std::max(cap, 0.0))(rng);
    if (o.retry_after >= 0) delay = std::max(delay, o.retry_after);
    if (seconds_since(job->start) + delay > cfg.retry_total_max_s) {
      std::string msg = fmt::format(
          "provider '{}': gave up after {} attempts: the next retry (in {:.1f} s) would start past retry_total_max_s "
          "({} s after the first attempt): {}",
          cfg.name, job->attempts, delay, cfg.retry_total_max_s, err);
      log(LogLevel::error, msg);
      fail(job, std::move(msg));
      return;
    }
    log(LogLevel::warn, fmt::format("provider '{}': attempt {}/{} failed: {}; retrying in {:.3f} s", cfg.name,
                                    job->attempts, cfg.max_attempts, err, delay));
    auto when = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(delay));
    delayed.emplace(when, job);
    return;
  }
  std::string msg;
  if (o.retryable)
    msg = fmt::format("provider '{}': gave up after {} attempts: {}", cfg.name, job->attempts, err);
  else if (o.malformed && job->attempts > 1)
    msg = fmt::format("provider '{}': gave up after {} attempts ({} malformed): {}", cfg.name, job->attempts,
                      job->malformed, err);
  else
    msg = fmt::format("provider '{}': {}", cfg.name, err);
  log(LogLevel::error, msg);
  fail(job, std::move(msg));
}

}  // namespace evalgraph::llm
