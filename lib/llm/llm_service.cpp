// LlmService: see llm_service.h and README.md in this folder.
//
// Threading: callers (any number of threads) prepare a request, look it up in the cache and, on a miss,
// hand a Job to the event-loop thread and block on a std::future. The event-loop thread alone owns the
// libcurl multi handle, the per-provider ready queues, the delayed (backoff) queue and the rate limiters;
// it waits in epoll on the sockets libcurl names and is woken through an eventfd. Successful answers are
// queued to the cache's writer thread.
//
// The files: this one is the front door (providers, cache look-up, merging, dry run, budget, completion, the public
// methods); transport.cpp, retry.cpp and answer_validation.cpp the rest, sharing llm_service_impl.h.
#include "llm/llm_service.h"

#include <algorithm>
#include <cstdlib>
#include <future>
#include <stdexcept>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "llm/llm_service_impl.h"
#include "llm/tokens.h"
#include "util/sha256.h"
#include <evalgraph/json_writer.hpp>

#include "util/json_build.h"
#include "util/raw_json.h"
#include "util/stop.h"

namespace evalgraph::llm {

using namespace detail;  // the pieces LlmService's files share (llm_service_impl.h)

namespace {

// What a dry run (estimate) answers a call the cache does not hold: one short token, not empty, so that a node
// that refuses an empty answer still hands it on and the nodes after it build (and count) their requests.
constexpr const char* kDryAnswer = "-";

}  // namespace

// What a call to provider i costs by its tokens (its reserve before the provider's first billed answer).
double LlmService::Impl::estimated_cost(std::size_t i, const nlohmann::json& body, bool embed) const {
  auto tc = tokens();
  Usage u;
  u.prompt_tokens = embed ? tc->embedding_tokens(body) : tc->chat_prompt_tokens(body);
  u.completion_tokens = u.prompt_tokens;
  for (const char* k : {"max_tokens", "max_completion_tokens"})
    if (auto it = body.find(k); it != body.end() && it->is_number_unsigned()) u.completion_tokens = it->get<std::uint64_t>();
  if (embed) u.completion_tokens = 0;
  return cost_of(provs[i]->cfg.price, u).total();
}

// A call's tokens for the token buckets (rate_controller.h): its prompt counted as `estimate` counts it, plus its
// max_tokens; while no token bucket is in force, its text's bytes / 4 (nothing counted: the common case costs no CPU).
double LlmService::Impl::call_tokens(const ProviderState& ps, const nlohmann::json& body, bool embed,
                                     std::size_t text_bytes) const {
  double out = 0;
  if (!embed)
    for (const char* k : {"max_tokens", "max_completion_tokens"})
      if (auto it = body.find(k); it != body.end() && it->is_number() && it->get<double>() > 0) out = it->get<double>();
  if (!ps.count_tokens.load(std::memory_order_relaxed)) return out + static_cast<double>(text_bytes) / 4;
  auto tc = tokens();
  return out + static_cast<double>(embed ? tc->embedding_tokens(body) : tc->chat_prompt_tokens(body));
}

void LlmService::Impl::release(const Job& job, const CallResult& r) {
  if (job.gated) gate.release(job.prov, job.reserve, r.ok && !r.merged, r.cost.total());
}

std::string LlmService::Impl::redact(std::string s) const {
  for (const auto& k : secrets) {
    std::size_t pos = 0;
    while ((pos = s.find(k, pos)) != std::string::npos) {
      s.replace(pos, k.size(), "***");
      pos += 3;
    }
  }
  return s;
}

void LlmService::Impl::log(LogLevel lvl, const std::string& msg) {
  std::lock_guard lk(log_mu);
  if (logger) logger(lvl, redact(msg));
}

std::shared_ptr<const TokenCounter> LlmService::Impl::tokens() const {
  std::lock_guard lk(token_mu);
  return token_counter;
}

// ---- completion helpers (loop thread) ----
void LlmService::Impl::finish(const JobPtr& job, CallResult r) {
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

void LlmService::Impl::fail(const JobPtr& job, std::string error, bool stopped) {
  CallResult r;
  r.ok = false;
  r.stopped = stopped;
  r.error = std::move(error);
  finish(job, std::move(r));
}

// A good answer: into the cache (when there is one and it is below 64 MiB), then to the caller.
void LlmService::Impl::answer(const JobPtr& job, const ProviderConfig& cfg, nlohmann::json resp) {
  if (cache) {
    std::string txt = dump(resp);
    if (txt.size() < (std::size_t(64) << 20)) {
      const std::string model = job->embed ? (cfg.embedding_model.empty() ? cfg.model : cfg.embedding_model) : cfg.model;
      txt = redact(std::move(txt));
      if (call_log) call_log->put(job->key, job->embed ? "embeddings" : "chat", cfg.name, model, txt, seconds_since(job->start));
      cache->put(job->key, job->embed ? "embeddings" : "chat", cfg.name, model, std::move(txt), seconds_since(job->start));
    }
  }
  CallResult r;
  r.ok = true;
  r.response = std::move(resp);
  finish(job, std::move(r));
}

std::string LlmService::Impl::stop_message() {
  std::string d = stop_detail();
  return fmt::format("stopped ({}{}{}) before an answer came; --resume asks again", stop_reason_name(stop_reason()),
                     d.empty() ? "" : ": ", d);
}

std::string LlmService::Impl::key_for(const ProviderState& ps, const char* kind, const std::string& model,
                                      const std::string& body, int replication) const {
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
std::string LlmService::Impl::dry_text(const nlohmann::json& request, const std::string& model) {
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
JobPtr LlmService::Impl::fail_unsent(ProviderState& ps, CallResult& out, std::string e) {
  out.error = redact(std::move(e));
  std::lock_guard lk(stats_mu);
  ++ps.stats.calls;
  ++ps.stats.errors;
  return nullptr;
}

// What is wrong with a request before anything is looked up or sent; "" when nothing is.
std::string LlmService::Impl::request_problem(const ProviderConfig& cfg, bool embed, const nlohmann::json& request,
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
bool LlmService::Impl::answer_from_cache(ProviderState& ps, const std::string& key, bool embed, Clock::time_point t0,
                                         CallResult& out) {
  double fetched_latency = -1;
  auto hit = cache->get(key, &fetched_latency);
  if (!hit && call_log) hit = call_log->get(key, &fetched_latency);  // answered in an earlier session of the run
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
bool LlmService::Impl::within_budget(std::size_t prov, const std::string& key, const nlohmann::json& body, bool embed,
                                     const std::function<void()>* before_wait, CallResult& out, bool& gated,
                                     double& reserve, std::string& refusal) {
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
void LlmService::Impl::answer_dry(bool embed, const nlohmann::json& counted, std::size_t n_inputs, CallResult& out) {
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
void LlmService::Impl::join_in_flight(ProviderState& ps, const JobPtr& job) {
  std::lock_guard lk(flight_mu);
  auto [leader, fresh] = in_flight.try_emplace(job->key, job);
  if (fresh) return;
  job->follower = true;  // submit() leaves it out; the leader's finish() answers it
  leader->second->followers.push_back(job);
  std::lock_guard sl(stats_mu);
  ++ps.stats.merged;
}

// Prepares a job; returns nullptr with `out` filled when the call is already answered (error or cache hit).
JobPtr LlmService::Impl::prepare(const std::string& provider, bool embed, const nlohmann::json& request,
                                 std::size_t n_inputs, int replication, CallResult& out,
                                 const std::function<void()>* before_wait) {
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
  job->tokens = call_tokens(ps, body, embed, job->body.size());
  if (cache) join_in_flight(ps, job);
  return job;
}

void LlmService::Impl::submit(std::vector<JobPtr>& jobs) {
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
        !(p.connect_timeout_s > 0) || p.requests_per_minute < 0 || p.tokens_per_minute < 0 || p.backoff_initial_s < 0 ||
        p.backoff_max_s < 0)
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
    // (a ceiling other than the default was stated, in a configuration or by a program: the window starts higher)
    const bool stated = ps->cfg.max_in_flight != ProviderConfig{}.max_in_flight;
    ps->rate = std::make_unique<RateController>(RateSettings{ps->cfg.adaptive, ps->cfg.max_in_flight, stated,
                                                             ps->cfg.requests_per_minute, ps->cfg.tokens_per_minute});
    ps->count_tokens = ps->rate->counts_tokens();
    im.provs.push_back(std::move(ps));
  }
  // Longest first so that a key containing another key is redacted whole.
  std::sort(im.secrets.begin(), im.secrets.end(), [](const auto& a, const auto& b) { return a.size() > b.size(); });
  im.token_counter = TokenCounter::from_environment();
  im.dry_run = cache_opts.dry_run;
  if (cache_opts.enabled) 
    im.cache = std::make_unique<ResponseCache>(cache_opts.path.empty() ? default_cache_path() : cache_opts.path,
                                               /*snapshot=*/cache_opts.dry_run);
  if (cache_opts.enabled && !cache_opts.dry_run && !cache_opts.call_log_path.empty() &&
      cache_opts.call_log_path != im.cache->path())
    im.call_log = std::make_unique<ResponseCache>(cache_opts.call_log_path);
  im.start_loop();
}

LlmService::~LlmService() {
  impl_->stop_loop();
  impl_->cache.reset();  // flushes queued writes
  impl_->call_log.reset();
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
  std::unique_lock lk(impl_->stats_mu);
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
  lk.unlock();  // (the loop takes stats_mu while it holds rate_mu: never the other way round)
  for (auto& ps : impl_->provs) {
    std::lock_guard rl(ps->rate_mu);
    nlohmann::json rate = ps->rate->to_json();
    rate.erase("timeline");
    out[ps->cfg.name]["rate"] = std::move(rate);
  }
  return out;
}

nlohmann::json LlmService::rate_timelines_json() const {
  nlohmann::json out = nlohmann::json::object();
  for (auto& ps : impl_->provs) {
    std::lock_guard rl(ps->rate_mu);
    out[ps->cfg.name] = ps->rate->to_json()["timeline"];
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
