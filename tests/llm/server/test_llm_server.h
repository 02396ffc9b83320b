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
  deep_json            // 200 application/json, a valid completion with a member nested 100,000 deep
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
  int random_fault_times = 1;
  std::string random_retry_after = "0";
};

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
  void reset_counters();        // clears recorded requests, counts, fault counters and max concurrency
  void stop();

  // Deterministic embedding of a text: hashed bag of lower-case words, L2-normalised.
  static std::vector<double> embed_text(const std::string& text, int dim);

  struct Impl;

 private:
  std::shared_ptr<Impl> impl_;
};

}  // namespace evalgraph::testing
