// How many calls a provider gets at once and how fast they go (docs/llm-providers.md, "How fast a provider is
// driven"). One RateController per provider, on LlmService's event-loop thread only.
//
// * The window (calls in flight) finds itself below `max_in_flight` (the ceiling), from 8 (from the ceiling, 64
//   at most, where max_in_flight was set: the user said the server takes that many): it doubles each round
//   (half a window of answers) while it is what holds the calls back and the answers' latency does not rise (slow
//   start), then grows by sqrt(window)/2 a round (a window of answers); it holds where the median latency of a round
//   rises 15 % over the least seen (a server that queues: Vegas/Gradient), shrinks towards 1.1x that latency (by
//   30 % a round at most) where it rises 30 %, and does not grow back into a window that queued for 5 s (10 when
//   it queues again, 2 where the rise was within three standard errors: maybe noise); a rise counts beyond the medians'
//   noise (from a round's spread, or from how consecutive medians at one window differed where that is far less: a
//   queue's 1x/2x spread is not noise); it halves on a 503/529 (overloaded). The first round after a move (but in slow
//   start) only lets the server's queue settle. At the first rise of latency, then every 20 s, a ProbeRTT descent
//   (as BBR) halves the window round by round while the latency falls (calls still queued); the first round whose
//   latency no longer falls gives the least latency (the first descent's first step always goes on: the round
//   before it was read while the queue still built, and reads low), and the window goes back to at most 1.2x the best
//   rate of answers times it (the bandwidth-delay product): a small server is not queued again.
// * Rate limits the provider states (x-ratelimit-*, anthropic-ratelimit-*) become two buckets, requests and
//   tokens: their size, refill rate and level, reconciled with every answer's headers (what the provider had
//   left when it counted that call, plus the refill since, minus what was sent after it). A call goes only when
//   both hold its cost plus a margin of 2 % of the bucket: the provider is not sent what it would refuse.
// * A 429 without such headers (retry-after only) caps the send rate (AIMD on the rate, once per latency): the
//   rate of the last second's sends (the first time no more than the rate accepted so far; later no more than the
//   cap) cut by the share of answers refused lately (at least 10 %, at most half); while the cap is what holds the
//   calls back and nothing was refused for two latencies it grows, 12 % a second up to 0.97x the rate it was cut from,
//   3 % a second beyond.
// * requests_per_minute / tokens_per_minute set by hand are buckets too (one request; a second of tokens).
// * adaptive: false keeps the fixed window of max_in_flight and the hand-set limits only (no headers, no cap).
// Everything it decided is counted (to_json): concurrency over time, what held it, 429s, time waited.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <deque>
#include <nlohmann/json.hpp>
#include <vector>

#include "llm/rate_limit_headers.h"

namespace evalgraph::llm {

struct RateSettings {
  bool adaptive = true;
  int ceiling = 256;               // max_in_flight
  bool ceiling_stated = false;     // max_in_flight is not the default: the server takes that many, start higher
  double requests_per_minute = 0;  // 0: none set by hand
  double tokens_per_minute = 0;
};

// What holds a provider's next call back: nothing waits (demand), the ceiling, the adaptive window (latency), the
// request or token bucket, the cap after refusals (429 without headers, 503).
enum class Hold : std::uint8_t { none, demand, ceiling, latency, requests, tokens, refusals };
constexpr int kHoldKinds = 7;
const char *hold_name(Hold h);

class RateController {
 public:
  using Clock = std::chrono::steady_clock;
  // What one send took from the buckets; handed back with its answer.
  struct Ticket {
    Clock::time_point sent{};
    double requests_after = 0, tokens_after = 0;  // the sends so far, this one included
  };
  enum class Answer { ok, refused, overloaded, failed };  // 2xx, 429, 503/529, anything else

  explicit RateController(RateSettings s);

  // Whether a call of `tokens` (< 0: not counted) may start now with `in_flight` calls in flight; when not, `at`
  // is when to look again (time_point::max(): when a call ends).
  bool may_send(Clock::time_point now, int in_flight, double tokens, Clock::time_point &at);
  Ticket on_send(Clock::time_point now, double tokens);
  // An attempt ended: what it came to, its latency (send to answer) and the headers it carried.
  void on_answer(Clock::time_point now, const Ticket &t, Answer a, double latency_s, const RateLimitHeaders &h);
  // The provider's state now (after the loop started what it could): time is counted to what held it.
  void observe(Clock::time_point now, int in_flight, std::size_t waiting);

  bool counts_tokens() const { return tok_hand_.on || tok_hdr_.on; }  // calls should carry their tokens
  int window() const;
  nlohmann::json to_json() const;

 private:
  struct Bucket {
    bool on = false;
    double rate = 0, cap = 0, level = 0;  // per second; size; what is left
    Clock::time_point at{};
    void refill(Clock::time_point now);
    // Seconds until `need` is there (0: now).
    double wait_for(double need) const;
  };
  void reconcile(Bucket &b, const LimitReading &r, double sent_after, Clock::time_point sent, Clock::time_point now);
  bool bucket_allows(Bucket &b, double need, Hold why, Clock::time_point now, Clock::time_point &at);
  void on_refused(Clock::time_point now, const RateLimitHeaders &h, double tokens_cost);
  void end_round(Clock::time_point now);
  int round_size() const;
  void start_probe(double mean_s, double to);
  double held_noise(double median, double formula);
  void latency_round(Clock::time_point now, double mean_s, double noise);  // noise: the standard error of log(median)
  bool probe_round(Clock::time_point now, double mean_s, double noise, bool measured);

  void grow_cap(Clock::time_point now, double dt);
  void record(Clock::time_point now, int in_flight);

  RateSettings s_;
  Bucket req_hand_, tok_hand_, req_hdr_, tok_hdr_, cap_;  // cap_: the send rate after header-less 429s
  double requests_sent_ = 0, tokens_sent_ = 0;
  double mean_tokens_ = 0;  // of the calls sent, for a call that was not counted
  // What the provider counts per token we count: raised 15 % by a 429 the token bucket explains (it counts more
  // than we do: another tokenizer, images, n > 1), back towards 1 by 0.05 % an answer.
  double token_scale_ = 1;
  Clock::time_point last_scale_{};
  Hold hold_ = Hold::none;  // what held the last call that could not start

  // the adaptive window and its rounds
  double window_;
  bool slow_start_ = true;
  double base_latency_s_ = -1, recent_latency_s_ = -1;
  int round_target_ = 8, round_answers_ = 0, round_ok_ = 0;
  double round_latency_sum_ = 0, probe_from_window_ = 0;
  std::vector<double> round_latencies_;
  bool settling_ = false;  // the window just moved: the next round is not measured
  Clock::time_point round_start_{}, next_probe_{};
  Clock::time_point round_began_{};  // when the round under way began (its answers' rate)
  double best_rate_ = 0;             // the most answers a second a round has had
  double base_noise_ = 0;            // the standard error of log(base_latency_s_)
  int pair_window_ = 0;              // the window of the rounds in pair_sq_ ...
  double last_median_ = 0;           // ... the last one's median
  std::deque<double> pair_sq_;       // half the squared log ratio of consecutive medians at that window
  double probe_latency_s_ = 0;       // the last round's median in a ProbeRTT descent
  double queued_window_ = 0;         // the last window whose latency rose past kShrinkRise ...
  Clock::time_point queued_until_{};  // ... not grown into again before this
  double queued_memory_s_ = 0;        // (5 s, twice as long each time the same window queues again)
  bool round_limited_ = false, round_refused_ = false;
  Clock::time_point last_cut_{}, cap_hold_until_{}, last_refusal_{};
  double cap_cut_from_ = 0;  // the rate the send-rate cap was last cut from

  double refused_share_ = 0;
  std::deque<Clock::time_point> sends_;           // of the last second
  double send_rate(Clock::time_point now) const;  // of the answers lately (an average over about the last 10)

  // what was observed, for to_json
  bool started_ = false;
  Clock::time_point t0_{}, last_observe_{}, next_point_{};
  int prev_in_flight_ = 0;
  Hold prev_hold_ = Hold::demand;
  double held_s_[kHoldKinds] = {};
  std::vector<double> time_at_;  // seconds spent with n calls in flight (while calls waited or were in flight)
  int max_in_flight_seen_ = 0;
  std::uint64_t answers_ok_ = 0, refused_ = 0, overloaded_ = 0;
  double capacity_wait_s_ = 0;
  double point_interval_s_ = 0.5;
  std::vector<std::array<double, 5>> timeline_;  // t, in flight, window, answers ok, refused (cumulative)
};

}  // namespace evalgraph::llm
