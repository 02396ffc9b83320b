// The test server's provider-like limits (bench/ratelimit_bench.sh, docs/llm-providers.md "The test server"):
//   (a) token buckets of requests and tokens per minute; a request that does not fit gets a 429, and every answer
//       carries OpenAI's x-ratelimit-{limit,remaining,reset}-{requests,tokens} headers;
//   (b) the same with headers: false — a 429 with retry-after (whole seconds) and nothing else;
//   (c) capacity K: K answers are worked on at once, the others wait in a queue (their latency grows with it); it
//       never refuses;
//   (d) (a) or (b) with cut_at_s: the limits are multiplied by cut_factor from cut_at_s to cut_at_s + cut_for_s
//       (another tenant took the quota), then come back.
// Times count from the first chat or embeddings request. A request's tokens: its messages' (or inputs')
// characters / 4 rounded up, 4 per message, plus max_tokens (OpenAI counts max_tokens at admission too).
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <string>

namespace evalgraph::testing {

struct ProviderLimits {
  double requests_per_minute = 0, tokens_per_minute = 0;  // 0: no such bucket
  double burst_s = 60;  // each bucket holds this many seconds of its rate (OpenAI's: a minute)
  bool headers = true;  // false: (b)
  int capacity = 0;     // (c): answers worked on at once (0: no limit)
  double cut_at_s = -1, cut_for_s = 0, cut_factor = 0.5;  // (d)
  bool any() const { return requests_per_minute > 0 || tokens_per_minute > 0 || capacity > 0; }
};

// The state of the buckets and of the queue; thread-safe.
class LimitState {
 public:
  explicit LimitState(ProviderLimits l) : l_(l) {}
  struct Verdict {
    bool refused = false;
    std::map<std::string, std::string> headers;  // to set on the answer (429 or not)
  };
  // A request of `tokens` arrives: counted against the buckets, or refused.
  Verdict admit(double tokens);
  // (c): runs `start` when one of the K places is free (at once, or when release() frees one); without a capacity
  // at once. `start` must call release() when its answer is done.
  void acquire(std::function<void()> start);
  void release();
  std::uint64_t refused() const;

 private:
  struct Bucket {
    double level = -1;  // -1: full (not started)
  };
  double factor(double t) const;
  void refill(double t);

  ProviderLimits l_;
  mutable std::mutex mu_;
  bool started_ = false;
  std::chrono::steady_clock::time_point t0_{};
  double last_t_ = 0, last_factor_ = 1;
  Bucket req_, tok_;
  std::uint64_t refused_ = 0;
  int busy_ = 0;
  std::deque<std::function<void()>> waiting_;
};

// A duration as OpenAI writes it: "6m0s", "1.5s", "20ms".
std::string openai_duration(double seconds);

}  // namespace evalgraph::testing
