// Token counts of chat requests and answers, for the cost of a server that sends no `usage` and for
// `evalgraph estimate` (docs/cost.md). Exact for OpenAI's cl100k_base / o200k_base when the encoding's
// .tiktoken file is given (byte-pair merges over its ranks; the pre-split follows the encoding's pattern, with
// the Unicode letter/number classes taken from a compact table, see tokens.cpp); otherwise an approximation
// from the same pre-split whose error against the real encodings is measured by bench/tokens/ and carried in
// `approximation_error()`.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

namespace evalgraph::llm {

class TokenCounter {
 public:
  enum class Encoding { cl100k_base, o200k_base };

  // The approximation (no file needed), splitting like `enc`.
  static std::shared_ptr<const TokenCounter> approximate(Encoding enc = Encoding::cl100k_base);
  // Loads a .tiktoken file ("<base64 token> <rank>" per line). The encoding is taken from the file name
  // (cl100k_base / o200k_base), else from its size (100,256 ranks: cl100k_base; 199,998: o200k_base).
  // Throws std::runtime_error naming the file and the line when it cannot be read.
  static std::shared_ptr<const TokenCounter> from_file(const std::string& path);
  // EVALGRAPH_TIKTOKEN_FILE when set (an error there throws), else the approximation.
  static std::shared_ptr<const TokenCounter> from_environment();

  std::size_t count(std::string_view text) const;
  // The pieces the encoding's pattern splits `text` into (before the byte-pair merges), for tests and benches.
  static std::vector<std::string> pieces(std::string_view text, Encoding enc);
  bool exact() const { return !ranks_.empty(); }
  Encoding encoding() const { return enc_; }
  // "cl100k_base (exact, /path/file.tiktoken)" or "approximate (cl100k_base split)".
  std::string describe() const;
  // The approximation's error as measured by bench/tokens/measure.sh against the encodings (relative, on the
  // total of each text): {"mean_abs_pct", "p95_abs_pct", "total_pct", "corpus"}; null when exact.
  nlohmann::json approximation_error() const;

  // A chat request's prompt tokens the way OpenAI counts them: per message its content (text parts of a
  // content array), role and name, plus 3 per message and 3 for the reply's priming; tools and response_format
  // count as their JSON text.
  std::size_t chat_prompt_tokens(const nlohmann::json& body) const;
  // An answer's completion tokens: every choice's message content and tool calls.
  std::size_t completion_tokens(const nlohmann::json& response) const;
  // An embeddings request's tokens: every input text.
  std::size_t embedding_tokens(const nlohmann::json& body) const;

 private:
  explicit TokenCounter(Encoding enc);
  std::size_t piece_tokens(std::string_view piece) const;      // through a per-thread memo of recent pieces
  std::size_t piece_tokens_bpe(std::string_view piece) const;  // the byte-pair merges

  Encoding enc_;
  std::uint64_t memo_id_;  // unique per counter, never reused (piece_tokens' memo is keyed by it, not by address)
  std::string file_;
  std::string storage_;  // every token's bytes, back to back (ranks_ keys point into it)
  std::unordered_map<std::string_view, std::uint32_t> ranks_;
};

}  // namespace evalgraph::llm
