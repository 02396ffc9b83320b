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
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

#include "llm/response_cache.h"
#include "llm/sha256.h"
#include "util/named_thread.h"
#include "util/raw_json.h"

namespace evalgraph::llm {
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::size_t kMaxResponseBytes = std::size_t(512) << 20;
constexpr std::size_t kSnippetBytes = 200;

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
};
using JobPtr = std::shared_ptr<Job>;

struct Transfer {
  JobPtr job;
  CURL* easy = nullptr;
  curl_slist* headers = nullptr;
  std::string body, content_type, retry_after, retry_after_ms;
  bool too_large = false;
  char errbuf[CURL_ERROR_SIZE] = {0};
};

struct Stats {
  std::uint64_t calls = 0, cache_hits = 0, cache_misses = 0, merged = 0, http_requests = 0, retries = 0, errors = 0,
                malformed = 0, prompt_tokens = 0, completion_tokens = 0, timed_calls = 0;
  double latency_total_s = 0;
};

struct ProviderState {
  ProviderConfig cfg;
  std::deque<JobPtr> ready;  // loop thread only
  int in_flight = 0;         // loop thread only
  Clock::time_point next_send{};
  Stats stats;  // guarded by Impl::stats_mu
};

size_t write_cb(char* ptr, size_t size, size_t nmemb, void* ud) {
  auto* t = static_cast<Transfer*>(ud);
  size_t n = size * nmemb;
  if (t->body.size() + n > kMaxResponseBytes) {
    t->too_large = true;
    return 0;
  }
  t->body.append(ptr, n);
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

std::string dump(const nlohmann::json& j) { return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace); }

}  // namespace

struct LlmService::Impl {
  std::vector<std::unique_ptr<ProviderState>> provs;
  std::unordered_map<std::string, std::size_t> index;
  std::vector<std::string> secrets;
  std::unique_ptr<ResponseCache> cache;

  mutable std::mutex stats_mu;
  mutable std::mutex log_mu;
  std::mutex flight_mu;                                              // guards in_flight and Job::followers
  std::unordered_map<std::string, std::shared_ptr<Job>> in_flight;  // cache key → the call that sends it
  LogFn logger;

  std::mutex mu;  // guards incoming, stopping
  std::vector<JobPtr> incoming;
  bool stopping = false;
  std::atomic<bool> cancel_flag{false};

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

  // ---- completion helpers (loop thread) ----
  void finish(const JobPtr& job, CallResult r) {
    auto& ps = *provs[job->prov];
    r.latency_s = seconds_since(job->start);
    r.attempts = job->attempts;
    r.http_status = job->last_status;
    if (!r.ok) r.error = redact(std::move(r.error));
    {
      std::lock_guard lk(stats_mu);
      if (!r.ok) ++ps.stats.errors;
      ++ps.stats.timed_calls;
      ps.stats.latency_total_s += r.latency_s;
      if (r.ok && r.response.contains("usage") && r.response["usage"].is_object()) {
        const auto& u = r.response["usage"];
        if (u.contains("prompt_tokens") && u["prompt_tokens"].is_number_unsigned())
          ps.stats.prompt_tokens += u["prompt_tokens"].get<std::uint64_t>();
        if (u.contains("completion_tokens") && u["completion_tokens"].is_number_unsigned())
          ps.stats.completion_tokens += u["completion_tokens"].get<std::uint64_t>();
      }
    }
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
      copy.latency_s = seconds_since(f->start);
      f->promise.set_value(std::move(copy));
    }
    job->promise.set_value(std::move(r));
  }

  void fail(const JobPtr& job, std::string error) {
    CallResult r;
    r.ok = false;
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

  void on_done(CURLMsg* cmsg) {
    Transfer* t = nullptr;
    curl_easy_getinfo(cmsg->easy_handle, CURLINFO_PRIVATE, reinterpret_cast<char**>(&t));
    CURLcode code = cmsg->data.result;
    long status = 0;
    curl_easy_getinfo(t->easy, CURLINFO_RESPONSE_CODE, &status);
    JobPtr job = t->job;
    auto& ps = *provs[job->prov];
    const auto& cfg = ps.cfg;
    --ps.in_flight;
    active.erase(t);
    job->last_status = static_cast<int>(status);

    bool retryable = false;
    double retry_after = -1;
    std::string err;
    bool malformed = false;
    nlohmann::json resp;
    if (code != CURLE_OK) {
      if (t->too_large) {
        err = fmt::format("response larger than {} MiB", kMaxResponseBytes >> 20);
      } else if (code == CURLE_OPERATION_TIMEDOUT) {
        err = fmt::format("timeout after {} s ({})", cfg.timeout_s, t->errbuf[0] ? t->errbuf : curl_easy_strerror(code));
        retryable = true;
      } else {
        err = fmt::format("{} ({})", curl_easy_strerror(code), t->errbuf[0] ? t->errbuf : "no details");
        retryable = retryable_curl(code);
      }
    } else if (status >= 200 && status < 300) {
      bool valid = false;
      try {
        valid = validate(*job, *t, resp, err);
      } catch (const std::exception&) {  // (a library's words would say little here)
        err = fmt::format("cannot read the response: a field has an unexpected type; body starts: '{}'",
                          snippet(t->body));
      }
      if (!valid) {
        malformed = true;
        ++job->malformed;
        retryable = job->malformed < cfg.max_malformed_attempts;
        err = fmt::format("malformed response (HTTP {}): {}", status, err);
        std::lock_guard lk(stats_mu);
        ++ps.stats.malformed;
      }
    } else {
      err = fmt::format("HTTP {}: {}", status, server_message(t->body));
      retryable = retryable_status(status);
      retry_after = parse_retry_after(t->retry_after);
      double ms = parse_retry_after(t->retry_after_ms);
      if (ms >= 0) retry_after = std::max(retry_after, ms / 1000.0);
    }
    std::string resp_text_for_cache;
    bool ok = code == CURLE_OK && status >= 200 && status < 300 && !malformed;
    release_transfer(t, true);

    if (ok) {
      if (cache) {
        std::string txt = dump(resp);
        if (txt.size() < (std::size_t(64) << 20))
          cache->put(job->key, job->embed ? "embeddings" : "chat", cfg.name,
                     job->embed ? (cfg.embedding_model.empty() ? cfg.model : cfg.embedding_model) : cfg.model,
                     redact(std::move(txt)));
      }
      CallResult r;
      r.ok = true;
      r.response = std::move(resp);
      finish(job, std::move(r));
      return;
    }
    if (cancel_flag.load()) {
      fail(job, "cancelled");
      return;
    }
    if (retryable && job->attempts < cfg.max_attempts) {
      int retry_no = job->attempts;  // 1 for the first retry
      double cap = std::min(cfg.backoff_max_s, cfg.backoff_initial_s * std::pow(2.0, retry_no - 1));
      double delay = std::uniform_real_distribution<double>(0.0, std::max(cap, 0.0))(rng);
      if (retry_after >= 0) delay = std::max(delay, std::min(retry_after, cfg.retry_after_max_s));
      log(LogLevel::warn, fmt::format("provider '{}': attempt {}/{} failed: {}; retrying in {:.3f} s", cfg.name,
                                      job->attempts, cfg.max_attempts, err, delay));
      auto when = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(delay));
      delayed.emplace(when, job);
      return;
    }
    std::string msg;
    if (retryable)
      msg = fmt::format("provider '{}': gave up after {} attempts: {}", cfg.name, job->attempts, err);
    else if (malformed && job->attempts > 1)
      msg = fmt::format("provider '{}': gave up after {} attempts ({} malformed): {}", cfg.name, job->attempts,
                        job->malformed, err);
    else
      msg = fmt::format("provider '{}': {}", cfg.name, err);
    log(LogLevel::error, msg);
    fail(job, std::move(msg));
  }

  void fail_everything(const std::string& why) {
    for (auto* t : std::vector<Transfer*>(active.begin(), active.end())) {
      JobPtr job = t->job;
      --provs[job->prov]->in_flight;
      release_transfer(t, true);
      fail(job, why);
    }
    active.clear();
    for (auto& [when, job] : delayed) fail(job, why);
    delayed.clear();
    for (auto& ps : provs) {
      for (auto& job : ps->ready) fail(job, why);
      ps->ready.clear();
    }
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
      auto now = Clock::now();
      while (!delayed.empty() && delayed.begin()->first <= now) {
        auto job = delayed.begin()->second;
        delayed.erase(delayed.begin());
        provs[job->prov]->ready.push_front(std::move(job));  // retries go first
      }
      Clock::time_point wake = now + std::chrono::seconds(1);
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
    nlohmann::json k = nlohmann::json::array({"evalgraph-llm-cache-v1", kind, ps.cfg.base_url, model, body, replication});
    return sha256_hex(dump(k));
  }

  // Prepares a job; returns nullptr with `out` filled when the call is already answered (error or cache hit).
  JobPtr prepare(const std::string& provider, bool embed, nlohmann::json body, std::size_t n_inputs, int replication,
                 CallResult& out) {
    auto t0 = Clock::now();
    out = CallResult{};
    auto it = index.find(provider);
    if (it == index.end()) {
      out.error = fmt::format("unknown LLM provider '{}'", provider);
      return nullptr;
    }
    auto& ps = *provs[it->second];
    auto fail_now = [&](std::string e) -> JobPtr {
      out.error = redact(std::move(e));
      std::lock_guard lk(stats_mu);
      ++ps.stats.calls;
      ++ps.stats.errors;
      return nullptr;
    };
    if (cancel_flag.load()) return fail_now("cancelled");
    std::string model = embed ? (ps.cfg.embedding_model.empty() ? ps.cfg.model : ps.cfg.embedding_model) : ps.cfg.model;
    if (model.empty())
      return fail_now(fmt::format("provider '{}' has no {} model", ps.cfg.name, embed ? "embedding" : "chat"));
    if (!body.is_object()) return fail_now(fmt::format("provider '{}': request body must be a JSON object", ps.cfg.name));
    if (!embed) {
      if (!body.contains("messages") || !body["messages"].is_array())
        return fail_now(fmt::format("provider '{}': chat request needs a 'messages' array", ps.cfg.name));
      if (body.contains("stream") && body["stream"] == true)
        return fail_now(fmt::format("provider '{}': streaming responses are not supported", ps.cfg.name));
    }
    body["model"] = model;
    std::string text = dump(body);
    std::string key = key_for(ps, embed ? "embeddings" : "chat", model, text, replication);
    if (cache) {
      if (auto hit = cache->get(key)) {
        // (a cache file is data too: an entry that is not JSON within the limits is a miss)
        rawjson::CheckResult chk;
        rawjson::check(*hit, response_check(), chk, nullptr);
        auto j = chk.ok() ? nlohmann::json::parse(*hit, nullptr, false) : nlohmann::json(nlohmann::json::value_t::discarded);
        if (!j.is_discarded()) {
          out.ok = true;
          out.response = std::move(j);
          out.cache_hit = true;
          out.http_status = 200;
          out.latency_s = seconds_since(t0);
          std::lock_guard lk(stats_mu);
          ++ps.stats.calls;
          ++ps.stats.cache_hits;
          return nullptr;
        }
      }
    }
    {
      std::lock_guard lk(stats_mu);
      ++ps.stats.calls;
      if (cache) ++ps.stats.cache_misses;
    }
    auto job = std::make_shared<Job>();
    job->prov = it->second;
    job->embed = embed;
    job->url = ps.cfg.base_url + (embed ? "/embeddings" : "/chat/completions");
    job->body = std::move(text);
    job->key = std::move(key);
    job->n_inputs = n_inputs;
    job->start = t0;
    if (cache) {
      std::lock_guard lk(flight_mu);
      auto [leader, fresh] = in_flight.try_emplace(job->key, job);
      if (!fresh) {
        job->follower = true;  // submit() leaves it out; the leader's finish() answers it
        leader->second->followers.push_back(job);
        std::lock_guard sl(stats_mu);
        ++ps.stats.merged;
      }
    }
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
  if (cache_opts.enabled) im.cache = std::make_unique<ResponseCache>(cache_opts.path.empty() ? default_cache_path() : cache_opts.path);
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
  for (std::size_t i = 0; i < bodies.size(); ++i) {
    auto job = impl_->prepare(provider, false, bodies[i], 0, replication, out[i]);
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
                         {"latency_mean_s", s.timed_calls ? s.latency_total_s / double(s.timed_calls) : 0.0}};
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

std::string LlmService::cache_path() const { return impl_->cache ? impl_->cache->path() : std::string(); }

}  // namespace evalgraph::llm
