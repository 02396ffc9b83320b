// evalgraph LLM host services: an OpenAI-compatible chat-completions / embeddings client with bounded
// concurrency (one libcurl multi event-loop thread), retries with exponential backoff + full jitter that
// honour Retry-After, a persistent SQLite response cache and secret redaction. See lib/llm/README.md.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <cstdint>
#include <stdexcept>

#include <nlohmann/json.hpp>

namespace evalgraph::llm {

class TokenCounter;

// USD per million tokens (docs/cost.md). cached_input_per_mtok < 0: cached prompt tokens cost the input price.
struct Price {
  bool set = false;
  double input_per_mtok = 0, output_per_mtok = 0, cached_input_per_mtok = -1;
  double cached_rate() const { return cached_input_per_mtok >= 0 ? cached_input_per_mtok : input_per_mtok; }
  nlohmann::json to_json() const;
};

// The tokens of one answer: from the server's `usage` (prompt_tokens, completion_tokens,
// prompt_tokens_details.cached_tokens), or counted from the request and the answer when it sends none.
struct Usage {
  std::uint64_t prompt_tokens = 0, completion_tokens = 0, cached_tokens = 0;
  bool estimated = false;
};

// What an answer cost and its parts: input = (prompt - cached) x input price, cached x cached price,
// output = completion x output price, all / 1e6.
struct Cost {
  double input_usd = 0, cached_input_usd = 0, output_usd = 0;
  double total() const { return input_usd + cached_input_usd + output_usd; }
};
Cost cost_of(const Price& price, const Usage& usage);

struct ProviderConfig {
  std::string name;
  std::string base_url;  // e.g. http://127.0.0.1:8080/v1 (".../chat/completions" and ".../embeddings" are appended)
  std::string model;            // chat model
  std::string embedding_model;  // embeddings model (empty: `model`)
  std::string api_key;          // resolved secret, may be empty (then no Authorization header is sent)
  std::string api_key_source;   // "env:OPENAI_API_KEY" or "file:/path" (for messages only)
  std::map<std::string, std::string> headers;  // extra request headers
  double timeout_s = 120;        // whole-request timeout of one HTTP attempt
  double connect_timeout_s = 10;
  // HTTP requests of this provider in flight at once: the ceiling of the adaptive window (rate_controller.h), or
  // the fixed window with adaptive = false
  int max_in_flight = 256;
  bool adaptive = true;              // the window finds itself; the provider's rate-limit headers pace the calls
  double requests_per_minute = 0;    // 0: unlimited; else sends are spaced >= 60/rpm seconds apart
  double tokens_per_minute = 0;      // 0: unlimited; else a call's tokens (prompt + max_tokens) wait for the
                                     // tokens/minute refill (a second's worth may go at once)
  int max_attempts = 6;              // HTTP attempts per call, first one included
  double backoff_initial_s = 0.5;    // full jitter: delay ~ U(0, min(backoff_max_s, initial * 2^(retry-1)))
  double backoff_max_s = 30;
  int max_malformed_attempts = 2;    // attempts that may end in a malformed 2xx body before the call fails
  double retry_after_max_s = 120;    // a server asking to wait longer (Retry-After) fails the call at once
  double retry_total_max_s = 600;    // a call whose next retry would start later than this after its first
                                     // attempt fails instead of waiting
  std::size_t max_response_bytes = std::size_t(8) << 20;  // one answer, after decompression; cut as it arrives
  std::size_t max_response_bytes_in_flight = std::size_t(128) << 20;  // this provider's answers being received,
                                                                      // together
  Price price;                       // `price:`; unset: calls cost 0 (tokens still counted)
};

// Loads one provider from the pipeline's JSON/YAML object. Keys: base_url, model, embedding_model,
// api_key_env, api_key_file, headers, timeout_s, connect_timeout_s, max_in_flight, adaptive, requests_per_minute,
// tokens_per_minute,
// max_attempts, backoff_initial_s, backoff_max_s, max_malformed_attempts, retry_after_max_s, retry_total_max_s,
// max_response_bytes, max_response_bytes_in_flight (sizes: bytes, or "8 MiB"), price. Throws std::invalid_argument on
// an unknown key, a wrong type or value, or a secret that cannot be resolved (the message names the
// variable or file, never its content).
// The error of provider_from_json: `pointer` is the JSON pointer of the setting at fault within the provider
// ("/price/input_per_mtok"; "" for the provider as a whole), so that the pipeline can say file:line:col.
struct ProviderConfigError : std::invalid_argument {
  ProviderConfigError(const std::string& what, std::string ptr) : std::invalid_argument(what), pointer(std::move(ptr)) {}
  std::string pointer;
};
// resolve_secrets = false (estimate: nothing is sent) leaves the API key unread.
ProviderConfig provider_from_json(const std::string& name, const nlohmann::json& j, bool resolve_secrets = true);
// Reads a `price:` mapping; throws ProviderConfigError (pointer under /price) when it is not one.
Price price_from_json(const std::string& name, const nlohmann::json& j);

struct CacheOptions {
  bool enabled = true;
  std::string path;  // empty: $XDG_CACHE_HOME/evalgraph/llm-cache.sqlite or ~/.cache/evalgraph/llm-cache.sqlite
  // `evalgraph estimate`: nothing is sent. A call the cache does not answer gets at once the answer "-"
  // (CallResult::dry), with its prompt tokens counted; nothing is written to the cache.
  bool dry_run = false;
  // The run's call log (engine: <run>/progress/llm-calls.sqlite): every answer fetched is written there too, and a
  // call the cache does not answer is looked up there, so a resumed run repeats no answered call whatever the
  // cache setting of either session. Empty: none (with the cache off the engine makes the call log the cache).
  std::string call_log_path = {};
};

// Returns the default cache path (does not create it). Throws std::runtime_error if neither
// XDG_CACHE_HOME nor HOME is set.
std::string default_cache_path();

struct CallResult {
  bool ok = false;
  nlohmann::json response;  // the server's JSON answer when ok
  std::string error;        // when !ok; never contains an API key
  int http_status = 0;      // status of the last HTTP attempt (0: none / cache hit uses 200)
  int attempts = 0;         // HTTP attempts made (0 for a cache hit)
  bool cache_hit = false;
  bool merged = false;   // an identical call was already in flight: this one shared its answer (cache on only)
  bool stopped = false;  // ended by the run's stop request (util/stop.h) before an answer: --resume asks again
  double latency_s = 0;  // wall time of the call, queueing and retries included
  bool dry = false;      // dry run: not answered by the cache, not sent (the answer is empty)
  bool budget_refused = false;  // not started: the budget was reached (set_budget)
  double fetched_latency_s = -1;  // a hit: the latency it had when it was fetched (-1: not known)
  Usage usage;           // the answer's tokens (a hit: what it cost when it was fetched; dry: the prompt, counted)
  Cost cost;             // what this call cost: zero for a cache hit, a merged call or an error
};

enum class LogLevel { debug = 0, info = 1, warn = 2, error = 3 };
using LogFn = std::function<void(LogLevel, const std::string&)>;

class LlmService {
 public:
  // Throws std::invalid_argument for a bad provider list (duplicate/empty name, bad values) and
  // std::runtime_error if the cache cannot be opened.
  LlmService(std::vector<ProviderConfig> providers, CacheOptions cache = {});
  ~LlmService();
  LlmService(const LlmService&) = delete;
  LlmService& operator=(const LlmService&) = delete;

  bool has_provider(const std::string& name) const;
  const ProviderConfig* provider(const std::string& name) const;
  std::vector<std::string> provider_names() const;

  // One chat completion; `body` is the /chat/completions request without "model" (the provider's model is
  // set; a "model" in the body is overridden). Blocking, thread-safe.
  CallResult chat(const std::string& provider, const nlohmann::json& body, int replication);
  // Many chat completions, all submitted together (bounded by the provider's max_in_flight); results in order.
  std::vector<CallResult> chat_batch(const std::string& provider, const std::vector<nlohmann::json>& bodies,
                                     int replication);
  // Embeds texts; response = {"data":[{"embedding":[...]}...], "model": ...} in input order.
  CallResult embed(const std::string& provider, const std::vector<std::string>& texts, int replication);

  // Budget (docs/cost.md): before a call the cache cannot answer starts, spent + what the calls in flight can
  // still cost + this call's reserve must stay within max_cost_usd; a call's reserve is the mean cost of its
  // provider's billed calls so far (before the first answer: its counted prompt at the input price plus
  // max_tokens, else the prompt's size, at the output price). The first call that does not fit ends the
  // admissions for good: it and every later call are refused (CallResult::budget_refused) and on_reached is
  // called once with what was spent. Providers without a price are not limited. spent_before_usd: what earlier
  // sessions of a resumed run spent. Set before the first call.
  void set_budget(double max_cost_usd, double spent_before_usd, std::function<void(const std::string& why)> on_reached);
  // {"max_cost_usd", "spent_usd", "reached", "in_flight"}; null without a budget.
  nlohmann::json budget_json() const;

  // Pending and future calls end with error "cancelled". Permanent for this service.
  void cancel();
  bool cancelled() const;

  // {"<provider>": {calls, cache_hits, ..., "rate": {the window and pacing: RateController::to_json without its
  // timeline}}, ...}
  nlohmann::json stats_json() const;
  // {"<provider>": {"interval_s", "columns", "rows"}}: each provider's concurrency and answers over the run.
  nlohmann::json rate_timelines_json() const;
  std::string redact(std::string s) const;  // replaces every configured API key with "***"

  // Receives retry / give-up messages (already redacted). Thread-safe to set; called from the event loop.
  void set_logger(LogFn fn);
  // The cache key of a request (hex SHA-256), for tests and tools. kind: "chat" or "embeddings".
  std::string cache_key(const std::string& provider, const std::string& kind, const nlohmann::json& body,
                        int replication) const;
  std::string cache_path() const;  // empty when the cache is disabled
  // The cache's answers of a provider's chat model: {"answers", "mean_completion_tokens", "mean_latency_s"}
  // (null where unknown); {"answers": 0} without a cache.
  nlohmann::json cache_observed(const std::string& provider) const;
  // The token counter used for answers without `usage` (default: TokenCounter::from_environment()).
  void set_token_counter(std::shared_ptr<const TokenCounter> tc);
  std::shared_ptr<const TokenCounter> token_counter() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace evalgraph::llm
