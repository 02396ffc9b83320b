// Letter classes of the German text indices (readability, content preservation), on the SDK's text library
// (evalgraph/text.hpp: decoding and lowercasing — Ä Ö Ü → ä ö ü, ß stays — are its, not a copy).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "evalgraph/text.hpp"

namespace chatbot_text {

// Code points of s (UTF-8 as the SDK's text library decodes it: an invalid byte is one U+FFFD).
inline std::vector<char32_t> decode(std::string_view s) {
  std::vector<char32_t> out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    const evalgraph::text::Decoded d = evalgraph::text::decode(s, i);
    out.push_back(d.cp);
    i += static_cast<std::size_t>(d.len);
  }
  return out;
}

using evalgraph::text::append_utf8;
inline char32_t lower(char32_t c) { return evalgraph::text::lower_cp(c); }

// Letters: ASCII, Latin-1 letters (ä ö ü ß é ...), Latin Extended-A/B.
inline bool is_letter(char32_t c) {
  c = lower(c);
  return (c >= 'a' && c <= 'z') || (c >= 0xDF && c <= 0xFF && c != 0xF7) || (c >= 0x100 && c <= 0x24F);
}
inline bool is_digit(char32_t c) { return c >= '0' && c <= '9'; }

// Vowels for syllable counting (lower case): a e i o u y ä ö ü and accented Latin-1 vowels.
inline bool is_vowel(char32_t c) {
  c = lower(c);
  switch (c) {
    case 'a': case 'e': case 'i': case 'o': case 'u': case 'y':
    case 0xE4: case 0xF6: case 0xFC:                        // ä ö ü
    case 0xE0: case 0xE1: case 0xE2: case 0xE8: case 0xE9: case 0xEA: case 0xEB:
    case 0xEC: case 0xED: case 0xEE: case 0xEF: case 0xF2: case 0xF3: case 0xF4:
    case 0xF9: case 0xFA: case 0xFB: case 0xFD: case 0xFF:
      return true;
    default:
      return false;
  }
}

}  // namespace chatbot_text
