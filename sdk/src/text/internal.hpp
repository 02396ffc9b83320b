// What the text library's files (sdk/src/text/) share; not installed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string_view>
#include <vector>

#include "evalgraph/text.hpp"

namespace evalgraph::text::detail {

// A fixed set of short words in an open-addressing table (built once, read-only afterwards, so thread-safe):
// looked up at most sentence ends, where std::unordered_set's hashing and node chasing showed in profiles.
class WordSet {
 public:
  WordSet(std::initializer_list<std::string_view> words) {
    std::size_t cap = 16;
    while (cap < words.size() * 4) cap <<= 1;
    slots_.resize(cap);
    for (std::string_view w : words) {
      if (w.size() > max_len_) max_len_ = w.size();
      std::size_t i = hash(w) & (cap - 1);
      while (!slots_[i].empty() && slots_[i] != w) i = (i + 1) & (cap - 1);
      slots_[i] = w;
    }
  }
  bool contains(std::string_view w) const {
    if (w.empty() || w.size() > max_len_) return false;
    const std::size_t mask = slots_.size() - 1;
    for (std::size_t i = hash(w) & mask;; i = (i + 1) & mask) {
      if (slots_[i].empty()) return false;
      if (slots_[i] == w) return true;
    }
  }

 private:
  static std::uint64_t hash(std::string_view w) {
    std::uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a
    for (char c : w) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ULL;
    return h ^ (h >> 29);
  }
  std::vector<std::string_view> slots_;  // empty: a free slot (the sets hold no empty word)
  std::size_t max_len_ = 0;
};

// The sentences of the lines [lines.begin(), lines.end()) of text, appended to out (split_sentences and the prose
// runs of split_claims, which pass a part of the text's lines without copying them). In sentences.cpp.
void append_sentences(std::string_view text, std::span<const Line> lines, std::vector<std::string_view> &out);

}  // namespace evalgraph::text::detail
