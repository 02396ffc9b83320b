// eg-token-count: the token count of each line of a JSONL file of strings (bench/tokens/measure.sh compares
// them with the real encodings). Usage: eg-token-count [cl100k_base|o200k_base|FILE.tiktoken] < texts.jsonl
#include <chrono>
#include <cstdio>
#include <iostream>
#include <string>

#include <nlohmann/json.hpp>

#include "llm/tokens.h"

int main(int argc, char** argv) {
  using evalgraph::llm::TokenCounter;
  std::string which = argc > 1 ? argv[1] : "cl100k_base";
  std::shared_ptr<const TokenCounter> tc;
  if (which == "cl100k_base") tc = TokenCounter::approximate(TokenCounter::Encoding::cl100k_base);
  else if (which == "o200k_base") tc = TokenCounter::approximate(TokenCounter::Encoding::o200k_base);
  else tc = TokenCounter::from_file(which);
  std::string line;
  std::size_t bytes = 0;
  double secs = 0;
  while (std::getline(std::cin, line)) {
    auto text = nlohmann::json::parse(line).get<std::string>();
    auto t0 = std::chrono::steady_clock::now();
    std::size_t n = tc->count(text);
    secs += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    bytes += text.size();
    std::printf("%zu\n", n);
  }
  std::fprintf(stderr, "%s: %zu bytes counted in %.3f s (%.0f MB/s)\n", tc->describe().c_str(), bytes, secs,
               secs > 0 ? bytes / secs / 1e6 : 0.0);
}
