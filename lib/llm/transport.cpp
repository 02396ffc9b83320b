// LlmService's transport (llm_service_impl.h): HTTP over libcurl. One event-loop thread owns the multi handle,
// the transfers, the per-provider ready queues, the delayed (backoff) queue and the rate limiters; it waits in
// epoll on the sockets libcurl names and is woken through an eventfd.
#include <curl/curl.h>
#include <string.h>  // explicit_bzero
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "llm/llm_service_impl.h"
#include "util/named_thread.h"
#include "util/stop.h"

namespace evalgraph::llm {

using namespace detail;  // the pieces LlmService's files share (llm_service_impl.h)

namespace detail {

void call_global_init() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

}  // namespace detail

namespace {

// Whether an easy handle may serve another transfer. libcurl before 8.1.0 keeps a pointer to the previous
// transfer's last header in the handle, and a response that starts with a folded header line (" x" right after
// the status line) then reads and frees freed memory (curl issue #11101, fixed by curl PR #11103; Debian 12 has
// 7.88.1). Found by tests/fuzz/fuzz_llm_response. There, each handle serves one transfer; connections are
// still reused (they live in the multi handle).
bool reuse_easy_handles() {
  static const bool ok = curl_version_info(CURLVERSION_NOW)->version_num >= 0x080100;
  return ok;
}

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
    t->limits = RateLimitHeaders{};
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
  else if (name[0] == 'x' || name[0] == 'a')  // x-ratelimit-*, anthropic-ratelimit-*
    read_rate_limit_header(name, value, name[0] == 'a' ? std::time(nullptr) : 0, t->limits);
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

}  // namespace

// The multi handle, epoll and the eventfd, then the loop thread (LlmService's constructor, once the providers
// and the cache are in place).
void LlmService::Impl::start_loop() {
  multi = curl_multi_init();
  if (!multi) throw std::runtime_error("curl_multi_init failed");
  epfd = epoll_create1(EPOLL_CLOEXEC);
  evfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (epfd < 0 || evfd < 0) {
    if (epfd >= 0) ::close(epfd);
    if (evfd >= 0) ::close(evfd);
    curl_multi_cleanup(multi);
    throw std::runtime_error("epoll_create1 or eventfd failed");
  }
  {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = evfd;
    epoll_ctl(epfd, EPOLL_CTL_ADD, evfd, &ev);
  }
  curl_multi_setopt(multi, CURLMOPT_SOCKETFUNCTION, &Impl::socket_cb);
  curl_multi_setopt(multi, CURLMOPT_SOCKETDATA, this);
  curl_multi_setopt(multi, CURLMOPT_TIMERFUNCTION, &Impl::timer_cb);
  curl_multi_setopt(multi, CURLMOPT_TIMERDATA, this);
  long total = 0;
  for (auto& ps : provs) total += ps->cfg.max_in_flight;
  curl_multi_setopt(multi, CURLMOPT_MAXCONNECTS, std::max(16L, total + 8));
  stop_slot = register_stop_wake_fd(evfd);
  loop_thread = named_thread("eg-llm-io", [this] { run(); });
}

// Ends the loop (pending calls end with "LLM service shut down") and frees what it held.
void LlmService::Impl::stop_loop() {
  {
    std::lock_guard lk(mu);
    stopping = true;
  }
  wake();
  if (loop_thread.joinable()) loop_thread.join();
  unregister_stop_wake_fd(stop_slot);
  for (auto* e : easy_pool) curl_easy_cleanup(e);
  curl_multi_cleanup(multi);
  ::close(epfd);
  ::close(evfd);
}

void LlmService::Impl::start_transfer(const JobPtr& job) {
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
  t->ticket = ps.rate->on_send(Clock::now(), job->tokens);  // (the loop holds ps.rate_mu)
  CURLMcode mc = curl_multi_add_handle(multi, e);
  if (mc != CURLM_OK) {
    active.erase(t);
    --ps.in_flight;
    release_transfer(t, false);
    fail(job, fmt::format("provider '{}': cannot start request: {}", cfg.name, curl_multi_strerror(mc)));
  }
}

void LlmService::Impl::release_transfer(Transfer* t, bool in_multi) {
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

// A transfer has ended: read what it came to, give its slot back, then answer, retry or fail the call.
void LlmService::Impl::on_done(CURLMsg* cmsg) {
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
  {
    using Answer = RateController::Answer;
    const Answer a = ok ? Answer::ok
                     : code != CURLE_OK ? Answer::failed
                     : status == 429 ? Answer::refused
                     : status == 503 || status == 529 ? Answer::overloaded
                                                      : Answer::failed;
    const auto now = Clock::now();
    std::lock_guard rl(ps.rate_mu);
    ps.rate->on_answer(now, t->ticket, a, seconds_since(t->ticket.sent), t->limits);
    if (!ps.count_tokens.load(std::memory_order_relaxed) && ps.rate->counts_tokens()) ps.count_tokens.store(true);
  }
  release_transfer(t, true);
  if (ok && !job->embed) check_model(ps, o.resp);
  if (ok) answer(job, ps.cfg, std::move(o.resp));
  else retry_or_fail(job, ps.cfg, o, retry_after_text);
}

void LlmService::Impl::fail_active(const std::string& why, bool stopped) {
  for (auto* t : std::vector<Transfer*>(active.begin(), active.end())) {
    JobPtr job = t->job;
    --provs[job->prov]->in_flight;
    release_transfer(t, true);
    fail(job, why, stopped);
  }
  active.clear();
}

void LlmService::Impl::fail_waiting(const std::string& why, bool stopped) {
  for (auto& [when, job] : delayed) fail(job, why, stopped);
  delayed.clear();
  for (auto& ps : provs) {
    for (auto& job : ps->ready) fail(job, why, stopped);
    ps->ready.clear();
  }
}

void LlmService::Impl::fail_everything(const std::string& why) {
  fail_active(why, false);
  fail_waiting(why, false);
}

// The run's stop request (util/stop.h): nothing new starts, waiting calls (queued, in a backoff or Retry-After
// sleep) end now, transfers in flight get the grace, then are cut. Returns the time the loop must wake by.
Clock::time_point LlmService::Impl::observe_stop(Clock::time_point wake) {
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

void LlmService::Impl::wake() {
  std::uint64_t one = 1;
  ssize_t r = ::write(evfd, &one, sizeof one);  // async-signal-safe; a full counter already wakes the loop
  (void)r;
}

int LlmService::Impl::socket_cb(CURL*, curl_socket_t fd, int what, void* userp, void*) {
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

int LlmService::Impl::timer_cb(CURLM*, long timeout_ms, void* userp) {
  auto* self = static_cast<Impl*>(userp);
  self->timer_set = timeout_ms >= 0;
  if (self->timer_set) self->timer_at = Clock::now() + std::chrono::milliseconds(timeout_ms);
  return 0;
}

// Starts the provider's waiting calls while its controller lets them go (window, buckets; rate_controller.h);
// `wake`: when a bucket will have room for the next.
void LlmService::Impl::dispatch(ProviderState& ps, Clock::time_point now, Clock::time_point& wake) {
  std::lock_guard rl(ps.rate_mu);
  while (!ps.ready.empty()) {
    Clock::time_point at;
    if (!ps.rate->may_send(now, ps.in_flight, ps.ready.front()->tokens, at)) {
      wake = std::min(wake, at);
      break;
    }
    auto job = std::move(ps.ready.front());
    ps.ready.pop_front();
    start_transfer(job);
  }
  ps.rate->observe(now, ps.in_flight, ps.ready.size());
}

void LlmService::Impl::run() {
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
    for (auto& psp : provs) dispatch(*psp, now, wake);
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

}  // namespace evalgraph::llm
