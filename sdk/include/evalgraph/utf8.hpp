// evalgraph plugin SDK — UTF-8 pieces shared by the input reader and the output builder (header-only, C++17).
#ifndef EVALGRAPH_UTF8_HPP
#define EVALGRAPH_UTF8_HPP

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace evalgraph::utf8 {

// Length of the well-formed UTF-8 sequence at s[i] (a lead byte >= 0x80), 0 if it is not one: the ranges of
// RFC 3629 (no overlong forms, no surrogates, nothing above U+10FFFF), as nlohmann::json's parser checks them.
inline std::size_t sequence_length(std::string_view s, std::size_t i) {
  auto at = [&](std::size_t k) { return i + k < s.size() ? static_cast<unsigned char>(s[i + k]) : 0u; };
  auto in = [](unsigned v, unsigned lo, unsigned hi) { return v >= lo && v <= hi; };
  const unsigned c = at(0);
  if (in(c, 0xC2, 0xDF)) return in(at(1), 0x80, 0xBF) ? 2 : 0;
  if (c == 0xE0) return in(at(1), 0xA0, 0xBF) && in(at(2), 0x80, 0xBF) ? 3 : 0;
  if (in(c, 0xE1, 0xEC) || c == 0xEE || c == 0xEF) return in(at(1), 0x80, 0xBF) && in(at(2), 0x80, 0xBF) ? 3 : 0;
  if (c == 0xED) return in(at(1), 0x80, 0x9F) && in(at(2), 0x80, 0xBF) ? 3 : 0;
  if (c == 0xF0) return in(at(1), 0x90, 0xBF) && in(at(2), 0x80, 0xBF) && in(at(3), 0x80, 0xBF) ? 4 : 0;
  if (in(c, 0xF1, 0xF3)) return in(at(1), 0x80, 0xBF) && in(at(2), 0x80, 0xBF) && in(at(3), 0x80, 0xBF) ? 4 : 0;
  if (c == 0xF4) return in(at(1), 0x80, 0x8F) && in(at(2), 0x80, 0xBF) && in(at(3), 0x80, 0xBF) ? 4 : 0;
  return 0;
}

// The offset of the first byte of `s` that is not part of well-formed UTF-8 (sequence_length), npos when all of
// it is: the one UTF-8 validator of the host and the plugins (the JSON scanner, json_scan.hpp, checks strings so).
inline std::size_t first_invalid(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    if (static_cast<unsigned char>(s[i]) < 0x80) {
      ++i;
      continue;
    }
    const std::size_t n = sequence_length(s, i);
    if (n == 0) return i;
    i += n;
  }
  return std::string_view::npos;
}

// Appends code point cp (<= U+10FFFF, not a surrogate) as UTF-8.
inline void append(std::string &out, std::uint32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

// For the 8 bytes at p: the high bit of each byte that may be '"', '\\', a control character (< 0x20) or not
// ASCII (>= 0x80), 0 if none is (the classic "has a zero byte" bit tricks: exact as a yes/no answer; bytes
// above a true hit may be flagged falsely, the lowest flagged byte never is). What a JSON string scanner or
// writer can skip eight at a time.
inline std::uint64_t json_special8(const char *p) {
  std::uint64_t w;
  std::memcpy(&w, p, 8);
  constexpr std::uint64_t ones = 0x0101010101010101ULL, high = 0x8080808080808080ULL;
  const std::uint64_t q = w ^ (ones * '"'), b = w ^ (ones * '\\');
  return (((q - ones) & ~q) | ((b - ones) & ~b) | ((w - ones * 0x20) & ~w) | w) & high;
}

// The value of one hex digit, -1 when c is none.
inline int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The four hex digits of a \uXXXX escape at s[i..i+4) into cp; false when they are not there.
inline bool read_hex4(std::string_view s, std::size_t i, std::uint32_t &cp) {
  if (i + 4 > s.size()) return false;
  cp = 0;
  for (std::size_t k = i; k < i + 4; ++k) {
    const int d = hex_digit(s[k]);
    if (d < 0) return false;
    cp = (cp << 4) | static_cast<std::uint32_t>(d);
  }
  return true;
}

// What a JSON escape \c in a string stands for: the character of \" \\ \/ \b \f \n \r \t, 'u' for \uXXXX
// (the caller reads the four hex digits and any low surrogate after them), 0 where \c is no JSON escape.
inline char json_unescape(char c) {
  switch (c) {
    case '"': return '"';
    case '\\': return '\\';
    case '/': return '/';
    case 'b': return '\b';
    case 'f': return '\f';
    case 'n': return '\n';
    case 'r': return '\r';
    case 't': return '\t';
    case 'u': return 'u';
    default: return 0;
  }
}

// Appends the JSON escape of byte c, one a JSON string cannot hold as it is ('"', '\\' or a control character
// below 0x20): \" \\ \b \f \n \r \t, the others as \u00XX (lower-case hex, as nlohmann::json writes them). What
// every JSON string writer shares; the runs of plain bytes between such bytes are the writer's to copy.
inline void append_json_escape(std::string &out, unsigned char c) {
  switch (c) {
    case '"': out.append("\\\"", 2); break;
    case '\\': out.append("\\\\", 2); break;
    case '\b': out.append("\\b", 2); break;
    case '\f': out.append("\\f", 2); break;
    case '\n': out.append("\\n", 2); break;
    case '\r': out.append("\\r", 2); break;
    case '\t': out.append("\\t", 2); break;
    default: {
      static constexpr char kHex[] = "0123456789abcdef";
      const char u[6] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 15]};
      out.append(u, 6);
    }
  }
}

}  // namespace evalgraph::utf8

#endif  // EVALGRAPH_UTF8_HPP
