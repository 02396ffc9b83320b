// Small UTF-8 helpers for the German text indices (header-only, no dependencies): code points, a lower-case
// fold for ASCII and Latin-1 (Ä Ö Ü → ä ö ü; ß stays), and letter classes.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace chatbot_text {

// Decodes UTF-8; invalid bytes become U+FFFD (one per byte).
inline std::vector<char32_t> decode(const std::string &s) {
  std::vector<char32_t> out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    int n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (n == 0 || i + n > s.size()) {
      out.push_back(0xFFFD);
      ++i;
      continue;
    }
    char32_t cp = n == 1 ? c : n == 2 ? (c & 0x1F) : n == 3 ? (c & 0x0F) : (c & 0x07);
    bool ok = true;
    for (int k = 1; k < n; ++k) {
      unsigned char d = static_cast<unsigned char>(s[i + k]);
      if ((d >> 6) != 2) ok = false;
      cp = (cp << 6) | (d & 0x3F);
    }
    if (!ok) {
      out.push_back(0xFFFD);
      ++i;
      continue;
    }
    out.push_back(cp);
    i += n;
  }
  return out;
}

inline void append_utf8(std::string &out, char32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

inline char32_t lower(char32_t c) {
  if (c >= 'A' && c <= 'Z') return c + 32;
  if (c >= 0xC0 && c <= 0xDE && c != 0xD7) return c + 32;  // Latin-1 capitals: À..Þ (Ä Ö Ü included)
  if (c == 0x1E9E) return 0xDF;                           // capital ẞ
  return c;
}

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
