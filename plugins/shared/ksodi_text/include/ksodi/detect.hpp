// Transparent keyword detectors for the KSODI-Standard operators.
//
// A pattern is either a word phrase or a raw string:
//  - word phrase: words made of letters/digits, separated by spaces or hyphens ("step-by-step" = "step by
//    step"); it matches whole tokens of the lowercased text. A word ending in '*' matches by prefix
//    ("erkläre*" matches "erkläre", "erklären", "erklärt"…).
//  - raw string: anything with other characters ("format:", "```", "##", "§"); it matches as a substring of
//    the lowercased text, with a word boundary required where the pattern starts/ends with a word character.
// Negation (optional per lookup): a match is ignored when one of the three tokens before it, in the same
// clause (no , ; : . ! ? ( ) or line break in between), is a negation word (no, not, never, without, n't,
// nicht, kein*, ohne, nie, niemals).
//
// The keyword lists themselves live with the operators; their version is kDetectorVersion. Any change to a
// list or a rule must bump it.
#pragma once

#include <array>
#include <cstddef>
#include <initializer_list>
#include <string>
#include <string_view>
#include <cstdint>
#include <vector>

#include "ksodi/text.hpp"

namespace ksodi::detect {

inline constexpr const char *kDetectorVersion = "ksodi-detectors-1.3";

class KeywordSet {
 public:
  KeywordSet(std::initializer_list<const char *> patterns);
  KeywordSet(const KeywordSet &) = delete;
  KeywordSet &operator=(const KeywordSet &) = delete;

  // The pattern of the first match in text order (nullptr if none).
  const char *find(const text::TokenizedText &t, bool skip_negated = false) const;
  // Number of matches of all patterns (each occurrence counts).
  std::size_t count(const text::TokenizedText &t, bool skip_negated = false) const;
  // Both in one scan: the number of matches, and in *first what find() returns.
  std::size_t count_and_find(const text::TokenizedText &t, bool skip_negated, const char **first) const;
  const std::vector<std::string> &patterns() const { return patterns_; }

 private:
  struct Phrase {
    std::vector<std::string> words;
    std::vector<bool> prefix;
    std::size_t pattern;
  };
  // Calls f(pattern_index, byte_pos) for every match, in text order per kind; f returns false to stop.
  template <class F> void scan(const text::TokenizedText &t, bool skip_negated, F &&f) const;
  bool phrase_at(const text::TokenizedText &t, std::size_t ti, const Phrase &p) const;

  std::vector<std::string> patterns_;
  std::vector<Phrase> phrases_;
  std::vector<std::size_t> raw_;  // indices into patterns_
  // First word → phrases, in an open-addressing table (looked up once per token of every text: cheaper than
  // std::unordered_map's hashing and node chasing). Keys are views into the phrases' strings.
  struct Bucket {
    std::string_view key;  // empty: a free slot
    std::vector<std::size_t> phrases;
  };
  static std::uint64_t key_hash(std::string_view k);
  std::vector<std::size_t> &exact_insert(std::string_view key);
  const std::vector<std::size_t> *exact_find(std::string_view key) const;
  std::vector<Bucket> exact_first_;
  std::size_t exact_max_len_ = 0;
  std::array<std::vector<std::size_t>, 256> prefix_first_;  // first byte → phrases
};

// True when one of the 3 tokens before token ti (same clause) is a negation word.
bool negated_before(const text::TokenizedText &t, std::size_t ti);

// Quotations with at least two words inside: „…“ “…” "…" «…» »…«.
std::size_t count_quotations(std::string_view s);
// Bracket references: [1], [2, 3], [Doc 1], [Quelle 4] — not markdown links [text](url).
std::size_t count_bracket_refs(std::string_view s);
// Parenthesised source references: (Kap. 2), (S. 14), (Abschnitt 3.1), (section 4), (p. 7), (Doc 2), (Quelle: …).
std::size_t count_paren_refs(std::string_view s);

}  // namespace ksodi::detect
