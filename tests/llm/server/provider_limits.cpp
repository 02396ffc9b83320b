// See provider_limits.h.
#include "provider_limits.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace evalgraph::testing {

std::string openai_duration(double s) {
  char buf[64];
  if (s < 1) {
    std::snprintf(buf, sizeof buf, "%.0fms", std::ceil(s * 1000));
  } else if (s < 60) {
    std::snprintf(buf, sizeof buf, "%.3gs", s);
  } else {
    const int m = static_cast<int>(s / 60);
    std::snprintf(buf, sizeof buf, "%dm%.0fs", m, s - 60.0 * m);
  }
  return buf;
}

double LimitState::factor(double t) const {
  return l_.cut_at_s >= 0 && t >= l_.cut_at_s && t < l_.cut_at_s + l_.cut_for_s ? l_.cut_factor : 1.0;
}

// The buckets at time t: refilled at the rate in force since the last request, never above the size in force now
// (a cut clips them).
void LimitState::refill(double t) {
  const double f = factor(t), dt = std::max(0.0, t - last_t_);
  auto one = [&](Bucket &b, double per_minute) {
    if (per_minute <= 0) return;
    const double rate_before = per_minute / 60.0 * last_factor_, cap = per_minute / 60.0 * f * l_.burst_s;
    b.level = b.level < 0 ? cap : std::min(cap, b.level + rate_before * dt);
  };
  one(req_, l_.requests_per_minute);
  one(tok_, l_.tokens_per_minute);
  last_factor_ = f;
  last_t_ = t;
}

LimitState::Verdict LimitState::admit(double tokens) {
  Verdict v;
  if (l_.requests_per_minute <= 0 && l_.tokens_per_minute <= 0) return v;
  std::lock_guard lk(mu_);
  const auto now = std::chrono::steady_clock::now();
  if (!started_) {
    started_ = true;
    t0_ = now;
  }
  const double t = std::chrono::duration<double>(now - t0_).count();
  refill(t);
  const double f = factor(t);
  const bool fits =
      (l_.requests_per_minute <= 0 || req_.level >= 1) && (l_.tokens_per_minute <= 0 || tok_.level >= tokens);
  if (fits) {
    if (l_.requests_per_minute > 0) req_.level -= 1;
    if (l_.tokens_per_minute > 0) tok_.level -= tokens;
  } else {
    v.refused = true;
    ++refused_;
  }
  double wait = 0;  // until this request would fit
  auto describe = [&](Bucket &b, double per_minute, double need, const char *which) {
    if (per_minute <= 0) return;
    const double rate = per_minute / 60.0 * f, cap = rate * l_.burst_s;
    if (v.refused) wait = std::max(wait, (need - b.level) / rate);
    if (!l_.headers) return;
    v.headers[std::string("x-ratelimit-limit-") + which] = std::to_string(static_cast<long long>(std::floor(cap)));
    v.headers[std::string("x-ratelimit-remaining-") + which] =
        std::to_string(static_cast<long long>(std::max(0.0, std::floor(b.level))));
    v.headers[std::string("x-ratelimit-reset-") + which] = openai_duration(std::max(0.0, cap - b.level) / rate);
  };
  describe(req_, l_.requests_per_minute, 1, "requests");
  describe(tok_, l_.tokens_per_minute, tokens, "tokens");
  if (v.refused) v.headers["retry-after"] = std::to_string(std::max(1LL, static_cast<long long>(std::ceil(wait))));
  return v;
}

void LimitState::acquire(std::function<void()> start) {
  if (l_.capacity <= 0) return start();
  {
    std::lock_guard lk(mu_);
    if (busy_ >= l_.capacity) {
      waiting_.push_back(std::move(start));
      return;
    }
    ++busy_;
  }
  start();
}

void LimitState::release() {
  if (l_.capacity <= 0) return;
  std::function<void()> next;
  {
    std::lock_guard lk(mu_);
    if (waiting_.empty()) {
      --busy_;
      return;
    }
    next = std::move(waiting_.front());
    waiting_.pop_front();
  }
  next();  // (the place passes to it)
}

std::uint64_t LimitState::refused() const {
  std::lock_guard lk(mu_);
  return refused_;
}

}  // namespace evalgraph::testing
