// The text library (evalgraph/text.hpp), UTF-8 and words: lowercasing, the tokenizer, trimming.
#include "evalgraph/text.hpp"
#include "evalgraph/utf8.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <initializer_list>
#include <span>

namespace evalgraph::text {

// ---- UTF-8 -------------------------------------------------------------------------------------------------

void append_utf8(std::string &out, char32_t cp) { utf8::append(out, static_cast<std::uint32_t>(cp)); }


std::size_t prev_cp_start(std::string_view s, std::size_t i) {
  std::size_t j = i - 1;
  int guard = 0;
  while (j > 0 && guard < 3 && (static_cast<unsigned char>(s[j]) & 0xC0) == 0x80) {
    --j;
    ++guard;
  }
  return j;
}


bool is_lower_letter(char32_t cp) {
  if (cp < 0x80) return cp >= 'a' && cp <= 'z';
  if (cp >= 0xDF && cp <= 0xFF) return cp != 0xF7;
  if (cp >= 0x100 && cp <= 0x17F) return lower_cp(cp) == cp;
  if (cp >= 0x3AC && cp <= 0x3CE) return true;
  if (cp >= 0x430 && cp <= 0x45F) return true;
  return false;
}


void to_lower_append(std::string_view s, std::string &out) {
  // Lowercasing never makes a text longer (every mapping keeps or shrinks the byte length), so the output is
  // written into space sized up front and trimmed at the end — no per-byte push_back.
  const std::size_t n = s.size(), base = out.size();
  out.resize(base + n);
  char *dst = out.data() + base;
  std::size_t i = 0, o = 0;
  while (i < n) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      dst[o++] = (c >= 'A' && c <= 'Z') ? static_cast<char>(c + 32) : static_cast<char>(c);
      ++i;
      continue;
    }
    Decoded d = decode(s, i);
    if (d.cp == 0xFFFD && d.len == 1) {
      dst[o++] = static_cast<char>(c);  // keep invalid bytes as they are
    } else {
      char32_t l = lower_cp(d.cp);
      if (l == d.cp) {
        for (int k = 0; k < d.len; ++k) dst[o++] = s[i + static_cast<std::size_t>(k)];
      } else {
        if (o + 4 > out.size() - base) {  // only if a future mapping lengthened a character
          out.resize(out.size() + 64);
          dst = out.data() + base;
        }
        o += put_utf8(dst + o, l);
      }
    }
    i += static_cast<std::size_t>(d.len);
  }
  out.resize(base + o);
}

std::string to_lower(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  to_lower_append(s, out);
  return out;
}

std::vector<std::string> tokenize(std::string_view text) {
  std::string low = to_lower(text);
  std::vector<std::string> out;
  for_each_token(low, [&](std::string_view t) { out.emplace_back(t); });
  return out;
}

void TokenizedText::assign(std::string_view text) {
  tokens.clear();
  lowered.resize(text.size() + 4);  // lower_tokens: lowercasing never lengthens a text, +4 for one code point
  const std::size_t n = lower_tokens(text, lowered.data(), [&](std::size_t b, std::size_t e) {
    tokens.push_back({static_cast<std::uint32_t>(b), static_cast<std::uint32_t>(e - b)});
  });
  lowered.resize(n);
}

std::string_view trim(std::string_view s) {
  auto sp = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; };
  std::size_t b = 0, e = s.size();
  while (b < e && sp(s[b])) ++b;
  while (e > b && sp(s[e - 1])) --e;
  return s.substr(b, e - b);
}

std::string_view utf8_prefix(std::string_view s, std::size_t max_bytes) {
  if (s.size() <= max_bytes) return s;
  std::size_t e = max_bytes;
  while (e > 0 && (static_cast<unsigned char>(s[e]) & 0xC0) == 0x80) --e;
  return s.substr(0, e);
}

}  // namespace evalgraph::text
