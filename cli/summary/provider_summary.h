#pragma once
// The end-of-run summary's lines for one LLM provider (docs/llm-providers.md): what was called, from run.json's
// llm.<provider> (calls, requests, cache, failures, retries, tokens, latency), then how fast it was driven
// (llm.<provider>.rate: concurrency min/median/max, window kind, what held it, 429s, time waiting for capacity).
#include <nlohmann/json.hpp>
#include <string>

namespace evalgraph::summary {

// "  provider NAME: ...\n" and, where the stats carry "rate", "    concurrency ...\n"; one line
// "  provider NAME: not called\n" for a provider without calls.
std::string provider_lines(const std::string &name, const nlohmann::json &stats);

}  // namespace evalgraph::summary
