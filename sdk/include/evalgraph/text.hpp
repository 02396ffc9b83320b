// evalgraph::text — the one text library of engine and plugins: UTF-8 decoding and lowercasing, tokenising,
// markdown-aware line, paragraph, sentence and claim splitting. The engine's TF-IDF embedder and the plugins
// (KSODI operators, readability, compression probes …) use it; link the CMake target evalgraph::text.
//
// Everything here is a hand-written scanner (no std::regex: it is far too slow for the per-record hot path)
// and works on UTF-8 text. Views returned by these functions point into the caller's text.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace evalgraph::text {

// ---- UTF-8 -------------------------------------------------------------------------------------------------
struct Decoded {
  char32_t cp;  // U+FFFD for an invalid byte
  int len;      // bytes consumed (>= 1)
};
inline Decoded decode(std::string_view s, std::size_t i) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char c = b(i);
  if (c < 0x80) return {c, 1};
  int len = 0;
  char32_t cp = 0;
  if ((c & 0xE0) == 0xC0) {
    len = 2;
    cp = c & 0x1F;
  } else if ((c & 0xF0) == 0xE0) {
    len = 3;
    cp = c & 0x0F;
  } else if ((c & 0xF8) == 0xF0) {
    len = 4;
    cp = c & 0x07;
  } else {
    return {0xFFFD, 1};
  }
  if (i + static_cast<std::size_t>(len) > s.size()) return {0xFFFD, 1};
  for (int k = 1; k < len; ++k) {
    unsigned char cc = b(i + static_cast<std::size_t>(k));
    if ((cc & 0xC0) != 0x80) return {0xFFFD, 1};
    cp = (cp << 6) | (cc & 0x3F);
  }
  return {cp, len};
}

void append_utf8(std::string &out, char32_t cp);
// Start of the code point that ends right before byte position i (i > 0).
std::size_t prev_cp_start(std::string_view s, std::size_t i);

// Lowercase mapping for ASCII, Latin-1 supplement (Ä Ö Ü → ä ö ü, …), Latin Extended-A, capital sharp s
// (ẞ → ß), basic Greek and Cyrillic. Other code points map to themselves.
inline char32_t lower_cp(char32_t cp) {
  if (cp < 0x80) return (cp >= 'A' && cp <= 'Z') ? cp + 32 : cp;
  if (cp >= 0xC0 && cp <= 0xDE && cp != 0xD7) return cp + 0x20;
  if (cp >= 0x100 && cp <= 0x17F) {
    if (cp == 0x130) return U'i';
    if (cp == 0x178) return 0xFF;
    if ((cp <= 0x12F || (cp >= 0x132 && cp <= 0x137) || (cp >= 0x14A && cp <= 0x177)) && cp % 2 == 0) return cp + 1;
    if (((cp >= 0x139 && cp <= 0x148) || (cp >= 0x179 && cp <= 0x17E)) && cp % 2 == 1) return cp + 1;
    return cp;
  }
  if (cp == 0x1E9E) return 0xDF;                                    // ẞ → ß
  if (cp >= 0x391 && cp <= 0x3A9 && cp != 0x3A2) return cp + 0x20;  // Greek capitals
  if (cp >= 0x410 && cp <= 0x42F) return cp + 0x20;                 // Cyrillic А..Я
  if (cp >= 0x400 && cp <= 0x40F) return cp + 0x50;                 // Cyrillic Ѐ..Џ
  return cp;
}
// Letters and digits: ASCII alnum, Latin-1/Extended-A letters, and any other code point outside the
// punctuation/symbol blocks (so Greek, Cyrillic, CJK … count as word characters).
inline bool is_word_cp(char32_t cp) {
  if (cp < 0x80) return (cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z') || (cp >= '0' && cp <= '9');
  if (cp < 0xC0) return false;                 // Latin-1 punctuation and symbols (« » § ° …)
  if (cp == 0xD7 || cp == 0xF7) return false;  // × ÷
  if (cp < 0x2000) return true;
  if (cp <= 0x2BFF) return false;  // general punctuation („ “ – — …), currency, arrows, math, symbols
  if (cp >= 0x3000 && cp <= 0x303F) return false;  // CJK punctuation
  if (cp >= 0xE000 && cp <= 0xF8FF) return false;  // private use
  if (cp >= 0xFE00 && cp <= 0xFE4F) return false;  // variation selectors, CJK compatibility forms
  if (cp >= 0xFF00 && cp <= 0xFF0F) return false;  // fullwidth punctuation
  if ((cp >= 0xFF1A && cp <= 0xFF20) || (cp >= 0xFF3B && cp <= 0xFF40) || (cp >= 0xFF5B && cp <= 0xFF65)) return false;
  if (cp == 0xFFFD || cp == 0xFEFF) return false;
  if (cp >= 0x1F000 && cp <= 0x1FAFF) return false;  // emoji and pictographs
  return true;
}
// A lowercase letter in the scripts lower_cp knows (used by the sentence splitter: a sentence never starts
// with one).
bool is_lower_letter(char32_t cp);

std::string to_lower(std::string_view s);
void to_lower_append(std::string_view s, std::string &out);

// Calls f(token) for every maximal run of word code points in `lowered` (already lowercased text).
template <class F> void for_each_token(std::string_view lowered, F &&f) {
  std::size_t i = 0, n = lowered.size(), start = 0;
  bool in_tok = false;
  while (i < n) {
    unsigned char c = static_cast<unsigned char>(lowered[i]);
    bool word;
    int len = 1;
    if (c < 0x80) {
      word = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z');
    } else {
      Decoded d = decode(lowered, i);
      len = d.len;
      word = is_word_cp(d.cp);
    }
    if (word && !in_tok) {
      start = i;
      in_tok = true;
    } else if (!word && in_tok) {
      f(lowered.substr(start, i - start));
      in_tok = false;
    }
    i += static_cast<std::size_t>(len);
  }
  if (in_tok) f(lowered.substr(start, n - start));
}

// Lowercases s into dst (room for s.size() bytes: no mapping makes a text longer) and calls tok(begin, end) with the byte range in dst of every token; returns the lowered
// length. One pass, the same result as to_lower_append() and then for_each_token(): lowercasing is per code
// point and keeps every code point's class (word characters map to word characters, others to others; invalid
// bytes stay as they are and decode as U+FFFD either way). ASCII runs go eight bytes at a time (SWAR): the
// word is lowercased with bit arithmetic and stored whole, and only the bytes where "word character or not"
// changes are visited (about two per word) instead of every byte.
// Writes cp's UTF-8 at p, returns the byte count.
inline std::size_t put_utf8(char *p, char32_t cp) {
  if (cp < 0x80) {
    p[0] = static_cast<char>(cp);
    return 1;
  }
  if (cp < 0x800) {
    p[0] = static_cast<char>(0xC0 | (cp >> 6));
    p[1] = static_cast<char>(0x80 | (cp & 0x3F));
    return 2;
  }
  if (cp < 0x10000) {
    p[0] = static_cast<char>(0xE0 | (cp >> 12));
    p[1] = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    p[2] = static_cast<char>(0x80 | (cp & 0x3F));
    return 3;
  }
  p[0] = static_cast<char>(0xF0 | (cp >> 18));
  p[1] = static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
  p[2] = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
  p[3] = static_cast<char>(0x80 | (cp & 0x3F));
  return 4;
}
template <class F> std::size_t lower_tokens(std::string_view s, char *dst, F &&tok) {
  static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the 8-byte word tricks assume little-endian");
  constexpr std::uint64_t kOnes = 0x0101010101010101ULL, kHigh = 0x8080808080808080ULL;
  // High bit of each byte set where lo <= byte <= hi (bytes < 0x80 only: no carry crosses a byte).
  auto in_range8 = [](std::uint64_t w, unsigned char lo, unsigned char hi) {
    return (w + kOnes * (0x80 - lo)) & ~(w + kOnes * (0x7F - hi)) & kHigh;
  };
  std::size_t i = 0, o = 0, start = 0, swar_from = 0;
  const std::size_t n = s.size();
  bool in = false;
  while (i < n) {
    if (i >= swar_from && i + 8 <= n) {
      std::uint64_t w;
      std::memcpy(&w, s.data() + i, 8);
      if ((w & kHigh) != 0) {
        // Not all ASCII: the per-byte path up to and including the first non-ASCII byte.
        swar_from = i + static_cast<std::size_t>(__builtin_ctzll(w & kHigh) >> 3) + 1;
      } else {
        const std::uint64_t low = w | (in_range8(w, 'A', 'Z') >> 2);  // 'A'..'Z' + 0x20
        std::memcpy(dst + o, &low, 8);                                 // o <= i: the 8 bytes fit
        const std::uint64_t word = in_range8(low, 'a', 'z') | in_range8(low, '0', '9');
        // Bytes whose class differs from the byte before (the first compares with `in`).
        std::uint64_t change = word ^ ((word << 8) | (in ? 0x80u : 0u));
        while (change != 0) {
          const std::size_t at = o + static_cast<std::size_t>(__builtin_ctzll(change) >> 3);
          if (!in) start = at;
          else tok(start, at);
          in = !in;
          change &= change - 1;
        }
        i += 8;
        o += 8;
        continue;
      }
    }
    const unsigned char c = static_cast<unsigned char>(s[i]);
    bool w;
    const std::size_t at = o;
    if (c < 0x80) {
      dst[o++] = (c >= 'A' && c <= 'Z') ? static_cast<char>(c + 32) : static_cast<char>(c);
      w = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z');
      ++i;
    } else {
      Decoded d = decode(s, i);
      if (d.cp == 0xFFFD && d.len == 1) {
        dst[o++] = static_cast<char>(c);  // an invalid byte stays as it is (a non-word character)
        w = false;
      } else {
        const char32_t l = lower_cp(d.cp);
        if (l == d.cp) {
          std::memcpy(dst + o, s.data() + i, static_cast<std::size_t>(d.len));
          o += static_cast<std::size_t>(d.len);
        } else {
          o += put_utf8(dst + o, l);
        }
        w = is_word_cp(l);
      }
      i += static_cast<std::size_t>(d.len);
    }
    if (w && !in) {
      start = at;
      in = true;
    } else if (!w && in) {
      tok(start, at);
      in = false;
    }
  }
  if (in) tok(start, o);
  return o;
}

// Lowercased tokens of `text` as owned strings (convenience for tests and cold paths).
std::vector<std::string> tokenize(std::string_view text);

// A text lowercased once, with its tokens (views into `lowered`) — input of the keyword detectors.
// Tokens are stored as offsets so that the object can be copied and moved safely.
struct TokenizedText {
  struct Tok {
    std::uint32_t off, len;
  };
  std::string lowered;
  std::vector<Tok> tokens;
  void assign(std::string_view text);
  std::string_view token(std::size_t i) const { return std::string_view(lowered).substr(tokens[i].off, tokens[i].len); }
  std::size_t size() const { return tokens.size(); }
};

// ---- token tables ------------------------------------------------------------------------------------------
// A fast, non-cryptographic hash of a short byte string (tokens are a few bytes long): 8-byte words mixed with a
// multiply-xorshift step. For in-memory lookups only (ProbeTable, membership tests): the values may change
// between versions, so never store one or let an output depend on one.
inline std::uint64_t hash_mix(std::uint64_t x) {
  x ^= x >> 32;
  x *= 0xd6e8feb86659fd93ULL;
  x ^= x >> 32;
  return x;
}
inline std::uint64_t hash_bytes(std::string_view s) {
  const char *p = s.data();
  std::size_t n = s.size();
  std::uint64_t h = 0x9E3779B97F4A7C15ULL ^ (n * 0xff51afd7ed558ccdULL);
  while (n >= 8) {
    std::uint64_t w;
    std::memcpy(&w, p, 8);
    h = hash_mix(h ^ w) * 0x9E3779B97F4A7C15ULL;
    p += 8;
    n -= 8;
  }
  // The last 0..7 bytes, whole: two overlapping 4-byte reads, or the first, middle and last byte of 1..3.
  std::uint64_t w = 0;
  if (n >= 4) {
    std::uint32_t a, b;
    std::memcpy(&a, p, 4);
    std::memcpy(&b, p + n - 4, 4);
    w = (static_cast<std::uint64_t>(a) << 32) | b;
  } else if (n > 0) {
    w = (static_cast<std::uint64_t>(static_cast<unsigned char>(p[0])) << 16) |
        (static_cast<std::uint64_t>(static_cast<unsigned char>(p[n / 2])) << 8) | static_cast<unsigned char>(p[n - 1]);
  }
  return hash_mix(h ^ w);
}

// An open-addressing hash table with linear probing, at most half full: the per-token lookups of the hot paths
// (the TF-IDF embedder's per-call vocabulary, the KSODI operators' per-thread token analyses). It only places
// slots; Slot is the caller's entry (the key, or where the caller keeps it, and the value) and has
//   std::uint64_t hash;   // the key's hash (hash_bytes)
//   bool empty() const;   // true for a default-constructed Slot, and only for it
// The caller's `same(slot)` tells whether a slot holds the key looked for (asked only where the hash matches).
// Inserting may grow the table, which moves every slot: pointers from find() are stale after insert().
template <class Slot> class ProbeTable {
 public:
  explicit ProbeTable(std::size_t slots = 64) { reset(slots); }
  // Empties the table, with at least `slots` slots (a power of two, at least 16).
  void reset(std::size_t slots) {
    std::size_t n = 16;
    while (n < slots) n <<= 1;
    slots_.assign(n, Slot{});
    mask_ = n - 1;
    used_ = 0;
  }
  template <class Same> const Slot *find(std::uint64_t h, Same &&same) const {
    for (std::size_t i = h & mask_;; i = (i + 1) & mask_) {
      const Slot &s = slots_[i];
      if (s.empty()) return nullptr;
      if (s.hash == h && same(s)) return &s;
    }
  }
  // Adds s, whose key is not in the table.
  void insert(const Slot &s) {
    if (2 * (used_ + 1) > slots_.size()) grow();
    place(s);
    ++used_;
  }
  std::size_t size() const { return used_; }

 private:
  void place(const Slot &s) {
    std::size_t i = s.hash & mask_;
    while (!slots_[i].empty()) i = (i + 1) & mask_;
    slots_[i] = s;
  }
  void grow() {
    std::vector<Slot> old;
    old.swap(slots_);
    slots_.assign(old.size() * 2, Slot{});
    mask_ = slots_.size() - 1;
    for (const Slot &s : old)
      if (!s.empty()) place(s);
  }
  std::vector<Slot> slots_;
  std::size_t mask_ = 0, used_ = 0;
};

// ---- markdown lines ----------------------------------------------------------------------------------------
enum class LineKind {
  Blank,
  FenceOpen,   // ``` or ~~~ opening a code block (info string in `info`)
  FenceClose,  // the matching closing fence
  Code,        // a line inside a fenced code block
  Heading,     // "# …" (ATX), a whole-line **bold** title, a setext title, or a short label line "Fazit:"
  Bullet,      // "- ", "* ", "+ ", "• ", "◦ ", "‣ ", "– " (any indentation)
  Numbered,    // "1. ", "2) ", "(3) ", "Schritt 4:", "Step 5 -" (any indentation)
  TableRow,    // a row of a pipe table
  TableSep,    // the |---|:--:| separator row of a pipe table
  Rule,        // ---, ***, ___, === (horizontal rule or setext underline)
  Text
};

struct Line {
  std::string_view raw;      // the line without its line break (a trailing \r removed)
  std::size_t offset = 0;    // byte offset of raw in the text
  LineKind kind = LineKind::Text;
  std::string_view content;  // the line after its list/heading/quote marker, trimmed
  int number = -1;           // the item number of a Numbered line
  std::string_view info;     // FenceOpen: the info string (e.g. "json")
  int indent = 0;            // leading spaces (a tab counts 4)
};

std::vector<Line> classify_lines(std::string_view text);

// ---- paragraphs --------------------------------------------------------------------------------------------
enum class BlockKind { Prose, Code, Table };
struct Paragraph {
  std::string_view text;  // from the first to the last line of the block, in the original text
  BlockKind kind = BlockKind::Prose;
  std::size_t first_line = 0, last_line = 0;  // indices into the classified lines
};
// Paragraphs are separated by blank lines. A fenced code block is always exactly one paragraph (blank lines
// inside it do not split it; it is also cut off from prose directly above/below it). A pipe table is one
// paragraph of its own. Consecutive list items without blank lines stay in one paragraph with the text
// that introduces them. Blocks holding nothing but horizontal rules are not paragraphs.
std::vector<Paragraph> split_paragraphs(std::string_view text, const std::vector<Line> &lines);
std::vector<Paragraph> split_paragraphs(std::string_view text);

// ---- sentences ---------------------------------------------------------------------------------------------
// Sentence units for grounding checks. Decisions:
//  - fenced code is excluded (code is not a claim in prose; it never gets split either);
//  - headings and horizontal rules are excluded (titles, not statements);
//  - every data row of a pipe table is one unit (the header row and separator are excluded);
//  - every list item starts a new unit (its marker removed); long items are split further;
//  - in prose, a unit ends at . ! ? … (plus closing quotes/brackets) followed by whitespace, unless the next
//    word starts with a lowercase letter, or the period belongs to an abbreviation (z. B., bzw., Dr., e.g.,
//    etc., …, any single letter), a decimal number or version (no space after the period: 3.5, v1.2, URLs),
//    or an ordinal (a number followed by a month or words like "Schritt", "Platz": "am 3. Mai").
// Returned views are trimmed and point into `text`; units without any word character are dropped.
std::vector<std::string_view> split_sentences(std::string_view text, const std::vector<Line> &lines);
std::vector<std::string_view> split_sentences(std::string_view text);
// The claims of an answer (O0's units): split_sentences, and in addition a paragraph that is a JSON object or
// array (an answer in JSON mode, possibly unclosed) contributes its string values, not its text: keys, numbers,
// literals and punctuation are structure; a value is split like prose, at its escaped line breaks too; and a
// value that reads as code (looks_like_code) is excluded, as fenced code is (JSON mode cannot fence code).
std::vector<std::string_view> split_claims(std::string_view text);
// Whether a text (a JSON string value, lines separated by real or escaped line breaks) is code: most of its
// non-blank lines show two signs of code (a call name(…), an assignment, brackets, a trailing ; { }, or a
// leading keyword such as import/def/return/const/SELECT) or start with such a keyword and do not end like a
// sentence.
bool looks_like_code(std::string_view value);
// Splits one run of prose (no markdown handling) — exposed for tests.
void split_prose(std::string_view run, std::vector<std::string_view> &out);

std::string_view trim(std::string_view s);
// Cuts s to at most max_bytes without splitting a UTF-8 sequence.
std::string_view utf8_prefix(std::string_view s, std::size_t max_bytes);

}  // namespace evalgraph::text
