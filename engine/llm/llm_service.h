// evalgraph LLM host services: an OpenAI-compatible chat-completions / embeddings client with bounded
// concurrency (one libcurl multi event-loop thread), retries with exponential backoff + full jitter that
// honour Retry-After, a persistent SQLite response cache and secret redaction. See engine/llm/README.md.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace evalgraph::llm {

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
  int max_in_flight = 8;             // HTTP requests of this provider in flight at once
  double requests_per_minute = 0;    // 0: unlimited; else sends are spaced >= 60/rpm seconds apart
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
};

// Loads one provider from the pipeline's JSON/YAML object. Keys: base_url, model, embedding_model,
// api_key_env, api_key_file, headers, timeout_s, connect_timeout_s, max_in_flight, requests_per_minute,
// max_attempts, backoff_initial_s, backoff_max_s, max_malformed_attempts, retry_after_max_s, retry_total_max_s,
// max_response_bytes, max_response_bytes_in_flight (sizes: bytes, or "8 MiB"). Throws std::invalid_argument on
// an unknown key, a wrong type or value, or a secret that cannot be resolved (the message names the
// variable or file, never its content).
ProviderConfig provider_from_json(const std::string& name, const nlohmann::json& j);

struct CacheOptions {
  bool enabled = true;
  std::string path;  // empty: $XDG_CACHE_HOME/evalgraph/llm-cache.sqlite or ~/.cache/evalgraph/llm-cache.sqlite
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

  // Pending and future calls end with error "cancelled". Permanent for this service.
  void cancel();
  bool cancelled() const;

  nlohmann::json stats_json() const;  // {"<provider>": {calls, cache_hits, ...}, ...}
  std::string redact(std::string s) const;  // replaces every configured API key with "***"

  // Receives retry / give-up messages (already redacted). Thread-safe to set; called from the event loop.
  void set_logger(LogFn fn);
  // The cache key of a request (hex SHA-256), for tests and tools. kind: "chat" or "embeddings".
  std::string cache_key(const std::string& provider, const std::string& kind, const nlohmann::json& body,
                        int replication) const;
  std::string cache_path() const;  // empty when the cache is disabled

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace evalgraph::llm
