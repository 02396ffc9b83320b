#pragma once
// The services the host hands every plugin (the eg_host table): logging, cancellation, secrets, LLM chat
// and embeddings, and (ABI 1.1) what the run has done so far. Plugins never talk to the network or the cache
// themselves; they go through here.
#include <atomic>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include <filesystem>
#include <vector>

#include "config/pipeline.h"
#include "evalgraph/plugin.h"
#include "llm/llm_service.h"

// Per-call context handed to plugins as an opaque eg_call*.
struct eg_call {
  std::size_t record_index = 0;
  int replication = 0;
  const std::string *node_id = nullptr;
};

namespace evalgraph {

class HostServices {
 public:
  // llm may be null (no providers declared): chat answers EG_UNSUPPORTED then.
  HostServices(std::shared_ptr<llm::LlmService> llm, std::string default_chat_provider,
               std::string default_embedding_provider);
  const eg_host *table() const { return &table_; }

  void cancel();
  bool cancelled() const { return cancelled_.load(std::memory_order_relaxed); }
  // Where plugin log lines go besides stderr (the run's log file); null for none.
  void set_log_file(std::FILE *f);
  void set_min_stderr_level(eg_log_level l) { min_stderr_level_ = l; }
  void log(eg_log_level level, const std::string &msg, const eg_call *call = nullptr);
  llm::LlmService *llm() const { return llm_.get(); }
  std::string redact(std::string s) const { return llm_ ? llm_->redact(std::move(s)) : s; }
  std::string embedding_model_id() const;
  // What eg_host.run_info answers: the executor sets the function while a run goes (and clears it with
  // nullptr at its end); without one, only {"llm": ...} of this host's LLM service. Thread-safe: a run_info
  // call in flight finishes before set_run_info returns.
  void set_run_info(std::function<nlohmann::json()> fn);
  nlohmann::json run_info() const;
  // Sees every LLM call a plugin makes, with its request (evalgraph estimate). Set before a run.
  using CallObserver = std::function<void(const eg_call *call, const std::string &provider, const nlohmann::json &request,
                                          const llm::CallResult &result)>;
  void set_call_observer(CallObserver fn) { observer_ = std::move(fn); }

  // What the run's LLM calls cost (docs/cost.md), per provider and per node: run.json's "cost". Cache hits
  // and merged calls cost nothing and are counted apart. `earlier` (a resumed run: what the sessions before it
  // spent, their "cost") is added in and kept as "earlier_sessions".
  nlohmann::json cost_json() const;
  void set_earlier_cost(nlohmann::json earlier);
  double cost_spent_usd() const;  // this session's and the earlier ones'
  // Under a budget the engine admits records by what a finished record cost (exec/record_budget.h): with this on,
  // each record's calls are summed apart until take_record_cost() hands the sum over.
  void track_record_costs(bool on) { track_record_costs_ = on; }
  double take_record_cost(std::size_t record_index, int replication);

 private:
  // Resolves the provider a chat call names (null: the pipeline's default); else fills `out` with why not.
  eg_status chat_provider(const char *requested, std::string &name, eg_buffer *out) const;
  eg_status chat(eg_call *call, const char *requested, std::string_view req, bool batch, eg_buffer *out);
  eg_status chat_one(eg_call *call, const std::string &name, const nlohmann::json &body, eg_buffer *out);
  eg_status chat_many(eg_call *call, const std::string &name, nlohmann::json &&bodies, eg_buffer *out);
  static HostServices *self(const eg_host *h) { return static_cast<HostServices *>(h->host_data); }
  static void c_log(const eg_host *h, eg_call *call, eg_log_level level, const char *msg);
  static int c_is_cancelled(const eg_host *h, eg_call *call);
  static eg_status c_get_secret(const eg_host *h, const char *name, eg_buffer *out);
  static eg_status c_chat(const eg_host *h, eg_call *call, const char *provider, const char *req, size_t len, eg_buffer *out);
  static eg_status c_chat_batch(const eg_host *h, eg_call *call, const char *provider, const char *req, size_t len,
                                eg_buffer *out);
  static eg_status c_embed(const eg_host *h, eg_call *call, const char *provider, const char *const *texts,
                           const size_t *lens, size_t n, eg_embeddings *out, eg_buffer *err);
  static eg_status c_run_info(const eg_host *h, eg_call *call, eg_buffer *out);

  void account(const eg_call *call, const std::string &provider, const llm::CallResult &r);
  CallObserver observer_;

  eg_host table_{};
  struct CostAcc {
    std::uint64_t calls = 0, billed_calls = 0, cache_hits = 0, merged = 0, failed_calls = 0, prompt_tokens = 0,
                  cached_prompt_tokens = 0, completion_tokens = 0, usage_estimated_calls = 0;
    llm::Cost cost;
    void add(const llm::CallResult &r);
    nlohmann::json to_json() const;
  };
  mutable std::mutex cost_mu_;
  std::map<std::string, std::map<std::string, CostAcc>> cost_;  // node id -> provider -> what its calls cost
  nlohmann::json earlier_cost_;
  std::atomic<bool> track_record_costs_{false};
  std::map<std::pair<std::size_t, int>, double> record_cost_;  // guarded by cost_mu_
  std::shared_ptr<llm::LlmService> llm_;
  std::string chat_provider_, embedding_provider_;
  std::atomic<bool> cancelled_{false};
  std::mutex log_mu_;
  std::FILE *log_file_ = nullptr;
  eg_log_level min_stderr_level_ = EG_LOG_WARN;
  mutable std::mutex run_info_mu_;
  std::function<nlohmann::json()> run_info_;
};

// The LLM service for a pipeline's providers (null when it declares none). Provider problems are a
// ConfigError at the provider's location. With no_cache the user's cache is neither read nor written, but the
// run still logs its calls in <run_dir>/progress so that --resume repeats none of them.
// dry_run (evalgraph estimate): nothing is sent and no key is read (llm::CacheOptions::dry_run); the cache is
// only read, and not opened at all when its file does not exist.
std::shared_ptr<llm::LlmService> make_llm_service(const std::vector<ProviderDecl> &providers, bool no_cache,
                                                  const std::string &cache_path, const std::filesystem::path &run_dir,
                                                  bool dry_run = false);

// Fills an eg_buffer with a copy of `s`; the receiver releases it.
void fill_host_buffer(eg_buffer *b, const std::string &s);
// Copies a buffer's bytes and releases it.
std::string take_host_buffer(eg_buffer &b);

}  // namespace evalgraph
