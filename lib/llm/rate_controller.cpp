// See rate_controller.h.
#include "llm/rate_controller.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace evalgraph::llm {

namespace {

using Clock = RateController::Clock;

double secs(Clock::duration d) { return std::chrono::duration<double>(d).count(); }
Clock::time_point after(Clock::time_point t, double s) {
  return t + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
}

constexpr double kInitialWindow = 8;         // the first round's window (below the ceiling) ...
constexpr double kStatedInitialWindow = 64;  // ... at most, where the ceiling was stated (all of it)
constexpr double kHoldRise = 0.15;        // latency 15 % over the least seen: the window holds
constexpr double kShrinkRise = 0.3;       // 30 %: it shrinks towards 1.1x the least latency
constexpr double kLatencyFloorS = 0.025;  // rises are measured against at least this (fast local servers' noise)
constexpr double kMarginShare = 0.02;     // what a provider-stated bucket keeps in hand
constexpr double kCapCut = 0.9;           // the send rate after a header-less 429: this share of the accepted rate
constexpr double kCapGrowth = 0.03;       // per second, while that cap is what holds the calls back
constexpr double kFirstProbeS = 1, kProbeEveryS = 20;  // when the least latency is measured again (probe_round)
constexpr double kProbeFall = 0.85;   // a probe round whose latency fell below this share of the last: still queued
constexpr double kBackToBdp = 1.2;    // after a probe: the window back to at most this x the bandwidth-delay product
constexpr double kQueuedMemoryS = 5;  // a window that queued is not grown into again for this long ...
constexpr double kQueuedMemoryMaxS = 10;  // ... twice as long when it queues again, up to this (capacity may come back)
constexpr double kQueuedUnsureS = 2;      // ... this long where the rise was within noise's reach
constexpr std::size_t kMaxPoints = 400;
constexpr std::size_t kPairsNeeded = 4, kPairsKept = 8;  // rounds at one window whose medians give the noise ...
constexpr double kHeldNoiseShare = 0.25;                 // ... where below this share of the formula's

int hold_index(Hold h) { return static_cast<int>(h); }

}  // namespace

const char *hold_name(Hold h) {
  switch (h) {
    case Hold::none:
      return "none";
    case Hold::demand:
      return "demand";
    case Hold::ceiling:
      return "ceiling";
    case Hold::latency:
      return "latency";
    case Hold::requests:
      return "requests";
    case Hold::tokens:
      return "tokens";
    case Hold::refusals:
      return "refusals";
  }
  return "?";
}

void RateController::Bucket::refill(Clock::time_point now) {
  if (!on || now <= at) return;
  level = std::min(cap, level + rate * secs(now - at));
  at = now;
}

double RateController::Bucket::wait_for(double need) const {
  if (level >= need) return 0;
  if (rate <= 0) return 1.0;  // (no refill known: look again in a second)
  return (need - level) / rate;
}

RateController::RateController(RateSettings s) : s_(s) {
  const double first =
      s_.ceiling_stated ? std::clamp<double>(s_.ceiling, kInitialWindow, kStatedInitialWindow) : kInitialWindow;
  window_ = s_.adaptive ? std::min<double>(s_.ceiling, first) : s_.ceiling;
  round_target_ = round_size();
  const auto now = Clock::now();
  if (s_.requests_per_minute > 0) {  // sends spaced >= 60/rpm s apart: a bucket of one request
    req_hand_ = {true, s_.requests_per_minute / 60.0, 1.0, 1.0, now};
  }
  if (s_.tokens_per_minute > 0) {  // a second's worth of tokens at once
    const double rate = s_.tokens_per_minute / 60.0;
    tok_hand_ = {true, rate, std::max(rate, 1.0), std::max(rate, 1.0), now};
  }
}

int RateController::window() const { return std::max(1, static_cast<int>(window_)); }

bool RateController::bucket_allows(Bucket &b, double need, Hold why, Clock::time_point now, Clock::time_point &at) {
  if (!b.on) return true;
  b.refill(now);
  const double w = b.wait_for(std::min(need, b.cap));
  if (w <= 0) return true;
  hold_ = why;
  at = after(now, std::max(w, 0.0005));
  return false;
}

bool RateController::may_send(Clock::time_point now, int in_flight, double tokens, Clock::time_point &at) {
  at = Clock::time_point::max();
  if (in_flight >= window()) {
    hold_ = window() >= s_.ceiling ? Hold::ceiling
                                   : (now - last_cut_ < std::chrono::seconds(5) ? Hold::refusals : Hold::latency);
    round_limited_ = true;
    return false;
  }
  tokens = (tokens < 0 ? mean_tokens_ : tokens) * token_scale_;
  if (!bucket_allows(req_hand_, 1.0, Hold::requests, now, at)) return false;
  if (!bucket_allows(tok_hand_, tokens, Hold::tokens, now, at)) return false;
  if (!bucket_allows(req_hdr_, 1.0 + std::max(1.0, kMarginShare * req_hdr_.cap), Hold::requests, now, at)) return false;
  if (!bucket_allows(tok_hdr_, tokens + std::max(1.0, kMarginShare * tok_hdr_.cap), Hold::tokens, now, at))
    return false;
  if (!bucket_allows(cap_, 1.0, Hold::refusals, now, at)) return false;
  hold_ = Hold::none;
  return true;
}

RateController::Ticket RateController::on_send(Clock::time_point now, double tokens) {
  if (tokens < 0)
    tokens = mean_tokens_;
  else
    mean_tokens_ = requests_sent_ < 1 ? tokens : 0.95 * mean_tokens_ + 0.05 * tokens;
  tokens *= token_scale_;
  for (Bucket *b : {&req_hand_, &req_hdr_, &cap_})
    if (b->on) b->level -= 1;
  for (Bucket *b : {&tok_hand_, &tok_hdr_})
    if (b->on) b->level -= tokens;
  requests_sent_ += 1;
  tokens_sent_ += tokens;
  sends_.push_back(now);
  while (!sends_.empty() && now - sends_.front() > std::chrono::seconds(1)) sends_.pop_front();
  if (!started_) {  // the first call: the record starts
    started_ = true;
    t0_ = last_observe_ = next_point_ = round_start_ = round_began_ = now;
    next_probe_ = after(now, kFirstProbeS);
  }
  return {now, requests_sent_, tokens_sent_};
}

// A bucket from what the provider said when it counted the call sent at `sent`: its level then, plus the refill
// since, minus what was sent after that call (the provider counted those too, or will). When it counted the call is
// not known: at half the call's latency, not at its send (a call waits between our send and the provider's count:
// on a loaded machine, tens of ms, which counted as refill let a call go that the provider then refused).
void RateController::reconcile(Bucket &b, const LimitReading &r, double sent_after, Clock::time_point sent,
                               Clock::time_point now) {
  if (!r.known()) return;
  const double cap = r.limit > 0 ? r.limit : std::max(b.cap, r.remaining);
  const bool changed = b.on && r.limit > 0 && std::fabs(cap - b.cap) > 0.1 * b.cap;  // the provider changed it
  if (r.reset_s > 0 && cap > r.remaining) {
    const double seen = (cap - r.remaining) / r.reset_s;
    b.rate = (!b.on || changed || b.rate <= 0) ? seen : 0.8 * b.rate + 0.2 * seen;
  } else if (b.rate <= 0 || changed) {
    b.rate = cap / 60.0;  // no reset time: limits are per minute at OpenAI, Azure and Anthropic
  }
  b.cap = cap;
  b.level = std::min(cap, r.remaining + b.rate * 0.5 * std::max(0.0, secs(now - sent)) - sent_after);
  b.at = now;
  b.on = true;
}

// A 429: where the provider states its buckets they say what is left (reconciled in on_answer); a 429 that
// leaves both with room, or one without them, caps the send rate below the refill rate its refusals show.
void RateController::on_refused(Clock::time_point now, const RateLimitHeaders &h, double tokens_cost) {
  ++refused_;
  round_refused_ = true;
  last_refusal_ = now;
  if (!s_.adaptive) return;
  const bool by_requests = h.requests.known() && h.requests.remaining < 1 + kMarginShare * req_hdr_.cap;
  const bool by_tokens = h.tokens.known() && h.tokens.remaining < tokens_cost + kMarginShare * tok_hdr_.cap;
  if (by_tokens && !by_requests && secs(now - last_scale_) > std::max(recent_latency_s_, 0.05)) {
    token_scale_ = std::min(4.0, token_scale_ * 1.15);  // we sent what we thought fitted: the provider counts more
    last_scale_ = now;
  }
  if (by_requests || by_tokens || now < cap_hold_until_) return;
  // Cut the rate calls were sent at over the last second (or the cap, when lower) by the share refused lately (at
  // least 10 %, at most half): AIMD on the send rate.
  double base = send_rate(now);
  if (cap_.on)
    base = std::min(base, cap_.rate);
  else if (answers_ok_ >= 10)  // (a first cut: no more than what was accepted so far, the start's burst included)
    base = std::min(base, static_cast<double>(answers_ok_) / std::max(0.5, secs(now - t0_)));
  base = std::max(1.0, base);
  cap_.refill(now);
  cap_.on = true;
  cap_cut_from_ = base;
  cap_.rate = base * std::clamp(1.0 - refused_share_, 0.5, kCapCut);
  cap_.cap = std::max(1.0, cap_.rate * 0.1);
  cap_.level = std::min(cap_.level, cap_.cap);
  cap_.at = now;
  cap_hold_until_ = after(now, std::max(0.1, recent_latency_s_));
}

// Calls sent per second over the last second (or since the first).
double RateController::send_rate(Clock::time_point now) const {
  return static_cast<double>(sends_.size()) / std::clamp(secs(now - t0_), 0.1, 1.0);
}

void RateController::on_answer(Clock::time_point now, const Ticket &t, Answer a, double latency_s,
                               const RateLimitHeaders &h) {
  if (s_.adaptive && h.any()) {
    reconcile(req_hdr_, h.requests, requests_sent_ - t.requests_after, t.sent, now);
    reconcile(tok_hdr_, h.tokens, tokens_sent_ - t.tokens_after, t.sent, now);
  }
  refused_share_ = 0.9 * refused_share_ + 0.1 * (a == Answer::refused ? 1.0 : 0.0);
  const bool this_round = t.sent >= round_start_;  // (answers to calls sent before the window last moved: not)
  if (this_round) ++round_answers_;
  if (a == Answer::ok) {
    ++answers_ok_;
    if (this_round) {
      ++round_ok_;
      round_latency_sum_ += latency_s;
      round_latencies_.push_back(latency_s);
    }
    if (token_scale_ > 1) token_scale_ = std::max(1.0, token_scale_ * 0.9995);
  } else if (a == Answer::refused) {
    on_refused(now, h, mean_tokens_ * token_scale_);
  } else if (a == Answer::overloaded) {
    ++overloaded_;
    round_refused_ = true;
    if (s_.adaptive && secs(now - last_cut_) > std::max(recent_latency_s_, 0.05)) {
      window_ = std::max(1.0, std::min(window_, static_cast<double>(window())) * 0.5);
      slow_start_ = false;
      last_cut_ = now;
      round_start_ = now;
      round_answers_ = round_ok_ = 0;
      round_latency_sum_ = 0;
      round_latencies_.clear();
    }
  }
  if (round_answers_ >= round_target_) end_round(now);
}

// A round's median latency against the least seen (base): grow, hold or shrink the window.
void RateController::latency_round(Clock::time_point now, double mean_s, double noise) {
  if (base_latency_s_ < 0 || mean_s < base_latency_s_) {
    base_latency_s_ = mean_s;
    base_noise_ = noise;
  }
  // A rise counts only beyond what the two medians' sampling noise explains (two standard errors of their
  // ratio): with heavy-tailed latency a round's median wanders and the least of many is low, which without this
  // reads as a queue and shrinks the window for nothing; with steady latency the noise is ~0 and rises count.
  const double spread = std::sqrt(noise * noise + base_noise_ * base_noise_);  // of log(median / base)
  auto rise_beyond = [&](double standard_errors) {
    return std::max(0.0, (mean_s / std::exp(standard_errors * spread) - base_latency_s_) /
                             std::max(base_latency_s_, kLatencyFloorS));
  };
  const double rise = rise_beyond(2);
  if (rise > kHoldRise && slow_start_) {  // the first rise: the descent starts now, from where the latency was
    slow_start_ = false;                  // the base (a server that queues: its capacity is about there)
    start_probe(mean_s, window_ * base_latency_s_ / mean_s);
    // (its first step always goes on: the round it would be compared with was measured while the queue was still
    // building, and reads low)
    probe_latency_s_ = std::numeric_limits<double>::infinity();
    return;
  }
  if (rise > kShrinkRise) {
    // (remembered for a while: at a small capacity one more call is a large step, and growing straight back into
    // the queue every other round would keep half the calls queued; the same window queued again: twice as long.
    // A rise within three standard errors, at a window that did not queue before, may be a noisy server's median
    // against a least latency that was a low draw: remembered for 2 s only. Held for 5-10 s, such false queues
    // kept a heavy-tailed server's window below its capacity, and it did not come back when a capacity did.)
    const bool again = window() == static_cast<int>(queued_window_);
    if (again)
      queued_memory_s_ = std::clamp(2 * queued_memory_s_, kQueuedMemoryS, kQueuedMemoryMaxS);
    else
      queued_memory_s_ = rise_beyond(3) > kShrinkRise ? kQueuedMemoryS : kQueuedUnsureS;
    queued_window_ = window();
    queued_until_ = after(now, queued_memory_s_);
    window_ = std::max(1.0, window_ * std::max(0.7, 1.1 / (1.0 + rise)));
    slow_start_ = false;
  } else if (rise > kHoldRise) {
    slow_start_ = false;
  } else if (round_limited_ && !round_refused_) {
    double grown = slow_start_ ? window_ * 2 : window_ + std::max(1.0, 0.5 * std::sqrt(window_));
    if (now < queued_until_ && grown >= queued_window_) grown = std::max(window_, queued_window_ - 0.5);
    window_ = std::min<double>(s_.ceiling, grown);
  }
}

// The least latency is measured again (at 1 s, then every 20 s, like BBR's ProbeRTT) by a descent: the window
// halves round by round while each round's latency falls (below 0.85x the last): the calls
// still queued at the server. The first round whose latency no longer falls ran at or below the server's capacity:
// its median becomes the base (a server that got slower, or a first window that already queued, leave no stale
// base). Then the window goes back to what it was, but to no more than 1.2x the best rate of answers times that
// latency (the bandwidth-delay product): a server of small capacity that the first windows queued is not queued
// again. A server that does not queue ends the descent at its first step. Returns true while the descent runs.
bool RateController::probe_round(Clock::time_point now, double mean_s, double noise, bool measured) {
  if (probe_from_window_ > 0) {
    // (no allowance for the medians' noise here, unlike latency_round: one step too many costs a round at half
    // the window, one too few leaves a queued base, and on a loaded machine a noisy fall would often read as none)
    if (measured && window() > 1 && mean_s < kProbeFall * probe_latency_s_) {
      probe_latency_s_ = mean_s;  // still queued: one more step down
      window_ = std::max(1.0, std::floor(window_ / 2));
      return true;
    }
    if (measured) {
      base_latency_s_ = mean_s;
      base_noise_ = noise;
    }
    double back = probe_from_window_;
    if (best_rate_ > 0 && base_latency_s_ > 0)
      back = std::min(back, std::max(window_, kBackToBdp * best_rate_ * base_latency_s_));
    window_ = back;
    probe_from_window_ = 0;
    next_probe_ = after(now, kProbeEveryS);
    return false;
  }
  // (only once the latency rose or a call was refused: a window still in slow start has seen no queue)
  if (now < next_probe_ || window_ < 2 || !round_limited_ || slow_start_ || !measured) return false;
  start_probe(mean_s, window_ / 2);
  return true;
}

// The descent's first step: to `to` (between an eighth and half of the window), from a round of `mean_s`.
void RateController::start_probe(double mean_s, double to) {
  probe_from_window_ = window_;
  probe_latency_s_ = mean_s;
  window_ = std::max(1.0, std::floor(std::clamp(to, window_ / 8, window_ / 2)));
}

// A round ended: the window moves (or not) by its latency; once it moved, rounds count the answers of calls sent
// after that.
void RateController::end_round(Clock::time_point now) {
  const double mean = round_ok_ > 0 ? round_latency_sum_ / round_ok_ : 0;
  if (round_ok_ > 0) recent_latency_s_ = recent_latency_s_ < 0 ? mean : 0.7 * recent_latency_s_ + 0.3 * mean;
  const bool measured = round_ok_ >= std::min(4, round_target_);
  double median = mean;  // (the median: a few slow answers, a stall of this machine, do not move the window)
  double noise = 0;      // the standard error of log(median): 1.25 sd(log latency) / sqrt(n)
  if (measured) {
    auto mid = round_latencies_.begin() + static_cast<std::ptrdiff_t>(round_latencies_.size() / 2);
    std::nth_element(round_latencies_.begin(), mid, round_latencies_.end());
    median = *mid;
    double sum = 0, sum2 = 0;
    for (double l : round_latencies_) {
      const double x = std::log(std::max(l, 1e-6));
      sum += x;
      sum2 += x * x;
    }
    const double n = static_cast<double>(round_latencies_.size());
    const double var = n > 1 ? std::max(0.0, (sum2 - sum * sum / n) / (n - 1)) : 0.0;
    noise = 1.2533 * std::sqrt(var / n);
  }
  if (measured && !settling_ && probe_from_window_ <= 0) noise = held_noise(median, noise);
  const double span = secs(now - round_began_);
  if (measured && span > 0) best_rate_ = std::max(best_rate_, round_ok_ / span);  // answers a second (probe_round)
  round_began_ = now;
  const int before = window();
  if (settling_) {
    settling_ = false;  // the first round after a move: the server's queue was still filling or draining
  } else if (s_.adaptive && !probe_round(now, median, noise, measured) && measured) {
    latency_round(now, median, noise);
  }
  round_latencies_.clear();
  if (round_refused_) slow_start_ = false;
  if (window() != before) {  // answers to calls sent before the window moved do not count, nor the next round
    round_start_ = now;
    settling_ = !slow_start_ && probe_from_window_ <= 0;
  }
  round_answers_ = round_ok_ = 0;
  round_latency_sum_ = 0;
  round_limited_ = round_refused_ = false;
  round_target_ = round_size();
}

// The noise of a round's median, from the rounds before it at the same window where there are enough: how much
// their medians differed. The formula (the spread of one round's latencies) reads a server that queues some of the
// calls of a round (latencies of 1x and 2x) as noisy, and a queue as noise; consecutive medians at one window are
// steady there, and as noisy as the formula says for a heavy-tailed server that does not queue.
double RateController::held_noise(double median, double formula) {
  if (window() != pair_window_) {
    pair_window_ = window();
    pair_sq_.clear();
  } else if (last_median_ > 0) {
    const double d = std::log(median / last_median_);
    pair_sq_.push_back(0.5 * d * d);  // (the variance of a difference of two is twice each one's)
    if (pair_sq_.size() > kPairsKept) pair_sq_.pop_front();
  }
  last_median_ = median;
  if (pair_sq_.size() < kPairsNeeded) return formula;
  double sum = 0;
  for (double v : pair_sq_) sum += v;
  const double held = std::sqrt(sum / static_cast<double>(pair_sq_.size()));
  // (only where it is far below the formula: a few pairs' estimate is itself noisy, and taken whenever lower it
  // reads a heavy-tailed server's noise as smaller than it is, and its noise as a queue)
  return held < kHeldNoiseShare * formula ? held : formula;
}

// A round is one window of answers (8 at least); in slow start half a window (4 at least), so that the window
// reaches a large server's capacity about as soon as from a large first window, while a server of small capacity
// (Ollama's default is 1-4 calls at once) is not sent a large first burst that it would queue.
// A round of the ProbeRTT descent is 4 answers at least.
int RateController::round_size() const {
  if (slow_start_) return std::max(4, window() / 2);
  return std::max(probe_from_window_ > 0 ? 4 : 8, window());
}

// The cap after header-less 429s grows while it is what holds the calls back and nothing was refused for two
// latencies (0.3 s at least).
void RateController::grow_cap(Clock::time_point now, double dt) {
  if (!cap_.on || prev_hold_ != Hold::refusals || secs(now - last_refusal_) < std::max(0.3, 2 * recent_latency_s_))
    return;
  cap_.refill(now);
  // back quickly to just below the rate that was refused, then on slowly (the limit may have risen)
  cap_.rate *= 1.0 + (cap_.rate < 0.97 * cap_cut_from_ ? 4 * kCapGrowth : kCapGrowth) * dt;
  cap_.cap = std::max(1.0, cap_.rate * 0.1);
}

void RateController::observe(Clock::time_point now, int in_flight, std::size_t waiting) {
  const Hold state = waiting > 0 ? (hold_ == Hold::none ? Hold::demand : hold_) : Hold::demand;
  if (!started_) {
    if (in_flight == 0 && waiting == 0) return;
    started_ = true;
    t0_ = last_observe_ = next_point_ = now;
  }
  const double dt = secs(now - last_observe_);
  if (dt > 0) {
    held_s_[hold_index(prev_hold_)] += dt;
    if (prev_hold_ != Hold::demand) capacity_wait_s_ += dt;
    if (prev_in_flight_ > 0 || prev_hold_ != Hold::demand) {
      if (time_at_.size() <= static_cast<std::size_t>(prev_in_flight_))
        time_at_.resize(static_cast<std::size_t>(prev_in_flight_) + 1, 0.0);
      time_at_[static_cast<std::size_t>(prev_in_flight_)] += dt;
    }
    grow_cap(now, dt);
  }
  last_observe_ = now;
  prev_in_flight_ = in_flight;
  prev_hold_ = state;
  max_in_flight_seen_ = std::max(max_in_flight_seen_, in_flight);
  if (now >= next_point_) record(now, in_flight);
}

// One point of the timeline; past kMaxPoints every other point goes and the interval doubles.
void RateController::record(Clock::time_point now, int in_flight) {
  timeline_.push_back({secs(now - t0_), static_cast<double>(in_flight), static_cast<double>(window()),
                       static_cast<double>(answers_ok_), static_cast<double>(refused_)});
  if (timeline_.size() >= kMaxPoints) {
    std::vector<std::array<double, 5>> kept;
    for (std::size_t i = 0; i < timeline_.size(); i += 2) kept.push_back(timeline_[i]);
    timeline_.swap(kept);
    point_interval_s_ *= 2;
  }
  next_point_ = after(now, point_interval_s_);
}

nlohmann::json RateController::to_json() const {
  double total = 0;
  for (double t : time_at_) total += t;
  int lo = -1, median = 0;
  double run = 0;
  for (std::size_t n = 0; n < time_at_.size(); ++n) {
    if (time_at_[n] <= 0) continue;
    if (lo < 0) lo = static_cast<int>(n);
    if (run < total / 2 && run + time_at_[n] >= total / 2) median = static_cast<int>(n);
    run += time_at_[n];
  }
  nlohmann::json held = nlohmann::json::object();
  Hold limit = Hold::none;
  for (int i = hold_index(Hold::demand); i < kHoldKinds; ++i) {
    held[hold_name(static_cast<Hold>(i))] = held_s_[i];
    if (i != hold_index(Hold::demand) && held_s_[i] > 0 &&
        (limit == Hold::none || held_s_[i] > held_s_[hold_index(limit)]))
      limit = static_cast<Hold>(i);
  }
  auto bucket = [](const Bucket &b, const char *from) {
    return b.on ? nlohmann::json{{"size", b.cap}, {"per_second", b.rate}, {"from", from}} : nlohmann::json();
  };
  nlohmann::json limits = nlohmann::json::object();
  if (req_hand_.on) limits["requests"] = bucket(req_hand_, "requests_per_minute");
  if (req_hdr_.on) limits["requests"] = bucket(req_hdr_, "headers");
  if (tok_hand_.on) limits["tokens"] = bucket(tok_hand_, "tokens_per_minute");
  if (tok_hdr_.on) limits["tokens"] = bucket(tok_hdr_, "headers");
  if (cap_.on) limits["after_refusals"] = bucket(cap_, "429 without rate-limit headers");
  nlohmann::json rows = nlohmann::json::array();
  for (const auto &p : timeline_) rows.push_back({p[0], p[1], p[2], p[3], p[4]});
  // Points are taken every interval at most: a last one where things stood when last observed, so that the
  // answers (and 429s) after the last point are not missing from the run's charts.
  if (!timeline_.empty() && secs(last_observe_ - t0_) > timeline_.back()[0])
    rows.push_back({secs(last_observe_ - t0_), static_cast<double>(prev_in_flight_), static_cast<double>(window()),
                    static_cast<double>(answers_ok_), static_cast<double>(refused_)});
  return {{"adaptive", s_.adaptive},
          {"ceiling", s_.ceiling},
          {"window", window()},
          {"concurrency", {{"min", std::max(lo, 0)}, {"median", median}, {"max", max_in_flight_seen_}}},
          {"limit", hold_name(limit)},
          {"held_s", held},
          {"capacity_wait_s", capacity_wait_s_},
          {"http_429", refused_},
          {"http_503", overloaded_},
          {"token_scale", token_scale_},
          {"latency_least_s", base_latency_s_ >= 0 ? nlohmann::json(base_latency_s_) : nlohmann::json()},
          {"rate_limits", limits},
          {"timeline",
           {{"interval_s", point_interval_s_},
            {"columns", {"t_s", "in_flight", "window", "answers", "http_429"}},
            {"rows", rows}}}};
}

}  // namespace evalgraph::llm
