// The inside of LlmService (llm_service.h), shared by the files it is written in (README.md, "Files"):
//   llm_service.cpp        the front door: providers, cache look-up, merging of identical calls in flight, dry run,
//                          budget, completion of a call, the public methods
//   transport.cpp          HTTP over libcurl: the event-loop thread, its transfers, epoll and the eventfd
//   retry.cpp              what a failed attempt was, and whether and when it is tried again (backoff, Retry-After)
//   answer_validation.cpp  reading an answer: checked JSON, choices / embeddings, usage, the model that answered
// Included by those four files only.
#pragma once

#include <curl/curl.h>

#include <atomic>
#include <cctype>
#include <chrono>
#include <deque>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <nlohmann/json.hpp>

#include "llm/budget_gate.h"
#include "llm/llm_service.h"
#include "llm/rate_controller.h"
#include "llm/rate_limit_headers.h"
#include "llm/response_cache.h"
#include "util/raw_json.h"

namespace evalgraph::llm {
namespace detail {

using Clock = std::chrono::steady_clock;

inline double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

inline std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

inline std::string trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r' || s.back() == '\n'))
    s.remove_suffix(1);
  return std::string(s);
}

inline std::string dump(const nlohmann::json& j) { return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace); }

// answer_validation.cpp
std::string snippet(std::string_view body);
const rawjson::CheckOptions& response_check();
std::string server_message(const std::string& body);
bool reported_usage(const nlohmann::json& response, bool embed, Usage& u);

// transport.cpp
void call_global_init();

struct Job {
  std::size_t prov = 0;
  bool embed = false;
  std::string url, body, key;
  std::size_t n_inputs = 0;
  int attempts = 0, malformed = 0, last_status = 0;
  Clock::time_point start;
  std::promise<CallResult> promise;
  // Single flight: identical calls (same cache key) made while this one is in flight wait for its answer
  // instead of sending their own request. Only with the cache on, where they would get that answer anyway.
  bool follower = false;
  std::vector<std::shared_ptr<Job>> followers;  // guarded by Impl::flight_mu
  bool gated = false;  // admitted by the budget with `reserve` held until it finishes
  double reserve = 0;
  double tokens = -1;  // prompt + max_tokens, for the token buckets (rate_controller.h); -1: not counted
};
using JobPtr = std::shared_ptr<Job>;

struct Transfer {
  JobPtr job;
  CURL* easy = nullptr;
  curl_slist* headers = nullptr;
  std::string body, content_type, retry_after, retry_after_ms, location, content_encoding;
  // Response memory bounds (ProviderConfig::max_response_bytes, max_response_bytes_in_flight): the body is
  // counted as it arrives, after decompression, against this answer's limit and the provider's total.
  std::size_t limit = 0, total_limit = 0;
  std::size_t* buffered = nullptr;  // the provider's bytes held by its transfers in flight (loop thread)
  bool too_large = false, over_total = false;
  RateLimitHeaders limits;          // what the answer said of the provider's rate limits
  RateController::Ticket ticket;    // what its send took from the provider's buckets
  char errbuf[CURL_ERROR_SIZE] = {0};
};

struct Stats {
  std::uint64_t calls = 0, cache_hits = 0, cache_misses = 0, merged = 0, http_requests = 0, retries = 0, errors = 0,
                malformed = 0, prompt_tokens = 0, completion_tokens = 0, timed_calls = 0;
  double latency_total_s = 0;
  // Cost (docs/cost.md): answers fetched over HTTP are billed; hits and merged calls are not, their tokens are
  // counted apart (what the cache saved).
  std::uint64_t billed_calls = 0, cached_prompt_tokens = 0, usage_estimated_calls = 0, estimated_prompt_tokens = 0,
                estimated_completion_tokens = 0, hit_prompt_tokens = 0, hit_completion_tokens = 0;
  Cost cost;
};

struct ProviderState {
  ProviderConfig cfg;
  std::deque<JobPtr> ready;  // loop thread only
  int in_flight = 0;         // loop thread only
  std::size_t buffered = 0;  // loop thread only: bytes the bodies of its transfers in flight hold
  std::atomic<bool> model_warned{false};
  // The window and the pacing (rate_controller.h): used by the loop thread, read by stats_json, under rate_mu.
  std::unique_ptr<RateController> rate;
  mutable std::mutex rate_mu;
  std::atomic<bool> count_tokens{false};  // a token bucket is in force: prepare() counts each call's tokens
  Stats stats;  // guarded by Impl::stats_mu
};

}  // namespace detail

struct LlmService::Impl {
  using Clock = detail::Clock;
  using Job = detail::Job;
  using JobPtr = detail::JobPtr;
  using Transfer = detail::Transfer;
  using ProviderState = detail::ProviderState;

  std::vector<std::unique_ptr<ProviderState>> provs;
  std::unordered_map<std::string, std::size_t> index;
  std::vector<std::string> secrets;
  std::unique_ptr<ResponseCache> cache;
  std::unique_ptr<ResponseCache> call_log;  // CacheOptions::call_log_path: beside the cache, written through

  mutable std::mutex stats_mu;
  mutable std::mutex log_mu;
  mutable std::mutex token_mu;
  std::shared_ptr<const TokenCounter> token_counter;
  std::mutex flight_mu;                                              // guards in_flight and Job::followers
  std::unordered_map<std::string, std::shared_ptr<Job>> in_flight;  // cache key → the call that sends it
  LogFn logger;

  std::mutex mu;  // guards incoming, stopping
  std::vector<JobPtr> incoming;
  bool stopping = false;
  std::atomic<bool> cancel_flag{false};
  bool dry_run = false;

  BudgetGate gate;  // the budget (set_budget)

  CURLM* multi = nullptr;
  // The loop waits in epoll on the sockets libcurl names (CURLMOPT_SOCKETFUNCTION) and on an eventfd that
  // submit() and cancel() write to; libcurl is told of each ready socket alone (curl_multi_socket_action), so
  // an answer costs the same with 64 transfers in flight as with one (curl_multi_perform and curl_multi_poll
  // went over every transfer's socket at each wakeup: twice the CPU per call when answers come one by one).
  int epfd = -1, evfd = -1;
  bool timer_set = false;  // libcurl's timeout (CURLMOPT_TIMERFUNCTION): when to call it with CURL_SOCKET_TIMEOUT
  Clock::time_point timer_at{};
  std::thread loop_thread;
  // loop-thread state
  std::multimap<Clock::time_point, JobPtr> delayed;
  std::unordered_set<Transfer*> active;
  std::vector<CURL*> easy_pool;
  std::mt19937_64 rng{std::random_device{}()};
  bool cancel_done = false;
  int stop_slot = -1;         // our eventfd's slot in the stop request's wake list
  bool stop_seen = false;     // the loop has acted on a stop request
  Clock::time_point stop_deadline{};  // transfers still in flight then are cut

  // What one finished transfer came to: its answer, or what went wrong and whether a retry may help.
  struct Outcome {
    nlohmann::json resp;
    std::string err;
    bool retryable = false;
    bool malformed = false;
    double retry_after = -1;  // seconds the server asked to wait (Retry-After), -1 when it did not
  };

  // ---- the front door (llm_service.cpp) ----
  double estimated_cost(std::size_t i, const nlohmann::json& body, bool embed) const;
  double call_tokens(const ProviderState& ps, const nlohmann::json& body, bool embed, std::size_t text_bytes) const;
  void release(const Job& job, const CallResult& r);
  std::string redact(std::string s) const;
  void log(LogLevel lvl, const std::string& msg);
  std::shared_ptr<const TokenCounter> tokens() const;
  void finish(const JobPtr& job, CallResult r);
  void fail(const JobPtr& job, std::string error, bool stopped = false);
  void answer(const JobPtr& job, const ProviderConfig& cfg, nlohmann::json resp);
  static std::string stop_message();
  std::string key_for(const ProviderState& ps, const char* kind, const std::string& model, const std::string& body,
                      int replication) const;
  static std::string dry_text(const nlohmann::json& request, const std::string& model);
  JobPtr fail_unsent(ProviderState& ps, CallResult& out, std::string e);
  static std::string request_problem(const ProviderConfig& cfg, bool embed, const nlohmann::json& request,
                                     const std::string& model);
  bool answer_from_cache(ProviderState& ps, const std::string& key, bool embed, Clock::time_point t0, CallResult& out);
  bool within_budget(std::size_t prov, const std::string& key, const nlohmann::json& body, bool embed,
                     const std::function<void()>* before_wait, CallResult& out, bool& gated, double& reserve,
                     std::string& refusal);
  void answer_dry(bool embed, const nlohmann::json& counted, std::size_t n_inputs, CallResult& out);
  void join_in_flight(ProviderState& ps, const JobPtr& job);
  JobPtr prepare(const std::string& provider, bool embed, const nlohmann::json& request, std::size_t n_inputs,
                 int replication, CallResult& out, const std::function<void()>* before_wait = nullptr);
  void submit(std::vector<JobPtr>& jobs);

  // ---- transport (transport.cpp; on the loop thread but for start_loop, stop_loop and wake) ----
  void start_loop();
  void stop_loop();
  void start_transfer(const JobPtr& job);
  void dispatch(detail::ProviderState& ps, Clock::time_point now, Clock::time_point& wake);
  void release_transfer(Transfer* t, bool in_multi);
  void on_done(CURLMsg* cmsg);
  void fail_active(const std::string& why, bool stopped);
  void fail_waiting(const std::string& why, bool stopped);
  void fail_everything(const std::string& why);
  Clock::time_point observe_stop(Clock::time_point wake);
  void wake();
  static int socket_cb(CURL*, curl_socket_t fd, int what, void* userp, void*);
  static int timer_cb(CURLM*, long timeout_ms, void* userp);
  void run();

  // ---- retry (retry.cpp) ----
  static void read_curl_failure(const Transfer& t, CURLcode code, const ProviderConfig& cfg, Outcome& o);
  static void read_http_failure(const Transfer& t, long status, Outcome& o);
  void retry_or_fail(const JobPtr& job, const ProviderConfig& cfg, const Outcome& o,
                     const std::string& retry_after_text);

  // ---- answer validation (answer_validation.cpp) ----
  void check_model(ProviderState& ps, const nlohmann::json& resp);
  Usage usage_of(const Job& job, const nlohmann::json& response) const;
  bool validate(const Job& job, const Transfer& t, nlohmann::json& out, std::string& err);
  void read_answer(Job& job, const Transfer& t, long status, ProviderState& ps, Outcome& o);
};

}  // namespace evalgraph::llm
