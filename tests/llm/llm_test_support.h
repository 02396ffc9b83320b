// What the LLM service tests (test_llm_service.cpp, test_llm_hostile.cpp) share: the names they use, a clock, and a
// provider for the loopback test server.
#pragma once

#include <chrono>
#include <string>

#include <nlohmann/json.hpp>

#include "llm/llm_service.h"
#include "test_llm_server.h"

namespace llmtest {

using namespace evalgraph::testing;  // the test server: TestLlmServer, ServerOptions, Rule, Fault
using evalgraph::llm::CacheOptions;
using evalgraph::llm::CallResult;
using evalgraph::llm::LlmService;
using evalgraph::llm::ProviderConfig;
using Json = nlohmann::json;

using Clock = std::chrono::steady_clock;
inline double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// A provider `name` at `base_url` (model test-chat, embeddings test-embed), retrying quickly: backoff from 1 ms.
inline ProviderConfig provider_at(const std::string &base_url, const std::string &name = "p") {
  ProviderConfig p;
  p.name = name;
  p.base_url = base_url;
  p.model = "test-chat";
  p.embedding_model = "test-embed";
  p.timeout_s = 5;
  p.connect_timeout_s = 2;
  p.max_in_flight = 16;
  p.max_attempts = 4;
  p.backoff_initial_s = 0.001;
  p.backoff_max_s = 0.01;
  return p;
}

}  // namespace llmtest
