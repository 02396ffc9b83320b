// LlmService: see llm_service.h and README.md in this folder.
//
// Threading: callers (any number of threads) prepare a request, look it up in the cache and, on a miss,
// hand a Job to the event-loop thread and block on a std::future. The event-loop thread alone owns the
// libcurl multi handle, the per-provider ready queues, the delayed (backoff) queue and the rate limiters;
// it waits in epoll on the sockets libcurl names and is woken through an eventfd. Successful answers are
// queued to the cache's writer thread.
#include "llm/llm_service.h"

#include <curl/curl.h>
#include <string.h>  // explicit_bzero
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdlib>
#include <ctime>
#include <deque>
#include <future>
#include <map>
#include <mutex>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

#include "llm/budget_gate.h"
#include "llm/response_cache.h"
#include "util/sha256.h"
#include "llm/tokens.h"
#include "util/named_thread.h"
#include <evalgraph/json_writer.hpp>

#include "util/json_build.h"
#include "util/raw_json.h"
#include "util/stop.h"

namespace evalgraph::llm {
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::size_t kSnippetBytes = 200;
// What a dry run (estimate) answers a call the cache does not hold: one short token, not empty, so that a node
// that refuses an empty answer still hands it on and the nodes after it build (and count) their requests.
constexpr const char* kDryAnswer = "-";

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r' || s.back() == '\n'))
    s.remove_suffix(1);
  return std::string(s);
}

// First kSnippetBytes of a body, printable ASCII kept, everything else escaped (keeps error strings valid
// UTF-8 whatever the server sent).
std::string snippet(std::string_view body) {
  std::string out;
  std::size_t n = std::min(body.size(), kSnippetBytes);
  for (std::size_t i = 0; i < n; ++i) {
    auto c = static_cast<unsigned char>(body[i]);
    if (c >= 0x20 && c < 0x7f)
      out.push_back(static_cast<char>(c));
    else if (c == '\n' || c == '\r' || c == '\t')
      out.push_back(' ');
    else
      out += fmt::format("\\x{:02x}", c);
  }
  if (body.size() > n) out += "...";
  return out;
}

void call_global_init() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

// Whether an easy handle may serve another transfer. libcurl before 8.1.0 keeps a pointer to the previous
// transfer's last header in the handle, and a response that starts with a folded header line (" x" right after
// the status line) then reads and frees freed memory (curl issue #11101, fixed by curl PR #11103; Debian 12 has
// 7.88.1). Found by tests/fuzz/fuzz_llm_response. There, each handle serves one transfer; connections are
// still reused (they live in the multi handle).
bool reuse_easy_handles() {
  static const bool ok = curl_version_info(CURLVERSION_NOW)->version_num >= 0x080100;
  return ok;
}

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

// The usage the server reported in an answer: prompt_tokens and completion_tokens (embeddings: prompt_tokens
// only), cached tokens from prompt_tokens_details.cached_tokens. False when it sent none.
bool reported_usage(const nlohmann::json& response, bool embed, Usage& u) {
  auto it = response.find("usage");
  if (it == response.end() || !it->is_object()) return false;
  auto num = [](const nlohmann::json& o, const char* k, std::uint64_t& out) {
    auto f = o.find(k);
    if (f == o.end() || !f->is_number() || f->get<double>() < 0) return false;
    out = f->is_number_unsigned() ? f->get<std::uint64_t>() : static_cast<std::uint64_t>(f->get<double>());
    return true;
  };
  if (!num(*it, "prompt_tokens", u.prompt_tokens)) return false;
  if (!num(*it, "completion_tokens", u.completion_tokens) && !embed) return false;
  if (auto d = it->find("prompt_tokens_details"); d != it->end() && d->is_object()) num(*d, "cached_tokens", u.cached_tokens);
  return true;
}

struct ProviderState {
  ProviderConfig cfg;
  std::deque<JobPtr> ready;  // loop thread only
  int in_flight = 0;         // loop thread only
  std::size_t buffered = 0;  // loop thread only: bytes the bodies of its transfers in flight hold
  std::atomic<bool> model_warned{false};
  Clock::time_point next_send{};
  Stats stats;  // guarded by Impl::stats_mu
};

// Receives the body as it arrives, already decompressed by libcurl (CURLOPT_ACCEPT_ENCODING inflates
// gzip/deflate/br in a stream, a few KiB at a time), so the limits hold for what is held in memory; returning
// short aborts the transfer at once (CURLE_WRITE_ERROR).
size_t write_cb(char* ptr, size_t size, size_t nmemb, void* ud) {
  auto* t = static_cast<Transfer*>(ud);
  size_t n = size * nmemb;
  if (t->body.size() + n > t->limit) {
    t->too_large = true;
    return 0;
  }
  if (*t->buffered + n > t->total_limit) {
    t->over_total = true;
    return 0;
  }
  if (t->body.capacity() < t->body.size() + n)  // grow by doubling, but never past the limit
    t->body.reserve(std::min(t->limit, std::max<std::size_t>(t->body.size() + n, 2 * t->body.capacity())));
  t->body.append(ptr, n);
  *t->buffered += n;
  return n;
}

size_t header_cb(char* ptr, size_t size, size_t nmemb, void* ud) {
  auto* t = static_cast<Transfer*>(ud);
  size_t n = size * nmemb;
  std::string_view line(ptr, n);
  if (line.rfind("HTTP/", 0) == 0) {  // a new response head (e.g. after 100 Continue)
    t->content_type.clear();
    t->retry_after.clear();
    t->retry_after_ms.clear();
    t->location.clear();
    t->content_encoding.clear();
    return n;
  }
  auto colon = line.find(':');
  if (colon == std::string_view::npos) return n;
  std::string name = lower(trim(line.substr(0, colon)));
  std::string value = trim(line.substr(colon + 1));
  if (name == "content-type")
    t->content_type = value;
  else if (name == "retry-after")
    t->retry_after = value;
  else if (name == "retry-after-ms")
    t->retry_after_ms = value;
  else if (name == "location")
    t->location = value;
  else if (name == "content-encoding")
    t->content_encoding = lower(value);
  else if (name == "content-length" && t->content_encoding.empty()) {
    // An announced length over the limit: refused before a byte of the body is read.
    char* end = nullptr;
    unsigned long long len = std::strtoull(value.c_str(), &end, 10);
    if (end != value.c_str() && len > t->limit) {
      t->too_large = true;
      return 0;
    }
  }
  return n;
}

void wipe_and_free(curl_slist* l) {
  for (auto* p = l; p; p = p->next)
    if (p->data) explicit_bzero(p->data, std::strlen(p->data));
  curl_slist_free_all(l);
}

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

// Responses (and cache entries) nested deeper than this are refused before they are parsed: an answer is a few
// levels deep, and what a plugin does with it (dump, copy) recurses.
constexpr int kMaxResponseDepth = 64;
const rawjson::CheckOptions& response_check() {
  static const rawjson::CheckOptions o = [] {
    rawjson::CheckOptions c;
    c.max_depth = kMaxResponseDepth;
    return c;
  }();
  return o;
}

// The server's message from an error body: {"error":{"message":..}}, {"error":".."}, {"message":..}, or a snippet.
std::string server_message(const std::string& body) {
  rawjson::CheckResult chk;
  rawjson::check(body, response_check(), chk, nullptr);
  auto j = chk.ok() ? nlohmann::json::parse(body, nullptr, false) : nlohmann::json(nlohmann::json::value_t::discarded);
  if (!j.is_discarded() && j.is_object()) {
    if (j.contains("error")) {
      const auto& e = j["error"];
      if (e.is_object() && e.contains("message") && e["message"].is_string()) return e["message"].get<std::string>();
      if (e.is_string()) return e.get<std::string>();
    }
    if (j.contains("message") && j["message"].is_string()) return j["message"].get<std::string>();
    if (j.contains("detail") && j["detail"].is_string()) return j["detail"].get<std::string>();
  }
  if (body.empty()) return "(empty body)";
  return "body starts: '" + snippet(body) + "'";
}

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

// Whether the model that answered is the one asked for, up to a version or date suffix ("gpt-4o" answered by
// "gpt-4o-2024-08-06") and an "org/" prefix, case aside.
bool same_model(std::string asked, std::string answered) {
  auto base = [](std::string m) {
    m = lower(std::move(m));
    if (auto slash = m.rfind('/'); slash != std::string::npos) m.erase(0, slash + 1);
    return m;
  };
  asked = base(std::move(asked));
  answered = base(std::move(answered));
  if (asked == answered) return true;
  const std::string& shorter = asked.size() < answered.size() ? asked : answered;
  const std::string& longer = asked.size() < answered.size() ? answered : asked;
  if (shorter.empty() || longer.compare(0, shorter.size(), shorter) != 0) return false;
  char sep = longer[shorter.size()];
  return sep == '-' || sep == ':' || sep == '@' || sep == '.' || sep == '_';
}

std::string dump(const nlohmann::json& j) { return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace); }

}  // namespace

struct LlmService::Impl {
  std::vector<std::unique_ptr<ProviderState>> provs;
  std::unordered_map<std::string, std::size_t> index;
  std::vector<std::string> secrets;
  std::unique_ptr<ResponseCache> cache;

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

  // What a call to provider i costs by its tokens (its reserve before the provider's first billed answer).
  double estimated_cost(std::size_t i, const nlohmann::json& body, bool embed) const {
    auto tc = tokens();
    Usage u;
    u.prompt_tokens = embed ? tc->embedding_tokens(body) : tc->chat_prompt_tokens(body);
    u.completion_tokens = u.prompt_tokens;
    for (const char* k : {"max_tokens", "max_completion_tokens"})
      if (auto it = body.find(k); it != body.end() && it->is_number_unsigned()) u.completion_tokens = it->get<std::uint64_t>();
    if (embed) u.completion_tokens = 0;
    return cost_of(provs[i]->cfg.price, u).total();
  }

  void release(const Job& job, const CallResult& r) {
    if (job.gated) gate.release(job.prov, job.reserve, r.ok && !r.merged, r.cost.total());
  }

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

  std::string redact(std::string s) const {
    for (const auto& k : secrets) {
      std::size_t pos = 0;
      while ((pos = s.find(k, pos)) != std::string::npos) {
        s.replace(pos, k.size(), "***");
        pos += 3;
      }
    }
    return s;
  }

  void log(LogLevel lvl, const std::string& msg) {
    std::lock_guard lk(log_mu);
    if (logger) logger(lvl, redact(msg));
  }

  // A one-time warning (run.log) when the model that answered is not the one the provider asks for.
  void check_model(ProviderState& ps, const nlohmann::json& resp) {
    if (ps.model_warned.load() || !resp.contains("model") || !resp["model"].is_string()) return;
    const std::string& answered = resp["model"].get_ref<const std::string&>();
    if (answered.empty() || same_model(ps.cfg.model, answered)) return;
    if (ps.model_warned.exchange(true)) return;
    log(LogLevel::warn, fmt::format("provider '{}': asked for model '{}', the answer names model '{}' (said once; "
                                    "the answers are used as they are)", ps.cfg.name, ps.cfg.model, snippet(answered)));
  }

  // The tokens of an answer: the server's usage, else counted (marked estimated).
  Usage usage_of(const Job& job, const nlohmann::json& response) const {
    Usage u;
    if (reported_usage(response, job.embed, u)) return u;
    u = Usage{};
    u.estimated = true;
    auto tc = tokens();
    nlohmann::json body = nlohmann::json::parse(job.body, nullptr, false);
    if (!body.is_discarded()) u.prompt_tokens = job.embed ? tc->embedding_tokens(body) : tc->chat_prompt_tokens(body);
    if (!job.embed) u.completion_tokens = tc->completion_tokens(response);
    return u;
  }

  std::shared_ptr<const TokenCounter> tokens() const {
    std::lock_guard lk(token_mu);
    return token_counter;
  }

  // ---- completion helpers (loop thread) ----
  void finish(const JobPtr& job, CallResult r) {
    auto& ps = *provs[job->prov];
    r.latency_s = seconds_since(job->start);
    r.attempts = job->attempts;
    r.http_status = job->last_status;
    if (!r.ok) r.error = redact(std::move(r.error));
    if (r.ok) {
      r.usage = usage_of(*job, r.response);
      r.cost = cost_of(ps.cfg.price, r.usage);
    }
    {
      std::lock_guard lk(stats_mu);
      if (!r.ok) ++ps.stats.errors;
      ++ps.stats.timed_calls;
      ps.stats.latency_total_s += r.latency_s;
      if (r.ok) {
        auto& st = ps.stats;
        ++st.billed_calls;
        st.prompt_tokens += r.usage.prompt_tokens;
        st.completion_tokens += r.usage.completion_tokens;
        st.cached_prompt_tokens += std::min(r.usage.cached_tokens, r.usage.prompt_tokens);
        if (r.usage.estimated) {
          ++st.usage_estimated_calls;
          st.estimated_prompt_tokens += r.usage.prompt_tokens;
          st.estimated_completion_tokens += r.usage.completion_tokens;
        }
        st.cost.input_usd += r.cost.input_usd;
        st.cost.cached_input_usd += r.cost.cached_input_usd;
        st.cost.output_usd += r.cost.output_usd;
      }
    }
    release(*job, r);
    std::vector<JobPtr> followers;
    if (!job->key.empty()) {
      std::lock_guard lk(flight_mu);
      auto it = in_flight.find(job->key);
      if (it != in_flight.end() && it->second == job) in_flight.erase(it);
      followers.swap(job->followers);
    }
    for (auto& f : followers) {
      CallResult copy = r;
      copy.merged = true;
      copy.cost = Cost{};  // one request was paid for
      release(*f, copy);
      copy.latency_s = seconds_since(f->start);
      f->promise.set_value(std::move(copy));
    }
    job->promise.set_value(std::move(r));
  }

  void fail(const JobPtr& job, std::string error, bool stopped = false) {
    CallResult r;
    r.ok = false;
    r.stopped = stopped;
    r.error = std::move(error);
    finish(job, std::move(r));
  }

  void start_transfer(const JobPtr& job) {
    auto& ps = *provs[job->prov];
    const auto& cfg = ps.cfg;
    ++job->attempts;
    CURL* e;
    if (!easy_pool.empty()) {
      e = easy_pool.back();
      easy_pool.pop_back();
    } else {
      e = curl_easy_init();
      if (!e) {
        fail(job, fmt::format("provider '{}': curl_easy_init failed", cfg.name));
        return;
      }
    }
    auto* t = new Transfer;
    t->job = job;
    t->easy = e;
    t->limit = cfg.max_response_bytes;
    t->total_limit = cfg.max_response_bytes_in_flight;
    t->buffered = &ps.buffered;
    curl_slist* h = nullptr;
    h = curl_slist_append(h, "Content-Type: application/json");
    h = curl_slist_append(h, "Accept: application/json");
    h = curl_slist_append(h, "Expect:");
    for (const auto& [k, v] : cfg.headers) h = curl_slist_append(h, (k + ": " + v).c_str());
    if (!cfg.api_key.empty()) {  // built at send time from the resolved secret; wiped after the transfer
      std::string auth = "Authorization: Bearer " + cfg.api_key;
      h = curl_slist_append(h, auth.c_str());
      explicit_bzero(auth.data(), auth.size());
    }
    t->headers = h;
    curl_easy_setopt(e, CURLOPT_URL, job->url.c_str());
    curl_easy_setopt(e, CURLOPT_POST, 1L);
    curl_easy_setopt(e, CURLOPT_POSTFIELDS, job->body.data());
    curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(job->body.size()));
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, write_cb);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, t);
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, header_cb);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, t);
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, t->errbuf);
    curl_easy_setopt(e, CURLOPT_PRIVATE, t);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, static_cast<long>(std::ceil(cfg.timeout_s * 1000)));
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(std::ceil(cfg.connect_timeout_s * 1000)));
    curl_easy_setopt(e, CURLOPT_ACCEPT_ENCODING, "");
    curl_easy_setopt(e, CURLOPT_USERAGENT, "evalgraph-llm/1");
    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(e, CURLOPT_TCP_NODELAY, 1L);
    {
      std::lock_guard lk(stats_mu);
      ++ps.stats.http_requests;
      if (job->attempts > 1) ++ps.stats.retries;
    }
    ++ps.in_flight;
    active.insert(t);
    CURLMcode mc = curl_multi_add_handle(multi, e);
    if (mc != CURLM_OK) {
      active.erase(t);
      --ps.in_flight;
      release_transfer(t, false);
      fail(job, fmt::format("provider '{}': cannot start request: {}", cfg.name, curl_multi_strerror(mc)));
    }
  }

  void release_transfer(Transfer* t, bool in_multi) {
    if (in_multi) curl_multi_remove_handle(multi, t->easy);
    *t->buffered -= t->body.size();
    curl_easy_reset(t->easy);  // drops every pointer into *t (buffers, headers) before t goes away
    wipe_and_free(t->headers);
    if (reuse_easy_handles() && easy_pool.size() < 256)
      easy_pool.push_back(t->easy);
    else
      curl_easy_cleanup(t->easy);
    delete t;
  }

  // Validates a 2xx body; returns the normalised response or an error string.
  bool validate(const Job& job, const Transfer& t, nlohmann::json& out, std::string& err) {
    if (!t.content_type.empty() && lower(t.content_type).find("json") == std::string::npos) {
      err = fmt::format("wrong content type '{}' (expected application/json); body starts: '{}'",
                        snippet(t.content_type), snippet(t.body));
      return false;
    }
    // Checked by the engine's own scanner first (no recursion, our words): valid, nested at most
    // kMaxResponseDepth deep, numbers within a double; only then parsed.
    rawjson::CheckResult chk;
    rawjson::check(t.body, response_check(), chk, nullptr);
    if (chk.error.fault == rawjson::Fault::bad_utf8) {
      err = fmt::format("the server's response is not UTF-8 (a byte sequence at byte {} is not UTF-8; JSON must be "
                        "UTF-8: check the server's or a proxy's charset); body starts: '{}'",
                        chk.error.offset, snippet(t.body));
      return false;
    }
    if (chk.error.fault != rawjson::Fault::none) {
      err = fmt::format("response is not valid JSON ({} at byte {}); body starts: '{}'", chk.error.what,
                        chk.error.offset, snippet(t.body));
      return false;
    }
    if (chk.limit_faults > 0) {
      err = fmt::format("response cannot be taken: {} (at byte {}); body starts: '{}'", chk.limits.front().what,
                        chk.limits.front().offset, snippet(t.body));
      return false;
    }
    if (!chk.object) {
      err = fmt::format("response is not a JSON object; body starts: '{}'", snippet(t.body));
      return false;
    }
    out = nlohmann::json::parse(t.body);
    if (!job.embed) {
      if (!out.contains("choices") || !out["choices"].is_array() || out["choices"].empty()) {
        err = fmt::format("response has no 'choices'; body starts: '{}'", snippet(t.body));
        return false;
      }
      return true;
    }
    if (!out.contains("data") || !out["data"].is_array() || out["data"].size() != job.n_inputs) {
      err = fmt::format("embeddings response needs 'data' with {} items; body starts: '{}'", job.n_inputs,
                        snippet(t.body));
      return false;
    }
    auto& data = out["data"];
    for (const auto& d : data)
      if (!d.is_object() || !d.contains("embedding") || !d["embedding"].is_array()) {
        err = fmt::format("embeddings item without 'embedding' array; body starts: '{}'", snippet(t.body));
        return false;
      }
    bool indexed = std::all_of(data.begin(), data.end(),
                               [](const nlohmann::json& d) { return d.contains("index") && d["index"].is_number_integer(); });
    if (indexed)
      std::stable_sort(data.begin(), data.end(), [](const nlohmann::json& a, const nlohmann::json& b) {
        return a["index"].get<long long>() < b["index"].get<long long>();
      });
    return true;
  }

  // What one finished transfer came to: its answer, or what went wrong and whether a retry may help.
  struct Outcome {
    nlohmann::json resp;
    std::string err;
    bool retryable = false;
    bool malformed = false;
    double retry_after = -1;  // seconds the server asked to wait (Retry-After), -1 when it did not
  };

  // A transfer that curl could not complete: cut at a size limit, timed out, or a network error.
  static void read_curl_failure(const Transfer& t, CURLcode code, const ProviderConfig& cfg, Outcome& o) {
    if (t.too_large) {
      o.err = fmt::format("the answer is larger than max_response_bytes ({}){}; it was cut there. If answers this "
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

  // A 2xx answer: parsed and checked; one that is not what was asked for counts as malformed.
  void read_answer(Job& job, const Transfer& t, long status, ProviderState& ps, Outcome& o) {
    bool valid = false;
    try {
      valid = validate(job, t, o.resp, o.err);
    } catch (const std::exception&) {  // (a library's words would say little here)
      o.err = fmt::format("cannot read the response: a field has an unexpected type; body starts: '{}'",
                          snippet(t.body));
    }
    if (valid) return;
    o.malformed = true;
    ++job.malformed;
    o.retryable = job.malformed < ps.cfg.max_malformed_attempts;
    o.err = fmt::format("malformed response (HTTP {}): {}", status, o.err);
    std::lock_guard lk(stats_mu);
    ++ps.stats.malformed;
  }

  // Any other HTTP status: a redirect (never followed) or an error, with the server's Retry-After.
  static void read_http_failure(const Transfer& t, long status, Outcome& o) {
    if (status >= 300 && status < 400) {
      o.err = t.location.empty()
                  ? fmt::format("HTTP {}: a redirect without a Location header (redirects are not followed)", status)
                  : fmt::format("HTTP {}: redirect to {} not followed (redirects are not followed: set base_url to the "
                                "address that answers)", status, snippet(t.location));
      return;
    }
    o.err = fmt::format("HTTP {}: {}", status, server_message(t.body));
    o.retryable = retryable_status(status);
    o.retry_after = parse_retry_after(t.retry_after);
    double ms = parse_retry_after(t.retry_after_ms);
    if (ms >= 0) o.retry_after = std::max(o.retry_after, ms / 1000.0);
  }

  // A good answer: into the cache (when there is one and it is below 64 MiB), then to the caller.
  void answer(const JobPtr& job, const ProviderConfig& cfg, nlohmann::json resp) {
    if (cache) {
      std::string txt = dump(resp);
      if (txt.size() < (std::size_t(64) << 20))
        cache->put(job->key, job->embed ? "embeddings" : "chat", cfg.name,
                   job->embed ? (cfg.embedding_model.empty() ? cfg.model : cfg.embedding_model) : cfg.model,
                   redact(std::move(txt)), seconds_since(job->start));
    }
    CallResult r;
    r.ok = true;
    r.response = std::move(resp);
    finish(job, std::move(r));
  }

  // A failed attempt: retried after a backoff (at least what the server asked) while attempts and time are
  // left; otherwise the call fails with the reason in words.
  void retry_or_fail(const JobPtr& job, const ProviderConfig& cfg, const Outcome& o, const std::string& retry_after_text) {
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

  // A transfer has ended: read what it came to, give its slot back, then answer, retry or fail the call.
  void on_done(CURLMsg* cmsg) {
    Transfer* t = nullptr;
    curl_easy_getinfo(cmsg->easy_handle, CURLINFO_PRIVATE, reinterpret_cast<char**>(&t));
    CURLcode code = cmsg->data.result;
    long status = 0;
    curl_easy_getinfo(t->easy, CURLINFO_RESPONSE_CODE, &status);
    JobPtr job = t->job;
    auto& ps = *provs[job->prov];
    --ps.in_flight;
    active.erase(t);
    job->last_status = static_cast<int>(status);

    Outcome o;
    if (code != CURLE_OK) read_curl_failure(*t, code, ps.cfg, o);
    else if (status >= 200 && status < 300) read_answer(*job, *t, status, ps, o);
    else read_http_failure(*t, status, o);
    std::string retry_after_text = !t->retry_after.empty() ? t->retry_after : t->retry_after_ms + " ms";
    bool ok = code == CURLE_OK && status >= 200 && status < 300 && !o.malformed;
    release_transfer(t, true);
    if (ok && !job->embed) check_model(ps, o.resp);
    if (ok) answer(job, ps.cfg, std::move(o.resp));
    else retry_or_fail(job, ps.cfg, o, retry_after_text);
  }

  void fail_active(const std::string& why, bool stopped) {
    for (auto* t : std::vector<Transfer*>(active.begin(), active.end())) {
      JobPtr job = t->job;
      --provs[job->prov]->in_flight;
      release_transfer(t, true);
      fail(job, why, stopped);
    }
    active.clear();
  }

  void fail_waiting(const std::string& why, bool stopped) {
    for (auto& [when, job] : delayed) fail(job, why, stopped);
    delayed.clear();
    for (auto& ps : provs) {
      for (auto& job : ps->ready) fail(job, why, stopped);
      ps->ready.clear();
    }
  }

  void fail_everything(const std::string& why) {
    fail_active(why, false);
    fail_waiting(why, false);
  }

  static std::string stop_message() {
    std::string d = stop_detail();
    return fmt::format("stopped ({}{}{}) before an answer came; --resume asks again", stop_reason_name(stop_reason()),
                       d.empty() ? "" : ": ", d);
  }

  // The run's stop request (util/stop.h): nothing new starts, waiting calls (queued, in a backoff or Retry-After
  // sleep) end now, transfers in flight get the grace, then are cut. Returns the time the loop must wake by.
  Clock::time_point observe_stop(Clock::time_point wake) {
    if (!stop_requested()) return wake;
    auto now = Clock::now();
    if (!stop_seen) {
      stop_seen = true;
      double left = std::max(0.0, stop_grace_s() - seconds_since_stop());
      stop_deadline = now + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(left));
      if (!active.empty())
        log(LogLevel::warn, fmt::format("stop requested: {} LLM call(s) in flight get {:.1f} s to finish",
                                        active.size(), left));
    }
    fail_waiting(stop_message(), true);
    if (stop_now_requested() || now >= stop_deadline) {
      if (!active.empty())
        log(LogLevel::warn, fmt::format("stop: cutting {} LLM call(s) still in flight", active.size()));
      fail_active(stop_message(), true);
      return wake;
    }
    return std::min(wake, stop_deadline);
  }

  void wake() {
    std::uint64_t one = 1;
    ssize_t r = ::write(evfd, &one, sizeof one);  // async-signal-safe; a full counter already wakes the loop
    (void)r;
  }

  static int socket_cb(CURL*, curl_socket_t fd, int what, void* userp, void*) {
    auto* self = static_cast<Impl*>(userp);
    if (what == CURL_POLL_REMOVE) {
      epoll_ctl(self->epfd, EPOLL_CTL_DEL, fd, nullptr);  // fails harmlessly where it was never added
      return 0;
    }
    epoll_event ev{};
    ev.events = ((what & CURL_POLL_IN) ? EPOLLIN : 0u) | ((what & CURL_POLL_OUT) ? EPOLLOUT : 0u);
    ev.data.fd = fd;
    if (epoll_ctl(self->epfd, EPOLL_CTL_MOD, fd, &ev) != 0) epoll_ctl(self->epfd, EPOLL_CTL_ADD, fd, &ev);
    return 0;
  }

  static int timer_cb(CURLM*, long timeout_ms, void* userp) {
    auto* self = static_cast<Impl*>(userp);
    self->timer_set = timeout_ms >= 0;
    if (self->timer_set) self->timer_at = Clock::now() + std::chrono::milliseconds(timeout_ms);
    return 0;
  }

  void run() {
    for (;;) {
      {
        std::lock_guard lk(mu);
        for (auto& j : incoming) provs[j->prov]->ready.push_back(std::move(j));
        incoming.clear();
        if (stopping) {
          fail_everything("LLM service shut down");
          return;
        }
      }
      if (cancel_flag.load()) fail_everything("cancelled");
      Clock::time_point stop_wake = observe_stop(Clock::time_point::max());
      auto now = Clock::now();
      while (!delayed.empty() && delayed.begin()->first <= now) {
        auto job = delayed.begin()->second;
        delayed.erase(delayed.begin());
        provs[job->prov]->ready.push_front(std::move(job));  // retries go first
      }
      Clock::time_point wake = std::min(now + std::chrono::seconds(1), stop_wake);
      if (!delayed.empty()) wake = std::min(wake, delayed.begin()->first);
      for (auto& psp : provs) {
        auto& ps = *psp;
        while (ps.in_flight < ps.cfg.max_in_flight && !ps.ready.empty()) {
          if (ps.cfg.requests_per_minute > 0) {
            if (now < ps.next_send) {
              wake = std::min(wake, ps.next_send);
              break;
            }
            ps.next_send = std::max(now, ps.next_send) + std::chrono::duration_cast<Clock::duration>(
                                                               std::chrono::duration<double>(60.0 / ps.cfg.requests_per_minute));
          }
          auto job = std::move(ps.ready.front());
          ps.ready.pop_front();
          start_transfer(job);
        }
      }
      int running = 0;
      if (timer_set && timer_at <= Clock::now()) {
        timer_set = false;
        curl_multi_socket_action(multi, CURL_SOCKET_TIMEOUT, 0, &running);
      }
      int left = 0;
      bool any_done = false;
      while (CURLMsg* m = curl_multi_info_read(multi, &left)) {
        if (m->msg == CURLMSG_DONE) {
          on_done(m);
          any_done = true;
        }
      }
      if (any_done) continue;  // start what the freed slots allow before sleeping
      if (timer_set) wake = std::min(wake, timer_at);
      auto until = std::chrono::duration_cast<std::chrono::microseconds>(wake - Clock::now()).count();
      long ms = until <= 0 ? 0 : static_cast<long>((until + 999) / 1000);
      epoll_event evs[64];
      int n = epoll_wait(epfd, evs, 64, static_cast<int>(ms));
      for (int i = 0; i < n; ++i) {
        if (evs[i].data.fd == evfd) {
          std::uint64_t v;
          ssize_t r = ::read(evfd, &v, sizeof v);
          (void)r;
          continue;
        }
        const auto e = evs[i].events;
        int mask = ((e & (EPOLLIN | EPOLLHUP)) ? CURL_CSELECT_IN : 0) | ((e & EPOLLOUT) ? CURL_CSELECT_OUT : 0) |
                   ((e & EPOLLERR) ? CURL_CSELECT_ERR : 0);
        curl_multi_socket_action(multi, evs[i].data.fd, mask, &running);
      }
    }
  }

  std::string key_for(const ProviderState& ps, const char* kind, const std::string& model, const std::string& body,
                      int replication) const {
    // The digest of dump(["evalgraph-llm-cache-v1", kind, base_url, model, body, replication]), written here in
    // one pass: the body (a request's JSON text, often kilobytes) escaped once, straight into the key's text,
    // not copied into a JSON array and escaped by dump. For valid UTF-8, rawjson::append_string escapes as dump
    // does; anything else goes through dump itself (its replacement rules).
    constexpr std::string_view kPrefix = "[\"evalgraph-llm-cache-v1\",";
    const std::string_view kind_v(kind);
    if (rawjson::invalid_utf8(body) != std::string::npos || rawjson::invalid_utf8(ps.cfg.base_url) != std::string::npos ||
        rawjson::invalid_utf8(model) != std::string::npos || rawjson::invalid_utf8(kind_v) != std::string::npos) {
      nlohmann::json k = nlohmann::json::array({"evalgraph-llm-cache-v1", kind, ps.cfg.base_url, model, body, replication});
      return sha256_hex(dump(k));
    }
    std::string k;
    k.reserve(kPrefix.size() + body.size() + body.size() / 4 + ps.cfg.base_url.size() + model.size() + 48);
    k += kPrefix;
    rawjson::append_string(k, kind_v);
    k += ',';
    rawjson::append_string(k, ps.cfg.base_url);
    k += ',';
    rawjson::append_string(k, model);
    k += ',';
    rawjson::append_string(k, body);
    k += ',';
    k += std::to_string(replication);
    k += ']';
    return sha256_hex(k);
  }

  // dump(request with "model": model), written without copying the request: its members in order with the
  // model among them (replacing one the request has), each value by evalgraph::dump_json (dump's text, faster).
  // Keys or strings that are not UTF-8 go through dump itself (its replacement rules).
  static std::string dry_text(const nlohmann::json& request, const std::string& model) {
    try {
      std::string t;
      t.push_back('{');
      bool placed = false, first = true;
      auto member = [&](const std::string& k, const std::string& v_text) {
        if (rawjson::invalid_utf8(k) != std::string::npos) throw std::invalid_argument("key");
        if (!first) t.push_back(',');
        first = false;
        rawjson::append_string(t, k);
        t.push_back(':');
        t += v_text;
      };
      const std::string model_text = evalgraph::dump_json(nlohmann::json(model));
      for (auto it = request.begin(); it != request.end(); ++it) {
        if (!placed && it.key() >= std::string_view("model")) {
          member("model", model_text);
          placed = true;
          if (it.key() == "model") continue;
        }
        member(it.key(), evalgraph::dump_json(it.value()));
      }
      if (!placed) member("model", model_text);
      t.push_back('}');
      return t;
    } catch (const std::exception&) {  // not UTF-8 somewhere: dump's replacements
      nlohmann::json b = request;
      b["model"] = model;
      return dump(b);
    }
  }

  // A call that fails before it is sent: counted, and its error (redacted) in `out`. Returns nullptr.
  JobPtr fail_unsent(ProviderState& ps, CallResult& out, std::string e) {
    out.error = redact(std::move(e));
    std::lock_guard lk(stats_mu);
    ++ps.stats.calls;
    ++ps.stats.errors;
    return nullptr;
  }

  // What is wrong with a request before anything is looked up or sent; "" when nothing is.
  static std::string request_problem(const ProviderConfig& cfg, bool embed, const nlohmann::json& request,
                                     const std::string& model) {
    if (model.empty()) return fmt::format("provider '{}' has no {} model", cfg.name, embed ? "embedding" : "chat");
    if (!request.is_object()) return fmt::format("provider '{}': request body must be a JSON object", cfg.name);
    if (embed) return "";
    if (!request.contains("messages") || !request["messages"].is_array())
      return fmt::format("provider '{}': chat request needs a 'messages' array", cfg.name);
    if (request.contains("stream") && request["stream"] == true)
      return fmt::format("provider '{}': streaming responses are not supported", cfg.name);
    return "";
  }

  // The cached answer under `key` into `out`; false on a miss (an entry that is not JSON within the limits is
  // one: a cache file is data too).
  bool answer_from_cache(ProviderState& ps, const std::string& key, bool embed, Clock::time_point t0, CallResult& out) {
    double fetched_latency = -1;
    auto hit = cache->get(key, &fetched_latency);
    if (!hit) return false;
    rawjson::CheckResult chk;
    rawjson::check(*hit, response_check(), chk, nullptr);
    // (a dry run parses it with rawjson::parse, equal to json::parse and faster: an estimate reads every answer)
    auto j = !chk.ok() ? nlohmann::json(nlohmann::json::value_t::discarded)
             : dry_run ? rawjson::parse(*hit)
                       : nlohmann::json::parse(*hit, nullptr, false);
    if (j.is_discarded()) return false;
    out.ok = true;
    out.response = std::move(j);
    out.cache_hit = true;
    out.http_status = 200;
    out.fetched_latency_s = fetched_latency;
    // what the answer cost when it was fetched (not counted for this run: a hit is free)
    if (!reported_usage(out.response, embed, out.usage)) out.usage = Usage{};
    out.latency_s = seconds_since(t0);
    std::lock_guard lk(stats_mu);
    ++ps.stats.calls;
    ++ps.stats.cache_hits;
    ps.stats.hit_prompt_tokens += out.usage.prompt_tokens;
    ps.stats.hit_completion_tokens += out.usage.completion_tokens;
    return true;
  }

  // The budget's gate for a priced provider: true when the call may go (`gated` when it holds a reserve);
  // false, with `refusal` the message, when the budget is reached (the run's stop, util/stop.h, with the budget
  // as its reason; this call, like every later one, is left for --resume).
  bool within_budget(std::size_t prov, const std::string& key, const nlohmann::json& body, bool embed,
                     const std::function<void()>* before_wait, CallResult& out, bool& gated, double& reserve,
                     std::string& refusal) {
    bool shared = false;  // an identical call in flight answers this one for free
    if (cache) {
      std::lock_guard lk(flight_mu);
      shared = in_flight.count(key) != 0;
    }
    std::string why;
    if (!shared && !gate.admit(prov, [&] { return estimated_cost(prov, body, embed); }, reserve, why, before_wait)) {
      out.stopped = true;
      out.budget_refused = !why.empty();
      refusal = why.empty() ? stop_message() : fmt::format("not sent: {}; --resume asks again", why);
      return false;
    }
    gated = !shared;
    return true;
  }

  // estimate: answered at once, empty, nothing sent; the prompt's tokens counted from `counted`.
  void answer_dry(bool embed, const nlohmann::json& counted, std::size_t n_inputs, CallResult& out) {
    out.ok = true;
    out.dry = true;
    out.http_status = 0;
    out.response = embed ? nlohmann::json{{"data", nlohmann::json::array()}}
                         : nlohmann::json{{"choices", {{{"index", 0}, {"message", {{"role", "assistant"}, {"content", kDryAnswer}}}}}}};
    if (embed) {
      for (std::size_t i = 0; i < n_inputs; ++i) out.response["data"].push_back({{"index", i}, {"embedding", {0.0}}});
    }
    auto tc = tokens();
    out.usage.prompt_tokens = embed ? tc->embedding_tokens(counted) : tc->chat_prompt_tokens(counted);
    out.usage.estimated = true;
  }

  // With the cache on, an identical call already in flight answers this one (single flight): it becomes a
  // follower of that call's job.
  void join_in_flight(ProviderState& ps, const JobPtr& job) {
    std::lock_guard lk(flight_mu);
    auto [leader, fresh] = in_flight.try_emplace(job->key, job);
    if (fresh) return;
    job->follower = true;  // submit() leaves it out; the leader's finish() answers it
    leader->second->followers.push_back(job);
    std::lock_guard sl(stats_mu);
    ++ps.stats.merged;
  }

  // Prepares a job; returns nullptr with `out` filled when the call is already answered (error or cache hit).
  JobPtr prepare(const std::string& provider, bool embed, const nlohmann::json& request, std::size_t n_inputs, int replication,
                 CallResult& out, const std::function<void()>* before_wait = nullptr) {
    auto t0 = Clock::now();
    out = CallResult{};
    auto it = index.find(provider);
    if (it == index.end()) {
      out.error = fmt::format("unknown LLM provider '{}'", provider);
      return nullptr;
    }
    auto& ps = *provs[it->second];
    if (cancel_flag.load()) return fail_unsent(ps, out, "cancelled");
    std::string model = embed ? (ps.cfg.embedding_model.empty() ? ps.cfg.model : ps.cfg.embedding_model) : ps.cfg.model;
    if (std::string problem = request_problem(ps.cfg, embed, request, model); !problem.empty())
      return fail_unsent(ps, out, std::move(problem));
    // (a dry run without a cache sends nothing and looks nothing up: no text, no key, and no copy of the
    // request to name the model in)
    const bool bare = dry_run && !cache;
    // A dry run with a cache needs the request with its model only as text (the key), unless the cache misses
    // (the prompt's tokens are counted from it): written without copying the request (dry_text).
    const bool lazy = dry_run && cache;
    nlohmann::json with_model;
    if (!bare && !lazy) {
      with_model = request;
      with_model["model"] = model;
    }
    const nlohmann::json& body = (bare || lazy) ? request : with_model;
    std::string text = bare ? std::string() : lazy ? dry_text(request, model) : dump(body);
    std::string key = bare ? std::string() : key_for(ps, embed ? "embeddings" : "chat", model, text, replication);
    if (cache && answer_from_cache(ps, key, embed, t0, out)) return nullptr;
    if (stop_requested()) {  // an answer from the cache is still given; nothing new goes out
      out.stopped = true;
      return fail_unsent(ps, out, stop_message());
    }
    bool gated = false;
    double reserve = 0;
    std::string refusal;
    if (gate.active() && ps.cfg.price.set && !dry_run &&
        !within_budget(it->second, key, body, embed, before_wait, out, gated, reserve, refusal))
      return fail_unsent(ps, out, std::move(refusal));
    {
      std::lock_guard lk(stats_mu);
      ++ps.stats.calls;
      if (cache) ++ps.stats.cache_misses;
    }
    if (dry_run) {
      if (lazy) {
        with_model = request;
        with_model["model"] = model;
      }
      answer_dry(embed, lazy ? with_model : body, n_inputs, out);
      return nullptr;
    }
    auto job = std::make_shared<Job>();
    job->gated = gated;
    job->reserve = reserve;
    job->prov = it->second;
    job->embed = embed;
    job->url = ps.cfg.base_url + (embed ? "/embeddings" : "/chat/completions");
    job->body = std::move(text);
    job->key = std::move(key);
    job->n_inputs = n_inputs;
    job->start = t0;
    if (cache) join_in_flight(ps, job);
    return job;
  }

  void submit(std::vector<JobPtr>& jobs) {
    jobs.erase(std::remove_if(jobs.begin(), jobs.end(), [](const JobPtr& j) { return j->follower; }), jobs.end());
    if (jobs.empty()) return;
    {
      std::lock_guard lk(mu);
      if (!stopping && !cancel_flag.load()) {
        for (auto& j : jobs) incoming.push_back(j);
        jobs.clear();
      }
    }
    if (jobs.empty()) {
      wake();
      return;
    }
    for (auto& j : jobs) fail(j, cancel_flag.load() ? "cancelled" : "LLM service shut down");
  }
};

std::string default_cache_path() {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg && *xdg) return std::string(xdg) + "/evalgraph/llm-cache.sqlite";
  const char* home = std::getenv("HOME");
  if (home && *home) return std::string(home) + "/.cache/evalgraph/llm-cache.sqlite";
  throw std::runtime_error("LLM cache: neither XDG_CACHE_HOME nor HOME is set; give a cache path or disable the cache");
}

LlmService::LlmService(std::vector<ProviderConfig> providers, CacheOptions cache_opts) : impl_(std::make_unique<Impl>()) {
  call_global_init();
  auto& im = *impl_;
  for (auto& p : providers) {
    if (p.name.empty()) throw std::invalid_argument("LLM provider with an empty name");
    if (im.index.count(p.name)) throw std::invalid_argument(fmt::format("duplicate LLM provider '{}'", p.name));
    if (p.max_in_flight < 1 || p.max_attempts < 1 || p.max_malformed_attempts < 1 || !(p.timeout_s > 0) ||
        !(p.connect_timeout_s > 0) || p.requests_per_minute < 0 || p.backoff_initial_s < 0 || p.backoff_max_s < 0)
      throw std::invalid_argument(fmt::format("LLM provider '{}': invalid limits", p.name));
    while (!p.base_url.empty() && p.base_url.back() == '/') p.base_url.pop_back();
    if (p.api_key.size() >= 4) im.secrets.push_back(p.api_key);
    for (const auto& [k, v] : p.headers) {
      auto lk = lower(k);
      if (v.size() >= 4 && (lk.find("key") != std::string::npos || lk.find("auth") != std::string::npos ||
                            lk.find("token") != std::string::npos || lk.find("secret") != std::string::npos))
        im.secrets.push_back(v);
    }
    im.index[p.name] = im.provs.size();
    auto ps = std::make_unique<ProviderState>();
    ps->cfg = std::move(p);
    im.provs.push_back(std::move(ps));
  }
  // Longest first so that a key containing another key is redacted whole.
  std::sort(im.secrets.begin(), im.secrets.end(), [](const auto& a, const auto& b) { return a.size() > b.size(); });
  im.token_counter = TokenCounter::from_environment();
  im.dry_run = cache_opts.dry_run;
  if (cache_opts.enabled) 
    im.cache = std::make_unique<ResponseCache>(cache_opts.path.empty() ? default_cache_path() : cache_opts.path,
                                               /*snapshot=*/cache_opts.dry_run);
  im.multi = curl_multi_init();
  if (!im.multi) throw std::runtime_error("curl_multi_init failed");
  im.epfd = epoll_create1(EPOLL_CLOEXEC);
  im.evfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (im.epfd < 0 || im.evfd < 0) {
    if (im.epfd >= 0) ::close(im.epfd);
    if (im.evfd >= 0) ::close(im.evfd);
    curl_multi_cleanup(im.multi);
    throw std::runtime_error("epoll_create1 or eventfd failed");
  }
  {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = im.evfd;
    epoll_ctl(im.epfd, EPOLL_CTL_ADD, im.evfd, &ev);
  }
  curl_multi_setopt(im.multi, CURLMOPT_SOCKETFUNCTION, &Impl::socket_cb);
  curl_multi_setopt(im.multi, CURLMOPT_SOCKETDATA, &im);
  curl_multi_setopt(im.multi, CURLMOPT_TIMERFUNCTION, &Impl::timer_cb);
  curl_multi_setopt(im.multi, CURLMOPT_TIMERDATA, &im);
  long total = 0;
  for (auto& ps : im.provs) total += ps->cfg.max_in_flight;
  curl_multi_setopt(im.multi, CURLMOPT_MAXCONNECTS, std::max(16L, total + 8));
  im.stop_slot = register_stop_wake_fd(im.evfd);
  im.loop_thread = named_thread("eg-llm-io", [this] { impl_->run(); });
}

LlmService::~LlmService() {
  auto& im = *impl_;
  {
    std::lock_guard lk(im.mu);
    im.stopping = true;
  }
  im.wake();
  if (im.loop_thread.joinable()) im.loop_thread.join();
  unregister_stop_wake_fd(im.stop_slot);
  for (auto* e : im.easy_pool) curl_easy_cleanup(e);
  curl_multi_cleanup(im.multi);
  ::close(im.epfd);
  ::close(im.evfd);
  im.cache.reset();  // flushes queued writes
}

bool LlmService::has_provider(const std::string& name) const { return impl_->index.count(name) != 0; }

const ProviderConfig* LlmService::provider(const std::string& name) const {
  auto it = impl_->index.find(name);
  return it == impl_->index.end() ? nullptr : &impl_->provs[it->second]->cfg;
}

std::vector<std::string> LlmService::provider_names() const {
  std::vector<std::string> out;
  for (auto& ps : impl_->provs) out.push_back(ps->cfg.name);
  return out;
}

CallResult LlmService::chat(const std::string& provider, const nlohmann::json& body, int replication) {
  CallResult r;
  auto job = impl_->prepare(provider, false, body, 0, replication, r);
  if (!job) return r;
  auto fut = job->promise.get_future();
  std::vector<JobPtr> v{job};
  impl_->submit(v);
  return fut.get();
}

std::vector<CallResult> LlmService::chat_batch(const std::string& provider, const std::vector<nlohmann::json>& bodies,
                                               int replication) {
  std::vector<CallResult> out(bodies.size());
  std::vector<JobPtr> jobs;
  std::vector<std::pair<std::size_t, std::future<CallResult>>> futs;
  // (a call that waits for the budget first lets the calls admitted before it go)
  const std::function<void()> submit_admitted = [&] { impl_->submit(jobs); };
  for (std::size_t i = 0; i < bodies.size(); ++i) {
    auto job = impl_->prepare(provider, false, bodies[i], 0, replication, out[i], &submit_admitted);
    if (!job) continue;
    futs.emplace_back(i, job->promise.get_future());
    jobs.push_back(std::move(job));
  }
  impl_->submit(jobs);
  for (auto& [i, f] : futs) out[i] = f.get();
  return out;
}

CallResult LlmService::embed(const std::string& provider, const std::vector<std::string>& texts, int replication) {
  CallResult r;
  if (texts.empty()) {
    auto* p = this->provider(provider);
    if (!p) {
      r.error = fmt::format("unknown LLM provider '{}'", provider);
      return r;
    }
    r.ok = true;
    r.response = {{"data", nlohmann::json::array()},
                  {"model", p->embedding_model.empty() ? p->model : p->embedding_model}};
    return r;
  }
  nlohmann::json body = {{"input", texts}};
  auto job = impl_->prepare(provider, true, std::move(body), texts.size(), replication, r);
  if (!job) return r;
  auto fut = job->promise.get_future();
  std::vector<JobPtr> v{job};
  impl_->submit(v);
  return fut.get();
}

void LlmService::set_budget(double max_cost_usd, double spent_before_usd,
                            std::function<void(const std::string&)> on_reached) {
  impl_->gate.set(max_cost_usd, spent_before_usd, impl_->provs.size(), std::move(on_reached));
}

nlohmann::json LlmService::budget_json() const { return impl_->gate.to_json(); }

void LlmService::cancel() {
  impl_->cancel_flag.store(true);
  impl_->wake();
}

bool LlmService::cancelled() const { return impl_->cancel_flag.load(); }

nlohmann::json LlmService::stats_json() const {
  nlohmann::json out = nlohmann::json::object();
  std::lock_guard lk(impl_->stats_mu);
  for (auto& ps : impl_->provs) {
    const auto& s = ps->stats;
    out[ps->cfg.name] = {{"calls", s.calls},
                         {"cache_hits", s.cache_hits},
                         {"cache_misses", s.cache_misses},
                         {"merged", s.merged},
                         {"http_requests", s.http_requests},
                         {"retries", s.retries},
                         {"errors", s.errors},
                         {"malformed_responses", s.malformed},
                         {"prompt_tokens", s.prompt_tokens},
                         {"completion_tokens", s.completion_tokens},
                         {"latency_total_s", s.latency_total_s},
                         {"latency_mean_s", s.timed_calls ? s.latency_total_s / double(s.timed_calls) : 0.0},
                         {"billed_calls", s.billed_calls},
                         {"cached_prompt_tokens", s.cached_prompt_tokens},
                         {"usage_estimated_calls", s.usage_estimated_calls},
                         {"estimated_prompt_tokens", s.estimated_prompt_tokens},
                         {"estimated_completion_tokens", s.estimated_completion_tokens},
                         {"cache_hit_prompt_tokens", s.hit_prompt_tokens},
                         {"cache_hit_completion_tokens", s.hit_completion_tokens},
                         {"cost_usd", s.cost.total()}};
  }
  return out;
}

std::string LlmService::redact(std::string s) const { return impl_->redact(std::move(s)); }

void LlmService::set_logger(LogFn fn) {
  std::lock_guard lk(impl_->log_mu);
  impl_->logger = std::move(fn);
}

std::string LlmService::cache_key(const std::string& provider, const std::string& kind, const nlohmann::json& body,
                                  int replication) const {
  auto it = impl_->index.find(provider);
  if (it == impl_->index.end()) throw std::invalid_argument(fmt::format("unknown LLM provider '{}'", provider));
  auto& ps = *impl_->provs[it->second];
  bool embed = kind == "embeddings";
  std::string model = embed ? (ps.cfg.embedding_model.empty() ? ps.cfg.model : ps.cfg.embedding_model) : ps.cfg.model;
  nlohmann::json b = body;
  b["model"] = model;
  return impl_->key_for(ps, embed ? "embeddings" : "chat", model, dump(b), replication);
}

void LlmService::set_token_counter(std::shared_ptr<const TokenCounter> tc) {
  std::lock_guard lk(impl_->token_mu);
  impl_->token_counter = tc ? std::move(tc) : TokenCounter::approximate();
}

std::shared_ptr<const TokenCounter> LlmService::token_counter() const { return impl_->tokens(); }

nlohmann::json LlmService::cache_observed(const std::string& provider) const {
  const auto* p = this->provider(provider);
  if (!impl_->cache || p == nullptr) return {{"answers", 0}, {"mean_completion_tokens", nullptr}, {"mean_latency_s", nullptr}};
  auto o = impl_->cache->observed(p->name, p->model);
  return {{"answers", o.answers},
          {"mean_completion_tokens", o.mean_completion_tokens >= 0 ? nlohmann::json(o.mean_completion_tokens) : nlohmann::json()},
          {"mean_latency_s", o.mean_latency_s >= 0 ? nlohmann::json(o.mean_latency_s) : nlohmann::json()}};
}

std::string LlmService::cache_path() const { return impl_->cache ? impl_->cache->path() : std::string(); }

}  // namespace evalgraph::llm
