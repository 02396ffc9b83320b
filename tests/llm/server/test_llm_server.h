// A scripted OpenAI-compatible HTTP/1.1 server on 127.0.0.1 for the LLM tests and benchmarks.
// Boost.Beast, asynchronous, N worker threads. Answers POST /v1/chat/completions, /v1/embeddings,
// /chat/completions, /embeddings; GET /_stats returns {"requests": n, "max_concurrency": m}.
// Nothing outside this machine is contacted. Start/stop are RAII (the constructor binds port 0 and starts
// the threads; the destructor stops them).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "provider_limits.h"

namespace evalgraph::testing {

enum class Fault {
  none,
  http_429,            // 429 with Retry-After: <retry_after> and a JSON error body
  http_500,            // 500 with a JSON error body
  http_503,            // 503 with a JSON error body (and Retry-After if retry_after is set)
  http_status,         // `status` with {"error":{"message": error_message}}; "{auth}" in the message is
                       // replaced by the request's Authorization header value (to test redaction)
  hang,                // waits hang_ms (longer than the client's timeout), then answers normally
  cut,                 // sends the head with a Content-Length of 1000 and a few body bytes, then closes
  malformed_json,      // 200 application/json with a body that is not JSON
  wrong_content_type,  // 200 text/html with an HTML body
  missing_choices,     // 200 application/json, valid JSON without choices/data
  deep_json,           // 200 application/json, a valid completion with a member nested 100,000 deep
  // Hostile servers (issue #28). Each is bounded: streamed answers stop after hostile_max_bytes or hostile_max_s.
  trickle,             // 200 head with Content-Length 100000, then one body byte every trickle_ms
  slow_headers,        // the head itself one byte every trickle_ms (slowloris), never finished
  endless,             // 200 chunked body that never ends, sent as fast as the client reads
  gzip_bomb,           // Content-Encoding: gzip, ~1/1000 of bomb_bytes that inflate to a completion of bomb_bytes
  deflate_bomb,        // the same with Content-Encoding: deflate
  brotli_bomb,         // the same with Content-Encoding: br (brotli: ~1/100,000 of bomb_bytes)
  big_content,         // a valid completion whose content is big_content_bytes long (exact Content-Length)
  reset,               // the connection reset (RST) once the request is read
  bad_chunking,        // a chunked body with a chunk size that is not hex
  invalid_utf8,        // a valid completion whose content holds bytes that are not UTF-8
  empty_choices,       // 200 {"choices": []}
  many_choices,        // a completion with 10,000 choices
  redirect,            // 302 to redirect_location
  redirect_loop,       // 302 to the request's own URL
  other_model          // a valid completion naming other_model as the model that answered
};

const char* fault_name(Fault f);

struct Rule {
  std::string match{};        // substring (or ECMAScript regex when `regex`) of the matched text; "" = any
  bool regex = false;
  bool any_message = false;   // match against all messages' text; default: the last user message
  std::string endpoint{};     // "chat", "embeddings" or "" (both); for embeddings the text is all inputs
  std::string reply{};        // reply content; "{last_user}" is replaced by the last user message
  int latency_ms = -1;        // -1: the server's default latency
  Fault fault = Fault::none;
  int fault_times = -1;       // fault the first N requests that match this rule with the same body; -1: always
  int status = 400;           // for Fault::http_status
  std::string error_message = "scripted error";
  std::string retry_after{};  // Retry-After header value for 429/503 ("" = none), e.g. "1" or an HTTP date
};

struct ServerOptions {
  int threads = 2;
  int latency_ms = 0;               // default latency of every answer (its mean when latency_sigma > 0)
  // Heavy-tailed latency: with latency_sigma > 0 the default latency is log-normal with this sigma and the
  // mean latency_ms (latency_ms * exp(sigma*z - sigma^2/2), z standard normal drawn from a hash of seed and
  // request body, so a run is repeatable whatever the arrival order). Rules with their own latency keep it.
  double latency_sigma = 0;
  std::string default_reply = "OK";  // when no rule matches
  int hang_ms = 3000;               // Fault::hang duration
  int embedding_dim = 64;
  // Seeded random faults: a request body is faulted when hash(seed, body) < rate; the kind is picked from
  // random_faults by the same hash, and it fails its first random_fault_times arrivals. Deterministic per
  // request body whatever the arrival order.
  double fault_rate = 0;
  std::uint64_t seed = 1;
  std::vector<Fault> random_faults;
  int random_fault_times = 1;  // < 0: every arrival
  std::string random_retry_after = "0";
  // Hostile modes' bounds and sizes.
  int trickle_ms = 200;
  std::uint64_t hostile_max_bytes = std::uint64_t(1) << 30;
  double hostile_max_s = 60;
  std::uint64_t bomb_bytes = std::uint64_t(1) << 30;
  std::uint64_t big_content_bytes = std::uint64_t(200) << 20;
  std::string redirect_location = "http://example.invalid/v1/chat/completions";
  std::string other_model = "some-other-model-7b";
  // Cost tests: answers carry `usage` (prompt and completion tokens: word counts) unless send_usage is false;
  // cached_tokens > 0 adds usage.prompt_tokens_details.cached_tokens (at most the prompt tokens).
  bool send_usage = true;
  int cached_tokens = 0;
  // Provider-like limits (provider_limits.h): token buckets with 429s and x-ratelimit-* headers, or 429 with
  // retry-after only, a capacity beyond which requests queue, limits cut mid-run.
  ProviderLimits limits;
};

// Parses a fault name (fault_name's words, plus "429", "500", "503"); false if unknown.
bool parse_fault(const std::string& name, Fault& out);

struct RecordedRequest {
  std::string method, target, body;
  std::map<std::string, std::string> headers;  // lower-case names
  double t_s = 0;                              // arrival, seconds since the server started
  std::string fault;                           // fault applied ("" if none)
  int delay_ms = 0;                            // the latency drawn for its answer (chat requests)
};

class TestLlmServer {
 public:
  explicit TestLlmServer(ServerOptions opts = {}, unsigned short port = 0);
  ~TestLlmServer();
  TestLlmServer(const TestLlmServer&) = delete;
  TestLlmServer& operator=(const TestLlmServer&) = delete;

  unsigned short port() const;
  std::string base_url(bool with_v1 = true) const;  // http://127.0.0.1:<port>/v1

  void add_rule(Rule r);  // rules are tried in order; the first match wins
  void clear_rules();
  void set_default_latency_ms(int ms);

  std::size_t request_count() const;
  std::vector<RecordedRequest> requests() const;
  int max_concurrency() const;  // most requests being answered at once (read, not yet fully written)
  std::uint64_t refused_by_limits() const;  // 429s of ServerOptions::limits
  // Per answered request (not refused by the limits), the milliseconds from its arrival until its answer went
  // out: its latency as the client sees it, the capacity's queue included.
  std::vector<double> answer_latencies_ms() const;
  void reset_counters();        // clears recorded requests, counts, fault counters and max concurrency
  void stop();

  // Deterministic embedding of a text: hashed bag of lower-case words, L2-normalised.
  static std::vector<double> embed_text(const std::string& text, int dim);

  struct Impl;

 private:
  std::shared_ptr<Impl> impl_;
};

}  // namespace evalgraph::testing
