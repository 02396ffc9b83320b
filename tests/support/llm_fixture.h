// The loopback LLM server of the pipeline tests (tests/llm/server), with the API key variable the tests'
// pipelines name (EG_TEST_SECRET_KEY) set for the server's lifetime, so that a failed REQUIRE cannot leave it
// set for the next test.
#pragma once

#include <cstdlib>
#include <string>

#include "test_llm_server.h"

namespace testsupport {

class LlmServer : public evalgraph::testing::TestLlmServer {
 public:
  explicit LlmServer(int latency_ms = 0, int threads = 2, const std::string &key = "k")
      : TestLlmServer(options(latency_ms, threads)) {
    setenv("EG_TEST_SECRET_KEY", key.c_str(), 1);
  }
  ~LlmServer() { unsetenv("EG_TEST_SECRET_KEY"); }
  LlmServer(const LlmServer &) = delete;
  LlmServer &operator=(const LlmServer &) = delete;

  // Answers every request no earlier rule matched with `reply` (Rule::reply's placeholders, e.g. {last_user}).
  void reply_all(const std::string &reply) {
    evalgraph::testing::Rule ok;
    ok.reply = reply;
    add_rule(ok);
  }

 private:
  static evalgraph::testing::ServerOptions options(int latency_ms, int threads) {
    evalgraph::testing::ServerOptions o;
    o.latency_ms = latency_ms;
    o.threads = threads;
    return o;
  }
};

}  // namespace testsupport
