#include "exec/host.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstring>
#include <iterator>

#include "embed/tfidf.h"
#include "llm/tokens.h"
#include "run_folder/run_folder.h"
#include "util/json_build.h"
#include "util/raw_json.h"
#include "util/stop.h"

namespace evalgraph {
using nlohmann::json;

void fill_host_buffer(eg_buffer *b, const std::string &s) {
  if (b == nullptr) return;
  auto *owned = new std::string(s);
  b->data = owned->data();
  b->size = owned->size();
  b->private_data = owned;
  b->release = [](eg_buffer *self) {
    delete static_cast<std::string *>(self->private_data);
    self->data = nullptr;
    self->size = 0;
    self->release = nullptr;
    self->private_data = nullptr;
  };
}

std::string take_host_buffer(eg_buffer &b) {
  std::string s = b.data != nullptr ? std::string(b.data, b.size) : std::string();
  if (b.release != nullptr) b.release(&b);
  return s;
}

std::shared_ptr<llm::LlmService> make_llm_service(const std::vector<ProviderDecl> &providers, bool no_cache,
                                                  const std::string &cache_path, const std::filesystem::path &run_dir,
                                                  bool dry_run) {
  if (providers.empty()) return nullptr;
  std::vector<llm::ProviderConfig> cfgs;
  std::vector<Diagnostic> diags;
  for (const auto &d : providers) {
    try {
      cfgs.push_back(llm::provider_from_json(d.name, d.config, !dry_run));
    } catch (const llm::ProviderConfigError &e) {
      diags.push_back({d.at(e.pointer), e.what()});
    } catch (const std::exception &e) {
      diags.push_back({d.where, fmt::format("provider '{}': {}", d.name, e.what())});
    }
  }
  if (!diags.empty()) throw ConfigError(diags);
  llm::CacheOptions c;
  c.enabled = true;
  c.dry_run = dry_run;
  if (dry_run) {
    c.path = cache_path.empty() ? llm::default_cache_path() : cache_path;
    c.enabled = !no_cache && std::filesystem::exists(c.path);
    return std::make_shared<llm::LlmService>(std::move(cfgs), c);
  }
  // The run's call log holds every answered call whatever the cache setting (with --no-cache it is the cache), so a
  // --resume with or without the cache repeats no answered call (#39).
  c.path = no_cache ? run_folder::llm_call_log(run_dir).string() : cache_path;
  if (!no_cache) c.call_log_path = run_folder::llm_call_log(run_dir).string();
  std::filesystem::create_directories(run_folder::progress_dir(run_dir));
  return std::make_shared<llm::LlmService>(std::move(cfgs), c);
}

HostServices::HostServices(std::shared_ptr<llm::LlmService> llm, std::string chat_provider,
                           std::string embedding_provider)
    : llm_(std::move(llm)), chat_provider_(std::move(chat_provider)), embedding_provider_(std::move(embedding_provider)) {
  table_.struct_size = sizeof(eg_host);
  table_.abi_major = EG_ABI_MAJOR;
  table_.abi_minor = EG_ABI_MINOR;
  table_.host_data = this;
  table_.log = &c_log;
  table_.is_cancelled = &c_is_cancelled;
  table_.get_secret = &c_get_secret;
  table_.chat = &c_chat;
  table_.chat_batch = &c_chat_batch;
  table_.embed = &c_embed;
  table_.run_info = &c_run_info;
  if (llm_) {
    llm_->set_logger([this](llm::LogLevel l, const std::string &m) {
      log(static_cast<eg_log_level>(static_cast<int>(l)), m);
    });
  }
}

void HostServices::cancel() {
  cancelled_ = true;
  if (llm_) llm_->cancel();
}

void HostServices::set_log_file(std::FILE *f) {
  std::lock_guard lk(log_mu_);
  log_file_ = f;
}

void HostServices::log(eg_log_level level, const std::string &raw, const eg_call *call) {
  static const char *names[] = {"debug", "info", "warn", "error"};
  std::string msg = redact(raw);
  std::string where = (call != nullptr && call->node_id != nullptr)
                          ? fmt::format(" [{} record {}]", *call->node_id, call->record_index + 1)
                          : std::string();
  std::string line = fmt::format("evalgraph: {}{}: {}\n", names[level < 0 || level > 3 ? 1 : level], where, msg);
  std::lock_guard lk(log_mu_);
  if (level >= min_stderr_level_) std::fputs(line.c_str(), stderr);
  if (log_file_ != nullptr) std::fputs(line.c_str(), log_file_);
}

std::string HostServices::embedding_model_id() const {
  if (embedding_provider_.empty() || !llm_) return embed::TfidfEmbedder::model_id();
  const auto *p = llm_->provider(embedding_provider_);
  return p == nullptr ? std::string() : embedding_provider_ + ":" + (p->embedding_model.empty() ? p->model : p->embedding_model);
}

void HostServices::set_run_info(std::function<json()> fn) {
  std::lock_guard lk(run_info_mu_);
  run_info_ = std::move(fn);
}

json HostServices::run_info() const {
  std::lock_guard lk(run_info_mu_);  // held while the executor's function runs: it cannot go away meanwhile
  if (run_info_) return run_info_();
  return {{"llm", llm_ ? llm_->stats_json() : json::object()}};
}

void HostServices::CostAcc::add(const llm::CallResult &r) {
  ++calls;
  if (!r.ok) {
    ++failed_calls;
    return;
  }
  if (r.cache_hit) {
    ++cache_hits;
    return;
  }
  if (r.merged) {
    ++merged;
    return;
  }
  ++billed_calls;
  prompt_tokens += r.usage.prompt_tokens;
  completion_tokens += r.usage.completion_tokens;
  cached_prompt_tokens += std::min(r.usage.cached_tokens, r.usage.prompt_tokens);
  if (r.usage.estimated) ++usage_estimated_calls;
  cost.input_usd += r.cost.input_usd;
  cost.cached_input_usd += r.cost.cached_input_usd;
  cost.output_usd += r.cost.output_usd;
}

json HostServices::CostAcc::to_json() const {
  return {{"cost_usd", cost.total()},
          {"input_cost_usd", cost.input_usd},
          {"cached_input_cost_usd", cost.cached_input_usd},
          {"output_cost_usd", cost.output_usd},
          {"calls", calls},
          {"billed_calls", billed_calls},
          {"cache_hits", cache_hits},
          {"merged", merged},
          {"failed_calls", failed_calls},
          {"prompt_tokens", prompt_tokens},
          {"cached_prompt_tokens", cached_prompt_tokens},
          {"completion_tokens", completion_tokens},
          {"usage_estimated_calls", usage_estimated_calls}};
}

void HostServices::account(const eg_call *call, const std::string &provider, const llm::CallResult &r) {
  const std::string &node = (call != nullptr && call->node_id != nullptr) ? *call->node_id : std::string("(host)");
  std::lock_guard lk(cost_mu_);
  cost_[node][provider].add(r);
  if (track_record_costs_ && call != nullptr) record_cost_[{call->record_index, call->replication}] += r.cost.total();
}

double HostServices::take_record_cost(std::size_t record_index, int replication) {
  std::lock_guard lk(cost_mu_);
  auto it = record_cost_.find({record_index, replication});
  if (it == record_cost_.end()) return 0;
  const double c = it->second;
  record_cost_.erase(it);
  return c;
}

json HostServices::cost_json() const {
  std::map<std::string, CostAcc> by_provider;
  CostAcc total;
  json nodes = json::object();
  {
    std::lock_guard lk(cost_mu_);
    for (const auto &[node, provs] : cost_) {
      CostAcc n;
      json per = json::object();
      for (const auto &[prov, a] : provs) {
        per[prov] = a.to_json();
        for (auto *acc : {&n, &by_provider[prov], &total}) {
          acc->calls += a.calls;
          acc->billed_calls += a.billed_calls;
          acc->cache_hits += a.cache_hits;
          acc->merged += a.merged;
          acc->failed_calls += a.failed_calls;
          acc->prompt_tokens += a.prompt_tokens;
          acc->cached_prompt_tokens += a.cached_prompt_tokens;
          acc->completion_tokens += a.completion_tokens;
          acc->usage_estimated_calls += a.usage_estimated_calls;
          acc->cost.input_usd += a.cost.input_usd;
          acc->cost.cached_input_usd += a.cost.cached_input_usd;
          acc->cost.output_usd += a.cost.output_usd;
        }
      }
      json nj = n.to_json();
      nj["providers"] = per;
      nodes[node] = nj;
    }
  }
  json out = total.to_json();
  out["currency"] = "USD";
  json provs = json::object();
  if (llm_) {
    for (const auto &name : llm_->provider_names()) {
      json pj = by_provider[name].to_json();
      const auto &price = llm_->provider(name)->price;
      pj["price"] = price.set ? price.to_json() : json(nullptr);
      provs[name] = pj;
    }
    out["tokenizer"] = llm_->token_counter()->describe();
  }
  out["providers"] = provs;
  out["nodes"] = nodes;
  if (!earlier_cost_.is_null()) {
    json earlier = earlier_cost_;
    earlier.erase("earlier_sessions");
    run_folder::sum_cost_json(out, earlier);
    json e = {{"cost_usd", earlier_cost_.value("cost_usd", 0.0)}, {"billed_calls", earlier_cost_.value("billed_calls", 0)}};
    out["earlier_sessions"] = e;
  }
  return out;
}

void HostServices::set_earlier_cost(json earlier) { earlier_cost_ = std::move(earlier); }

double HostServices::cost_spent_usd() const {
  double spent = earlier_cost_.is_object() ? earlier_cost_.value("cost_usd", 0.0) : 0.0;
  std::lock_guard lk(cost_mu_);
  for (const auto &[node, provs] : cost_)
    for (const auto &[prov, a] : provs) spent += a.cost.total();
  return spent;
}

eg_status HostServices::c_run_info(const eg_host *h, eg_call *, eg_buffer *out) {
  try {
    fill_host_buffer(out, self(h)->run_info().dump(-1, ' ', false, json::error_handler_t::replace));
    return EG_OK;
  } catch (const std::exception &e) {
    fill_host_buffer(out, self(h)->redact(fmt::format("run_info failed: {}", e.what())));
    return EG_ERROR;
  }
}

void HostServices::c_log(const eg_host *h, eg_call *call, eg_log_level level, const char *msg) {
  self(h)->log(level, msg != nullptr ? msg : "", call);
}

int HostServices::c_is_cancelled(const eg_host *h, eg_call *) { return self(h)->cancelled() ? 1 : 0; }

eg_status HostServices::c_get_secret(const eg_host *h, const char *name, eg_buffer *out) {
  // Secrets are the providers' API keys, named "<provider>.api_key"; nothing else is handed out.
  HostServices *s = self(h);
  std::string n = name != nullptr ? name : "";
  const std::string suffix = ".api_key";
  if (s->llm_ && n.size() > suffix.size() && n.compare(n.size() - suffix.size(), suffix.size(), suffix) == 0) {
    if (const auto *p = s->llm_->provider(n.substr(0, n.size() - suffix.size())); p != nullptr) {
      fill_host_buffer(out, p->api_key);
      return EG_OK;
    }
  }
  fill_host_buffer(out, fmt::format("no secret named '{}' (secrets are '<provider>.api_key' of declared providers)", n));
  return EG_ERROR;
}

namespace {
std::string pick(const char *requested, const std::string &fallback) {
  return (requested != nullptr && *requested != '\0') ? std::string(requested) : fallback;
}
}  // namespace

eg_status HostServices::chat_provider(const char *requested, std::string &name, eg_buffer *out) const {
  if (!llm_) {
    fill_host_buffer(out, "no LLM provider is configured: declare one under 'providers:' in the pipeline");
    return EG_UNSUPPORTED;
  }
  name = pick(requested, chat_provider_);
  if (!llm_->has_provider(name)) {
    fill_host_buffer(out, fmt::format("unknown provider '{}'; the pipeline declares: {}", name,
                                      fmt::join(llm_->provider_names(), ", ")));
    return EG_ERROR;
  }
  return EG_OK;
}

// chat and chat_batch: the provider a call names and its request (an object; a batch: an array) checked here,
// once, then the call made.
eg_status HostServices::chat(eg_call *call, const char *requested, std::string_view req, bool batch, eg_buffer *out) {
  std::string name;
  if (eg_status st = chat_provider(requested, name, out); st != EG_OK) return st;
  // (checked without recursion first: a request nested deeper than rawjson::kMaxDepth is refused, not dumped)
  json body = rawjson::parse(req);
  if (body.is_discarded() || (batch ? !body.is_array() : !body.is_object())) {
    fill_host_buffer(out, fmt::format("{} request is not a JSON {} (or nests deeper than 512 levels)",
                                      batch ? "chat_batch" : "chat", batch ? "array" : "object"));
    return EG_INVALID_INPUT;
  }
  return batch ? chat_many(call, name, std::move(body), out) : chat_one(call, name, body, out);
}

eg_status HostServices::c_chat(const eg_host *h, eg_call *call, const char *provider, const char *req, size_t len,
                               eg_buffer *out) {
  return self(h)->chat(call, provider, std::string_view(req, len), false, out);
}

eg_status HostServices::c_chat_batch(const eg_host *h, eg_call *call, const char *provider, const char *req, size_t len,
                                     eg_buffer *out) {
  return self(h)->chat(call, provider, std::string_view(req, len), true, out);
}

eg_status HostServices::chat_one(eg_call *call, const std::string &name, const json &body, eg_buffer *out) {
  llm::CallResult r = llm_->chat(name, body, call != nullptr ? call->replication : 0);
  account(call, name, r);
  if (observer_) observer_(call, name, body, r);
  if (r.stopped) {
    note_call_stopped();
    fill_host_buffer(out, r.error);
    return EG_CANCELLED;
  }
  if (cancelled()) {
    fill_host_buffer(out, "cancelled");
    return EG_CANCELLED;
  }
  if (!r.ok) {
    fill_host_buffer(out, r.error);
    return EG_ERROR;
  }
  if (r.dry) {  // (estimate: every dry answer is the same text; dumped once)
    static const std::string dry_text = r.response.dump();
    fill_host_buffer(out, dry_text);
    return EG_OK;
  }
  fill_host_buffer(out, r.response.dump());
  return EG_OK;
}

eg_status HostServices::chat_many(eg_call *call, const std::string &name, json &&arr, eg_buffer *out) {
  auto &items = arr.get_ref<json::array_t &>();  // (chat() checked it is an array)
  std::vector<json> bodies(std::make_move_iterator(items.begin()), std::make_move_iterator(items.end()));
  auto results = llm_->chat_batch(name, bodies, call != nullptr ? call->replication : 0);
  json res = json::array();
  bool stopped = false;
  for (std::size_t i = 0; i < results.size(); ++i) {
    account(call, name, results[i]);
    if (observer_) observer_(call, name, bodies[i], results[i]);
  }
  for (auto &r : results) {
    if (r.stopped && !stopped) {
      stopped = true;
      note_call_stopped();
    }
    if (r.ok) res.push_back({{"ok", true}, {"response", std::move(r.response)}});
    else res.push_back({{"ok", false}, {"error", r.error}});
  }
  fill_host_buffer(out, res.dump());
  return cancelled() || stopped ? EG_CANCELLED : EG_OK;
}

namespace {
struct EmbeddingStorage {
  std::vector<float> data;
  std::string model;
};
void release_embeddings(eg_embeddings *e) {
  delete static_cast<EmbeddingStorage *>(e->private_data);
  e->data = nullptr;
  e->model_id = nullptr;
  e->release = nullptr;
  e->private_data = nullptr;
}
}  // namespace

eg_status HostServices::c_embed(const eg_host *h, eg_call *call, const char *provider, const char *const *texts,
                                const size_t *lens, size_t n, eg_embeddings *out, eg_buffer *err) {
  HostServices *s = self(h);
  std::string name = pick(provider, s->embedding_provider_);
  if (name == "tfidf") name.clear();
  auto st = std::make_unique<EmbeddingStorage>();
  size_t dim = 0;
  try {
    if (name.empty()) {
      std::vector<std::string_view> views;
      views.reserve(n);
      for (size_t i = 0; i < n; ++i) views.emplace_back(texts[i], lens[i]);
      embed::TfidfEmbedder().embed(views, st->data, dim);
      st->model = embed::TfidfEmbedder::model_id();
    } else {
      if (!s->llm_ || !s->llm_->has_provider(name)) {
        fill_host_buffer(err, fmt::format("unknown embedding provider '{}'", name));
        return EG_ERROR;
      }
      std::vector<std::string> in;
      in.reserve(n);
      for (size_t i = 0; i < n; ++i) in.emplace_back(texts[i], lens[i]);
      llm::CallResult r = s->llm_->embed(name, in, call != nullptr ? call->replication : 0);
      s->account(call, name, r);
      if (s->observer_) s->observer_(call, name, json{{"input", in}}, r);
      if (r.stopped) note_call_stopped();
      if (!r.ok) {
        fill_host_buffer(err, r.error);
        return EG_ERROR;
      }
      const json &data = r.response.at("data");
      if (!data.is_array() || data.size() != n) {
        fill_host_buffer(err, fmt::format("embedding provider '{}' returned {} vectors for {} texts", name,
                                          data.is_array() ? data.size() : 0, n));
        return EG_ERROR;
      }
      for (const auto &item : data) {
        const json &v = item.at("embedding");
        if (dim == 0) dim = v.size();
        if (v.size() != dim) {
          fill_host_buffer(err, fmt::format("embedding provider '{}' returned vectors of different lengths", name));
          return EG_ERROR;
        }
        for (const auto &x : v) st->data.push_back(x.get<float>());
      }
      const auto *p = s->llm_->provider(name);
      st->model = name + ":" + (p->embedding_model.empty() ? p->model : p->embedding_model);
    }
  } catch (const std::exception &e) {
    fill_host_buffer(err, s->redact(fmt::format("embedding failed: {}", e.what())));
    return EG_ERROR;
  }
  out->struct_size = sizeof(eg_embeddings);
  out->count = n;
  out->dim = dim;
  out->data = st->data.data();
  out->model_id = st->model.c_str();
  out->release = &release_embeddings;
  out->private_data = st.release();
  return EG_OK;
}

}  // namespace evalgraph
