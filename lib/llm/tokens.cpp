// Token counting: see tokens.h and docs/cost.md.
//
// Both encodings first split a text into pieces with a regular expression (their `pat_str`), then merge each
// piece's bytes by rank. The split is hand-written here (no regex engine: the patterns need Unicode classes
// and a lookahead); the classes come from `classify()`, a compact table: ASCII exactly, the Latin, Greek,
// Cyrillic and Armenian blocks with their case, the common punctuation, symbol, space and emoji blocks as
// such, every other code point as a letter without case (Lo). Text in scripts where that table is coarse can
// split differently from the real encoding; bench/tokens/measure.sh counts how often.
#include "llm/tokens.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

namespace evalgraph::llm {
namespace {

// Character classes of the split patterns.
enum Cls : std::uint8_t {
  C_UPPER,  // Lu, Lt
  C_LOWER,  // Ll
  C_OTHER_LETTER,  // Lm, Lo: both "upper-ish" and "lower-ish" in o200k
  C_MARK,   // M: not a letter, but in both of o200k's letter classes
  C_NUMBER,
  C_NEWLINE,  // \r \n
  C_SPACE,    // other white space
  C_PUNCT     // everything else
};

struct Char {
  Cls cls;
  std::uint8_t len;  // bytes
};

constexpr Cls classify_ascii(std::uint32_t c) {
  if (c >= 'a' && c <= 'z') return C_LOWER;
  if (c >= 'A' && c <= 'Z') return C_UPPER;
  if (c >= '0' && c <= '9') return C_NUMBER;
  if (c == '\n' || c == '\r') return C_NEWLINE;
  if (c == ' ' || c == '\t' || c == '\v' || c == '\f') return C_SPACE;
  return C_PUNCT;
}

// classify_ascii of every ASCII byte (decode's fast path).
constexpr std::array<Cls, 128> kAsciiCls = [] {
  std::array<Cls, 128> t{};
  for (std::uint32_t c = 0; c < 128; ++c) t[c] = classify_ascii(c);
  return t;
}();

Cls classify(std::uint32_t c) {
  if (c < 0x80) return kAsciiCls[c];
  if (c == 0x85 || c == 0x2028 || c == 0x2029) return C_SPACE;  // \s, not [\r\n]
  if (c == 0xA0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x202F || c == 0x205F || c == 0x3000) return C_SPACE;
  if (c < 0xC0) {
    if (c == 0xAA || c == 0xBA) return C_OTHER_LETTER;
    if (c == 0xB5) return C_LOWER;
    if (c == 0xB2 || c == 0xB3 || c == 0xB9 || (c >= 0xBC && c <= 0xBE)) return C_NUMBER;
    return C_PUNCT;
  }
  if (c <= 0xFF) {
    if (c == 0xD7 || c == 0xF7) return C_PUNCT;
    return c <= 0xDE ? C_UPPER : C_LOWER;
  }
  if (c <= 0x17F) return (c & 1) == 0 ? C_UPPER : C_LOWER;  // Latin Extended-A: mostly upper/lower pairs
  if (c <= 0x24F) return C_LOWER;                           // Latin Extended-B (mixed; lower is the common case)
  if (c <= 0x2AF) return C_LOWER;                           // IPA
  if (c <= 0x2FF) return C_OTHER_LETTER;                    // modifier letters
  if (c <= 0x36F) return C_MARK;                            // combining diacritics
  if (c <= 0x3FF) {                                         // Greek
    if (c >= 0x391 && c <= 0x3AB) return C_UPPER;
    if (c >= 0x3AC && c <= 0x3CE) return C_LOWER;
    if (c == 0x37E || c == 0x387) return C_PUNCT;
    return C_LOWER;
  }
  if (c <= 0x52F) {  // Cyrillic
    if (c <= 0x42F) return C_UPPER;
    if (c <= 0x45F) return C_LOWER;
    if (c >= 0x483 && c <= 0x489) return C_MARK;
    return (c & 1) == 0 ? C_UPPER : C_LOWER;
  }
  if (c <= 0x58F) {  // Armenian
    if (c >= 0x531 && c <= 0x556) return C_UPPER;
    if (c >= 0x561 && c <= 0x587) return C_LOWER;
    return C_PUNCT;
  }
  if (c >= 0x591 && c <= 0x5C7) return C_MARK;  // Hebrew points
  if (c >= 0x610 && c <= 0x61A) return C_MARK;
  if (c >= 0x64B && c <= 0x65F) return C_MARK;  // Arabic harakat
  if (c >= 0x660 && c <= 0x669) return C_NUMBER;
  if (c == 0x60C || c == 0x61B || c == 0x61F || c == 0x6D4) return C_PUNCT;
  if (c >= 0x900 && c <= 0xDFF) {  // Indic: vowel signs and viramas are marks, digits are numbers
    const std::uint32_t o = c & 0x7F;
    if ((o >= 0x66 && o <= 0x6F)) return C_NUMBER;
    if (o <= 0x03 || (o >= 0x3A && o <= 0x4F) || (o >= 0x51 && o <= 0x57) || o == 0x62 || o == 0x63) return C_MARK;
    if (o == 0x64 || o == 0x65) return C_PUNCT;
    return C_OTHER_LETTER;
  }
  if (c >= 0x1E00 && c <= 0x1EFF) return (c & 1) == 0 ? C_UPPER : C_LOWER;  // Latin Extended Additional
  if (c >= 0x1F00 && c <= 0x1FFF) return C_LOWER;                           // Greek Extended
  if (c >= 0x2000 && c <= 0x206F) return C_PUNCT;                           // General Punctuation
  if (c >= 0x2070 && c <= 0x209F) return C_NUMBER;                          // super/subscripts
  if (c >= 0x20A0 && c <= 0x2BFF) {                                         // currency, letterlike, arrows, math, ...
    if (c >= 0x2160 && c <= 0x2188) return C_NUMBER;                        // Roman numerals (Nl)
    if (c >= 0x2460 && c <= 0x24FF) return C_NUMBER;                        // enclosed numbers
    return C_PUNCT;
  }
  if (c >= 0x2C00 && c <= 0x2DFF) return C_LOWER;
  if (c >= 0x2E00 && c <= 0x2E7F) return C_PUNCT;
  if (c >= 0x3001 && c <= 0x3004) return C_PUNCT;  // CJK punctuation (0x3005-0x3007 are letters/numbers)
  if (c >= 0x3008 && c <= 0x3020) return C_PUNCT;
  if (c == 0x3030 || c == 0x303D || c == 0x30FB) return C_PUNCT;
  if (c >= 0x3099 && c <= 0x309A) return C_MARK;
  if (c >= 0xFE00 && c <= 0xFE0F) return C_MARK;  // variation selectors
  if (c >= 0xFE10 && c <= 0xFE6F) return C_PUNCT;
  if (c >= 0xFF01 && c <= 0xFF0F) return C_PUNCT;  // full-width ASCII
  if (c >= 0xFF10 && c <= 0xFF19) return C_NUMBER;
  if (c >= 0xFF1A && c <= 0xFF20) return C_PUNCT;
  if (c >= 0xFF21 && c <= 0xFF3A) return C_UPPER;
  if (c >= 0xFF3B && c <= 0xFF40) return C_PUNCT;
  if (c >= 0xFF41 && c <= 0xFF5A) return C_LOWER;
  if (c >= 0xFF5B && c <= 0xFF65) return C_PUNCT;
  if (c >= 0xFFF0 && c <= 0xFFFF) return C_PUNCT;
  if (c >= 0x1F000 && c <= 0x1FAFF) return C_PUNCT;  // emoji, symbols
  if (c >= 0xE0000) return C_MARK;                   // tags, variation selectors supplement
  if (c >= 0xE000 && c <= 0xF8FF) return C_PUNCT;    // private use (Co)
  return C_OTHER_LETTER;
}

// Decodes the text into classes (one per code point; an invalid byte is one PUNCT character of one byte).
void decode(std::string_view s, std::vector<Char>& out) {
  out.clear();
  out.reserve(s.size());
  std::size_t i = 0;
  while (i < s.size()) {
    auto b = static_cast<unsigned char>(s[i]);
    if (b < 0x80) {  // ASCII (most of most prompts): the table
      out.push_back({kAsciiCls[b], 1});
      ++i;
      continue;
    }
    std::uint32_t c = b;
    std::uint8_t n = 1;
    if (b >= 0xC0) {
      n = b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : 2;
      if (i + n > s.size()) n = 1;
      else {
        c = b & (0xFF >> (n + 1));
        for (std::uint8_t k = 1; k < n; ++k) {
          auto cb = static_cast<unsigned char>(s[i + k]);
          if ((cb & 0xC0) != 0x80) {
            n = 1;
            c = b;
            break;
          }
          c = (c << 6) | (cb & 0x3F);
        }
        if (n == 1) c = 0xFFFF;  // an invalid sequence: a lone byte, punctuation
      }
    } else if (b >= 0x80) {
      c = 0xFFFF;
    }
    out.push_back({classify(c), n});
    i += n;
  }
}

bool is_letter(Cls c) { return c == C_UPPER || c == C_LOWER || c == C_OTHER_LETTER; }
bool is_ws(Cls c) { return c == C_NEWLINE || c == C_SPACE; }
bool upperish(Cls c) { return c == C_UPPER || c == C_OTHER_LETTER || c == C_MARK; }
bool lowerish(Cls c) { return c == C_LOWER || c == C_OTHER_LETTER || c == C_MARK; }
// [^\s\p{L}\p{N}]
bool other(Cls c) { return !is_ws(c) && !is_letter(c) && c != C_NUMBER; }

// The length in characters of a contraction ('s 't 're 've 'm 'll 'd, any case) at character i, or 0.
std::size_t contraction(std::string_view s, const std::vector<std::size_t>& off, std::size_t i, std::size_t n) {
  if (i >= n || s[off[i]] != '\'') return 0;
  auto low = [&](std::size_t k) -> char {
    if (k >= n) return 0;
    char ch = s[off[k]];
    return (ch >= 'A' && ch <= 'Z') ? static_cast<char>(ch + 32) : ch;
  };
  char a = low(i + 1), b = low(i + 2);
  if (a == 's' || a == 't' || a == 'm' || a == 'd') return 2;
  if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) return 3;
  return 0;
}

// The pattern's alternatives, each at character i of `s` (its characters in `cs`, their byte offsets in `off`,
// n characters): the end of the piece it matches (exclusive, in characters), or 0 when it does not match.

// cl100k: '(?i:s|t|re|ve|m|ll|d) or [^\r\n\p{L}\p{N}]?\p{L}+
std::size_t cl100k_word(std::string_view s, const std::vector<Char>& cs, const std::vector<std::size_t>& off,
                        std::size_t i, std::size_t n) {
  if (std::size_t k = contraction(s, off, i, n)) return i + k;
  const Cls c0 = cs[i].cls;
  std::size_t j = i;
  if (!is_letter(c0) && c0 != C_NEWLINE && c0 != C_NUMBER) ++j;
  if (j >= n || !is_letter(cs[j].cls)) return 0;
  while (j < n && is_letter(cs[j].cls)) ++j;
  return j;
}

// o200k's letters from j: the end of U*L+ (else U+L*), or 0  (U: Lu Lt Lm Lo M; L: Ll Lm Lo M)
std::size_t o200k_letters_from(const std::vector<Char>& cs, std::size_t j, std::size_t n) {
  std::size_t u = j;
  while (u < n && upperish(cs[u].cls)) ++u;
  std::size_t e = 0;
  if (u < n && lowerish(cs[u].cls)) {
    e = u;
    while (e < n && lowerish(cs[e].cls)) ++e;
  } else {
    // U* gives characters back until L+ can start: L+ then ends after the last lower-ish one
    for (std::size_t b = u; b > j && !e; --b)
      if (lowerish(cs[b - 1].cls)) e = b;
    if (!e && u > j) e = u;  // U+L* with an empty L*
  }
  return e;
}

// o200k: [^\r\n\p{L}\p{N}]?(U*L+|U+L*)(contraction)?
std::size_t o200k_word(std::string_view s, const std::vector<Char>& cs, const std::vector<std::size_t>& off,
                       std::size_t i, std::size_t n) {
  const Cls c0 = cs[i].cls;
  std::size_t e = 0;
  if (!is_letter(c0) && c0 != C_NEWLINE && c0 != C_NUMBER && i + 1 < n) e = o200k_letters_from(cs, i + 1, n);
  if (!e) e = o200k_letters_from(cs, i, n);
  return e ? e + contraction(s, off, e, n) : 0;
}

// \p{N}{1,3}
std::size_t digits(const std::vector<Char>& cs, std::size_t i, std::size_t n) {
  if (cs[i].cls != C_NUMBER) return 0;
  std::size_t j = i;
  while (j < n && j < i + 3 && cs[j].cls == C_NUMBER) ++j;
  return j;
}

// ' ?[^\s\p{L}\p{N}]+[\r\n]*'  (o200k: [\r\n/]*)
std::size_t punctuation(std::string_view s, const std::vector<Char>& cs, const std::vector<std::size_t>& off,
                        std::size_t i, std::size_t n, bool o200k) {
  std::size_t j = i;
  if (s[off[i]] == ' ' && i + 1 < n && other(cs[i + 1].cls)) ++j;
  if (!other(cs[j].cls)) return 0;
  while (j < n && other(cs[j].cls)) ++j;
  while (j < n && (cs[j].cls == C_NEWLINE || (o200k && s[off[j]] == '/'))) ++j;
  return j;
}

// \s*[\r\n]+ | \s+(?!\S) | \s+
std::size_t white_space(const std::vector<Char>& cs, std::size_t i, std::size_t n) {
  if (!is_ws(cs[i].cls)) return 0;
  std::size_t r = i;
  while (r < n && is_ws(cs[r].cls)) ++r;  // the white-space run [i, r)
  std::size_t last_nl = r;
  for (std::size_t k = r; k > i; --k)
    if (cs[k - 1].cls == C_NEWLINE) {
      last_nl = k;
      break;
    }
  if (last_nl != r || (r > i && cs[r - 1].cls == C_NEWLINE)) return last_nl;  // \s*[\r\n]+
  if (r == n) return r;                                                       // \s+(?!\S) at the end
  if (r - i >= 2) return r - 1;                                               // \s+(?!\S): leave one for the next piece
  return r;                                                                   // \s+
}

// Splits `s` the way the encoding's pattern does; calls f(first, end) for each piece: its characters in `cs`
// (its bytes from off[first] to off[end]).
template <class F>
void split(std::string_view s, TokenCounter::Encoding enc, std::vector<Char>& cs, std::vector<std::size_t>& off, F&& f) {
  decode(s, cs);
  const std::size_t n = cs.size();
  off.resize(n + 1);
  std::size_t o = 0;
  for (std::size_t i = 0; i < n; ++i) {
    off[i] = o;
    o += cs[i].len;
  }
  off[n] = o;
  const bool o200k = enc == TokenCounter::Encoding::o200k_base;
  std::size_t i = 0;
  while (i < n) {  // the alternatives in the pattern's order; the first that matches gives the piece
    std::size_t end = o200k ? o200k_word(s, cs, off, i, n) : cl100k_word(s, cs, off, i, n);
    if (!end) end = digits(cs, i, n);
    if (!end) end = punctuation(s, cs, off, i, n, o200k);
    if (!end) end = white_space(cs, i, n);
    if (!end) end = i + 1;  // (not reached: every character is in one of the classes above)
    f(i, end);  // the piece: characters [i, end), bytes [off[i], off[end])
    i = end;
  }
}

// The approximation of one piece's token count, as an expected value (summed, then rounded): per piece kind,
// the mean tokens per piece of the real encodings on bench/tokens' corpus (measure.sh prints the error).
double approx_piece(const std::vector<Char>& cs, std::size_t first, std::size_t last, TokenCounter::Encoding enc) {
  const bool o200k = enc == TokenCounter::Encoding::o200k_base;
  std::size_t ascii_letters = 0, two_byte = 0, wide = 0, others = 0, bytes = 0;
  for (std::size_t k = first; k < last; ++k) {
    const Char& c = cs[k];
    bytes += c.len;
    if (is_letter(c.cls) || c.cls == C_MARK) {
      if (c.len == 1) ++ascii_letters;
      else if (c.len == 2) ++two_byte;
      else ++wide;
    } else {
      ++others;
    }
  }
  if (ascii_letters + two_byte + wide == 0) {
    if (cs[first].cls == C_NUMBER || is_ws(cs[first].cls)) return 1;
    if (others <= 2) return 1;
    if (others == 3) return 1.18;
    // a run of one character (----, ====, ....): the encodings hold long runs as single tokens
    bool run = true;
    for (std::size_t k = first + 1; k < last && run; ++k) run = cs[k].len == 1 && cs[k].cls == cs[first].cls;
    if (run && last - first > 3) return 1.0 + static_cast<double>(last - first) / 32.0;
    return 0.42 * static_cast<double>(bytes) * (others > 5 ? 1.15 : 1.0);
  }
  // ASCII words: mean tokens by letters (1..13), then letters / 4.4 (cl100k) or / 5.4 (o200k)
  static const double cl[] = {0, 1.0, 1.004, 1.041, 1.045, 1.155, 1.147, 1.215, 1.415, 1.67, 1.86, 1.852, 2.342, 2.762};
  static const double o2[] = {0, 1.002, 1.004, 1.036, 1.037, 1.143, 1.109, 1.162, 1.319, 1.51, 1.681, 1.631, 1.954, 2.084};
  double t = 0;
  if (ascii_letters > 0)
    t += ascii_letters < 14 ? (o200k ? o2 : cl)[ascii_letters] : static_cast<double>(ascii_letters) / (o200k ? 5.4 : 4.4);
  const bool mixed = ascii_letters > 0 && (two_byte > 0 || wide > 0);
  t += static_cast<double>(two_byte) / (o200k ? 4.4 : 2.86) * (mixed ? (o200k ? 0.8 : 1.1) : 1.0);  // Cyrillic, Greek, accented Latin, ...
  t += static_cast<double>(wide) * (o200k ? 0.9 : 1.2);                                             // CJK, Indic, Thai, ...
  return std::max(1.0, t);
}

std::string base64_decode(std::string_view in, bool& ok) {
  static const auto table = [] {
    std::array<int, 256> t{};
    t.fill(-1);
    const char* a = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for (int i = 0; i < 64; ++i) t[static_cast<unsigned char>(a[i])] = i;
    return t;
  }();
  std::string out;
  int val = 0, bits = -8;
  ok = true;
  for (char ch : in) {
    if (ch == '=') break;
    int d = table[static_cast<unsigned char>(ch)];
    if (d < 0) {
      ok = false;
      return out;
    }
    val = (val << 6) | d;
    bits += 6;
    if (bits >= 0) {
      out.push_back(static_cast<char>((val >> bits) & 0xFF));
      bits -= 8;
    }
  }
  return out;
}

thread_local std::vector<Char> t_chars;
thread_local std::vector<std::size_t> t_off;

}  // namespace

TokenCounter::TokenCounter(Encoding enc) : enc_(enc) {
  static std::atomic<std::uint64_t> next{1};
  memo_id_ = next.fetch_add(1);
}

std::shared_ptr<const TokenCounter> TokenCounter::approximate(Encoding enc) {
  static const auto cl = std::shared_ptr<const TokenCounter>(new TokenCounter(Encoding::cl100k_base));
  static const auto o2 = std::shared_ptr<const TokenCounter>(new TokenCounter(Encoding::o200k_base));
  return enc == Encoding::o200k_base ? o2 : cl;
}

std::shared_ptr<const TokenCounter> TokenCounter::from_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(fmt::format("{}: cannot read the token encoding file", path));
  std::vector<std::pair<std::string, std::uint32_t>> items;
  std::string line;
  std::size_t line_no = 0, total = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    auto sp = line.find(' ');
    bool ok = sp != std::string::npos && sp > 0;
    std::string tok = ok ? base64_decode(std::string_view(line).substr(0, sp), ok) : std::string();
    char* end = nullptr;
    unsigned long rank = ok ? std::strtoul(line.c_str() + sp + 1, &end, 10) : 0;
    if (!ok || end == line.c_str() + sp + 1 || *end != '\0' || tok.empty())
      throw std::runtime_error(fmt::format("{}:{}: not a .tiktoken line (expected '<base64 token> <rank>')", path, line_no));
    total += tok.size();
    items.emplace_back(std::move(tok), static_cast<std::uint32_t>(rank));
  }
  if (items.size() < 256)
    throw std::runtime_error(fmt::format("{}: {} ranks; a .tiktoken encoding has at least the 256 single bytes", path, items.size()));
  Encoding enc = Encoding::cl100k_base;
  const std::string base = path.substr(path.find_last_of('/') + 1);
  if (base.find("o200k") != std::string::npos) enc = Encoding::o200k_base;
  else if (base.find("cl100k") == std::string::npos && items.size() > 150000) enc = Encoding::o200k_base;
  auto tc = std::shared_ptr<TokenCounter>(new TokenCounter(enc));
  tc->file_ = path;
  tc->storage_.reserve(total);
  for (const auto& [tok, rank] : items) tc->storage_ += tok;
  tc->ranks_.reserve(items.size() * 2);
  std::size_t pos = 0;
  for (const auto& [tok, rank] : items) {
    tc->ranks_.emplace(std::string_view(tc->storage_).substr(pos, tok.size()), rank);
    pos += tok.size();
  }
  return tc;
}

std::shared_ptr<const TokenCounter> TokenCounter::from_environment() {
  const char* f = std::getenv("EVALGRAPH_TIKTOKEN_FILE");
  if (f == nullptr || *f == '\0') return approximate();
  try {
    return from_file(f);
  } catch (const std::exception &e) {
    throw std::runtime_error(fmt::format("EVALGRAPH_TIKTOKEN_FILE: {}; point it at a cl100k_base or o200k_base "
                                         ".tiktoken file (docs/cost.md#token-counts) or unset it", e.what()));
  }
}

std::string TokenCounter::describe() const {
  const char* name = enc_ == Encoding::o200k_base ? "o200k_base" : "cl100k_base";
  if (exact()) return fmt::format("{} (exact, {})", name, file_);
  return fmt::format("approximate ({} split; set EVALGRAPH_TIKTOKEN_FILE for exact counts)", name);
}

nlohmann::json TokenCounter::approximation_error() const {
  if (exact()) return nullptr;
  // Measured by bench/tokens/measure.sh (see docs/cost.md for the corpus and the command).
  if (enc_ == Encoding::o200k_base)
    return {{"mean_abs_pct", 7.9}, {"p95_abs_pct", 25.0}, {"total_pct", -1.4}, {"corpus", "bench/tokens: 1,796 texts, 370 kB"}};
  return {{"mean_abs_pct", 10.4}, {"p95_abs_pct", 30.0}, {"total_pct", -1.5}, {"corpus", "bench/tokens: 1,796 texts, 370 kB"}};
}

namespace {
// The exact counter's recent pieces and their token counts, per thread: a direct-mapped table small enough to
// stay in the CPU's cache, in front of the ranks' hash table (whose 100,000-200,000 entries do not). A slot
// holds one piece of at most kMemoBytes bytes, compared byte for byte, so a hit is the count BPE gives.
constexpr std::size_t kMemoBytes = 22, kMemoSlots = 4096;
struct MemoSlot {
  std::uint64_t owner = 0;  // the memo_id_ of the TokenCounter (its ranks) the count is for
  std::uint8_t len = 0;
  char bytes[kMemoBytes] = {};
  std::uint32_t tokens = 0;
};
thread_local std::vector<MemoSlot> t_memo;

std::size_t memo_hash(std::string_view p) {
  std::uint64_t h = 1469598103934665603ULL;  // FNV-1a
  for (char c : p) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
  return static_cast<std::size_t>(h ^ (h >> 29)) & (kMemoSlots - 1);
}
}  // namespace

std::size_t TokenCounter::piece_tokens(std::string_view piece) const {
  MemoSlot *slot = nullptr;
  if (piece.size() <= kMemoBytes) {
    if (t_memo.empty()) t_memo.resize(kMemoSlots);
    slot = &t_memo[memo_hash(piece)];
    if (slot->owner == memo_id_ && slot->len == piece.size() && std::memcmp(slot->bytes, piece.data(), piece.size()) == 0)
      return slot->tokens;
  }
  const std::size_t n = piece_tokens_bpe(piece);
  if (slot != nullptr) {
    slot->owner = memo_id_;
    slot->len = static_cast<std::uint8_t>(piece.size());
    std::memcpy(slot->bytes, piece.data(), piece.size());
    slot->tokens = static_cast<std::uint32_t>(n);
  }
  return n;
}

std::size_t TokenCounter::piece_tokens_bpe(std::string_view piece) const {
  if (auto it = ranks_.find(piece); it != ranks_.end()) return 1;
  // Byte-pair merges: join the adjacent pair of lowest rank until no pair is in the ranks.
  const std::size_t n = piece.size();
  std::vector<std::size_t> start(n + 1);
  for (std::size_t i = 0; i <= n; ++i) start[i] = i;
  constexpr std::uint32_t kNone = 0xFFFFFFFF;
  auto rank_of = [&](std::size_t a, std::size_t b) -> std::uint32_t {  // parts a and b=a+1 joined
    if (b + 1 >= start.size()) return kNone;
    auto it = ranks_.find(piece.substr(start[a], start[b + 1] - start[a]));
    return it == ranks_.end() ? kNone : it->second;
  };
  std::vector<std::uint32_t> rk(start.size() - 1);
  for (std::size_t i = 0; i + 1 < rk.size(); ++i) rk[i] = rank_of(i, i + 1);
  if (!rk.empty()) rk.back() = kNone;
  while (rk.size() > 1) {
    std::size_t best = 0;
    for (std::size_t i = 1; i < rk.size(); ++i)
      if (rk[i] < rk[best]) best = i;
    if (rk[best] == kNone) break;
    start.erase(start.begin() + static_cast<std::ptrdiff_t>(best) + 1);
    rk.erase(rk.begin() + static_cast<std::ptrdiff_t>(best) + 1);
    rk[best] = rank_of(best, best + 1);
    if (best > 0) rk[best - 1] = rank_of(best - 1, best);
  }
  return start.size() - 1;
}

std::vector<std::string> TokenCounter::pieces(std::string_view text, Encoding enc) {
  std::vector<std::string> out;
  split(text, enc, t_chars, t_off, [&](std::size_t i, std::size_t end) { out.emplace_back(text.substr(t_off[i], t_off[end] - t_off[i])); });
  return out;
}

std::size_t TokenCounter::count(std::string_view text) const {
  if (text.empty()) return 0;
  std::size_t total = 0;
  auto& cs = t_chars;
  auto& off = t_off;
  if (exact()) {
    split(text, enc_, cs, off, [&](std::size_t i, std::size_t end) { total += piece_tokens(text.substr(off[i], off[end] - off[i])); });
  } else {
    double sum = 0;
    split(text, enc_, cs, off, [&](std::size_t i, std::size_t end) { sum += approx_piece(cs, i, end, enc_); });
    total = static_cast<std::size_t>(std::llround(sum));
  }
  return total;
}

namespace {
std::size_t content_tokens(const TokenCounter& tc, const nlohmann::json& content) {
  if (content.is_string()) return tc.count(content.get_ref<const std::string&>());
  std::size_t n = 0;
  if (content.is_array())
    for (const auto& part : content) {
      if (part.is_object() && part.contains("text") && part["text"].is_string()) n += tc.count(part["text"].get_ref<const std::string&>());
      else if (part.is_string()) n += tc.count(part.get_ref<const std::string&>());
    }
  return n;
}
}  // namespace

std::size_t TokenCounter::chat_prompt_tokens(const nlohmann::json& body) const {
  std::size_t n = 3;  // every reply is primed with <|start|>assistant<|message|>
  if (auto m = body.find("messages"); m != body.end() && m->is_array())
    for (const auto& msg : *m) {
      n += 3;
      if (!msg.is_object()) continue;
      for (const auto& [k, v] : msg.items()) {
        if (k == "content") n += content_tokens(*this, v);
        else if (v.is_string()) n += count(v.get_ref<const std::string&>()) + (k == "name" ? 1 : 0);
        else if (!v.is_null()) n += count(v.dump());
      }
    }
  for (const char* k : {"tools", "functions", "response_format"})
    if (auto t = body.find(k); t != body.end() && !t->is_null()) n += count(t->dump());
  return n;
}

std::size_t TokenCounter::completion_tokens(const nlohmann::json& response) const {
  std::size_t n = 0;
  if (auto c = response.find("choices"); c != response.end() && c->is_array())
    for (const auto& ch : *c) {
      if (!ch.is_object()) continue;
      auto m = ch.find("message");
      if (m == ch.end() || !m->is_object()) continue;
      if (auto ct = m->find("content"); ct != m->end()) n += content_tokens(*this, *ct);
      if (auto tc = m->find("tool_calls"); tc != m->end() && !tc->is_null()) n += count(tc->dump());
    }
  return n;
}

std::size_t TokenCounter::embedding_tokens(const nlohmann::json& body) const {
  std::size_t n = 0;
  if (auto in = body.find("input"); in != body.end()) {
    if (in->is_string()) n += count(in->get_ref<const std::string&>());
    else if (in->is_array())
      for (const auto& t : *in)
        if (t.is_string()) n += count(t.get_ref<const std::string&>());
  }
  return n;
}

}  // namespace evalgraph::llm
