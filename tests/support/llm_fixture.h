// The loopback LLM server of the pipeline tests (tests/llm/server), with the API key variable the tests'
// pipelines name (EG_TEST_SECRET_KEY) set for the server's lifetime, so that a failed REQUIRE cannot leave it
// set for the next test.
#pragma once

#include <catch2/catch.hpp>

#include <cstdlib>
#include <string>

#include "test_llm_server.h"
#include "test_support.h"

namespace testsupport {

// The test server's names, for the tests that use namespace testsupport.
using evalgraph::testing::Fault;
using evalgraph::testing::RecordedRequest;
using evalgraph::testing::Rule;
using evalgraph::testing::ServerOptions;
using evalgraph::testing::TestLlmServer;

class LlmServer : public TestLlmServer {
 public:
  explicit LlmServer(int latency_ms = 0, int threads = 2, const std::string &key = "k")
      : LlmServer(options(latency_ms, threads), key) {}
  explicit LlmServer(const ServerOptions &o, const std::string &key = "k") : TestLlmServer(o) {
    setenv("EG_TEST_SECRET_KEY", key.c_str(), 1);
  }
  ~LlmServer() { unsetenv("EG_TEST_SECRET_KEY"); }
  LlmServer(const LlmServer &) = delete;
  LlmServer &operator=(const LlmServer &) = delete;

  // Answers every request no earlier rule matched with `reply` (Rule::reply's placeholders, e.g. {last_user}).
  void reply_all(const std::string &reply) {
    Rule ok;
    ok.reply = reply;
    add_rule(ok);
  }

 private:
  static ServerOptions options(int latency_ms, int threads) {
    ServerOptions o;
    o.latency_ms = latency_ms;
    o.threads = threads;
    return o;
  }
};

#if defined(EVALGRAPH_EXE) && defined(TEST_PLUGIN_DIR)
// The two runs of a kill-and-resume test against `srv`: `evalgraph run -q <flags>` of <d>/clean.yaml to its end
// (exit 0, `calls` requests; the server's counters reset after it), then of <d>/killed.yaml, killed once `chunks`
// chunks are journaled under <d>/killed.
struct CleanAndKilled {
  fs::path clean_dir, run_dir;
};
inline CleanAndKilled clean_then_killed(LlmServer &srv, const TempDir &d, const std::string &flags, std::size_t calls,
                                        std::size_t chunks) {
  auto clean = run_pipeline(d, "clean.yaml", flags, "EG_TEST_SECRET_KEY=k ");
  INFO(clean.output);
  REQUIRE(clean.exit_code == 0);
  REQUIRE(!clean.dir.empty());
  REQUIRE(srv.request_count() == calls);
  srv.reset_counters();
  return {clean.dir, start_and_kill(d, "run -q " + flags + " " + (d.path / "killed.yaml").string(), d.path / "killed", chunks,
                                    "EG_TEST_SECRET_KEY=k ")};
}
#endif

}  // namespace testsupport
