#include "embed/tfidf.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace evalgraph::embed {

namespace {

// A minimal copy of the KSODI tokenizer rules (the engine must not include plugin code): lowercase ASCII,
// Latin-1, Latin Extended-A and ẞ; a token is a maximal run of letters/digits (any code point outside the
// ASCII/Latin-1/general punctuation and symbol blocks counts as a letter).
struct Cp {
  char32_t cp;
  int len;
};

Cp decode(std::string_view s, std::size_t i) {
  unsigned char c = static_cast<unsigned char>(s[i]);
  if (c < 0x80) return {c, 1};
  int len = (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
  if (len == 0 || i + static_cast<std::size_t>(len) > s.size()) return {0xFFFD, 1};
  char32_t cp = c & (len == 2 ? 0x1F : len == 3 ? 0x0F : 0x07);
  for (int k = 1; k < len; ++k) {
    unsigned char cc = static_cast<unsigned char>(s[i + static_cast<std::size_t>(k)]);
    if ((cc & 0xC0) != 0x80) return {0xFFFD, 1};
    cp = (cp << 6) | (cc & 0x3F);
  }
  return {cp, len};
}

char32_t lower_cp(char32_t cp) {
  if (cp < 0x80) return (cp >= 'A' && cp <= 'Z') ? cp + 32 : cp;
  if (cp >= 0xC0 && cp <= 0xDE && cp != 0xD7) return cp + 0x20;
  if (cp >= 0x100 && cp <= 0x17F) {
    if (cp == 0x130) return U'i';
    if (cp == 0x178) return 0xFF;
    if ((cp <= 0x12F || (cp >= 0x132 && cp <= 0x137) || (cp >= 0x14A && cp <= 0x177)) && cp % 2 == 0) return cp + 1;
    if (((cp >= 0x139 && cp <= 0x148) || (cp >= 0x179 && cp <= 0x17E)) && cp % 2 == 1) return cp + 1;
    return cp;
  }
  if (cp == 0x1E9E) return 0xDF;
  if (cp >= 0x391 && cp <= 0x3A9 && cp != 0x3A2) return cp + 0x20;
  if (cp >= 0x410 && cp <= 0x42F) return cp + 0x20;
  if (cp >= 0x400 && cp <= 0x40F) return cp + 0x50;
  return cp;
}

bool is_word_cp(char32_t cp) {
  if (cp < 0x80) return (cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z') || (cp >= '0' && cp <= '9');
  if (cp < 0xC0 || cp == 0xD7 || cp == 0xF7) return false;
  if (cp < 0x2000) return true;
  if (cp <= 0x2BFF) return false;
  if (cp >= 0x3000 && cp <= 0x303F) return false;
  if (cp >= 0xE000 && cp <= 0xF8FF) return false;
  if (cp >= 0xFE00 && cp <= 0xFE4F) return false;
  if (cp >= 0xFF00 && cp <= 0xFF0F) return false;
  if ((cp >= 0xFF1A && cp <= 0xFF20) || (cp >= 0xFF3B && cp <= 0xFF40) || (cp >= 0xFF5B && cp <= 0xFF65)) return false;
  if (cp == 0xFFFD || cp == 0xFEFF) return false;
  if (cp >= 0x1F000 && cp <= 0x1FAFF) return false;
  return true;
}

// Writes the UTF-8 encoding of cp at p; returns the byte count.
std::size_t put_utf8(char *p, char32_t cp) {
  if (cp < 0x80) {
    p[0] = static_cast<char>(cp);
    return 1;
  }
  if (cp < 0x800) {
    p[0] = static_cast<char>(0xC0 | (cp >> 6));
    p[1] = static_cast<char>(0x80 | (cp & 0x3F));
    return 2;
  }
  p[0] = static_cast<char>(0xE0 | (cp >> 12));
  p[1] = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
  p[2] = static_cast<char>(0x80 | (cp & 0x3F));
  return 3;
}

// ASCII byte classes for the fast path: the lowercase byte, and whether it is a word character.
struct AsciiTables {
  char lower[128];
  bool word[128];
  AsciiTables() {
    for (int c = 0; c < 128; ++c) {
      lower[c] = static_cast<char>((c >= 'A' && c <= 'Z') ? c + 32 : c);
      word[c] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    }
  }
};
const AsciiTables kAscii;

// Lowercases s to dst (which has room for s.size() bytes: no mapping makes a text longer) and calls
// tok(begin, end) with the byte range in dst of every token. One pass: the same result as lowercasing the
// whole text and then tokenising the lowered text, because lowercasing is per code point, maps word
// characters to word characters and non-word characters to non-word characters, and keeps invalid bytes
// (which decode as U+FFFD, a non-word character, either way).
//
// ASCII runs go eight bytes at a time (SWAR): the word is lowercased with bit arithmetic and stored whole, and
// only the bytes where "word character or not" changes are visited (about two per word) instead of every byte.
// The per-byte path below handles the rest (non-ASCII bytes, the tail) with the same rules.
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the 8-byte word tricks below assume little-endian");
constexpr std::uint64_t kOnes = 0x0101010101010101ULL, kHigh = 0x8080808080808080ULL;
// High bit of each byte set where lo <= byte <= hi (bytes < 0x80 only: no carry crosses a byte).
inline std::uint64_t in_range8(std::uint64_t w, unsigned char lo, unsigned char hi) {
  return (w + kOnes * (0x80 - lo)) & ~(w + kOnes * (0x7F - hi)) & kHigh;
}
template <class F> std::size_t lower_tokens(std::string_view s, char *dst, F &&tok) {
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
        std::memcpy(dst + o, &low, 8);  // o <= i (no mapping lengthens), so the 8 bytes fit in dst
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
    unsigned char c = static_cast<unsigned char>(s[i]);
    bool w;
    if (c < 0x80) {
      dst[o++] = kAscii.lower[c];
      w = kAscii.word[c];
      ++i;
      if (w == in) continue;  // the common case: inside a word or inside a gap
      if (w) {
        start = o - 1;
        in = true;
      } else {
        tok(start, o - 1);
        in = false;
      }
      continue;
    }
    Cp d = decode(s, i);
    std::size_t at = o;
    if (d.cp == 0xFFFD && d.len == 1) {
      dst[o++] = static_cast<char>(c);  // an invalid byte stays as it is (a non-word character)
      w = false;
    } else {
      char32_t l = lower_cp(d.cp);
      if (l == d.cp) {
        std::memcpy(dst + o, s.data() + i, static_cast<std::size_t>(d.len));
        o += static_cast<std::size_t>(d.len);
      } else {
        o += put_utf8(dst + o, l);
      }
      w = is_word_cp(l);
    }
    i += static_cast<std::size_t>(d.len);
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

// A fast, non-cryptographic hash of a short byte string (tokens are a few bytes long): 8-byte words mixed
// with a multiply-xorshift step. Only used for the open-addressing tables below.
inline std::uint64_t mix(std::uint64_t x) {
  x ^= x >> 32;
  x *= 0xd6e8feb86659fd93ULL;
  x ^= x >> 32;
  return x;
}
inline std::uint64_t hash_bytes(const char *p, std::size_t n) {
  std::uint64_t h = 0x9E3779B97F4A7C15ULL ^ (n * 0xff51afd7ed558ccdULL);
  while (n >= 8) {
    std::uint64_t w;
    std::memcpy(&w, p, 8);
    h = mix(h ^ w) * 0x9E3779B97F4A7C15ULL;
    p += 8;
    n -= 8;
  }
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
  return mix(h ^ w);
}

// Function words of German and English that carry no topic. Negations (nicht, kein, not, no) are kept on
// purpose: they change what a sentence claims.
constexpr const char *kStopwords[] = {
    // German
    "der", "die", "das", "den", "dem", "des", "ein", "eine", "einer", "eines", "einem", "einen", "und", "oder",
    "aber", "doch", "denn", "sondern", "ist", "sind", "war", "waren", "wird", "werden", "wurde", "wurden", "sein",
    "hat", "haben", "hatte", "habe", "kann", "können", "soll", "sollte", "muss", "müssen", "mit", "von", "vom", "zu",
    "zum", "zur", "im", "in", "an", "am", "auf", "aus", "bei", "für", "über", "unter", "nach", "vor", "um", "bis",
    "durch", "gegen", "es", "er", "sie", "wir", "ihr", "ich", "du", "man", "sich", "mich", "dich", "uns", "euch",
    "mein", "dein", "ihre", "ihren", "ihrem", "seine", "seinen", "dass", "daß", "wenn", "als", "wie", "auch", "noch",
    "schon", "so", "nur", "sehr", "hier", "dort", "dann", "da", "dies", "diese", "dieser", "dieses", "diesem",
    "diesen", "jede", "jeder", "jedes", "was", "wer", "wo", "ob", "also", "bitte", "ja", "nun", "mal", "etwa",
    // English
    "the", "a", "an", "and", "or", "but", "of", "to", "in", "on", "at", "for", "with", "by", "from", "as", "is",
    "are", "was", "were", "be", "been", "being", "it", "its", "this", "that", "these", "those", "i", "you", "he",
    "she", "we", "they", "me", "him", "her", "us", "them", "my", "your", "our", "their", "his", "do", "does", "did",
    "have", "has", "had", "will", "would", "can", "could", "should", "shall", "may", "might", "must", "if", "then",
    "than", "so", "there", "here", "what", "which", "who", "whom", "when", "where", "how", "also", "just", "into",
    "about", "over", "up", "out", "any", "some", "such", "please", "all", "very"};

// The stopwords in a fixed open-addressing table (built once; read-only afterwards, so thread-safe).
class StopwordSet {
 public:
  StopwordSet() {
    for (const char *w : kStopwords) {
      std::string_view s(w);
      if (s.size() > max_len_) max_len_ = s.size();
      std::size_t i = hash_bytes(s.data(), s.size()) & kMask;
      while (!slots_[i].empty() && slots_[i] != s) i = (i + 1) & kMask;
      slots_[i] = s;
    }
  }
  bool contains(std::string_view t, std::uint64_t h) const {
    if (t.size() > max_len_) return false;
    for (std::size_t i = h & kMask;; i = (i + 1) & kMask) {
      if (slots_[i].empty()) return false;
      if (slots_[i] == t) return true;
    }
  }

 private:
  static constexpr std::size_t kMask = 1023;  // 1024 slots for ~230 words: short probe chains
  std::string_view slots_[kMask + 1];
  std::size_t max_len_ = 0;
};
const StopwordSet &stopwords() {
  static const StopwordSet s;
  return s;
}

// Whether the len bytes at a and b are equal; both lie in the call's arena, which has 8 bytes of slack at its
// end, so whole 8-byte words may be read past a token (the bytes beyond it are masked off). Tokens are short:
// this beats a call to memcmp.
inline bool same_bytes(const char *a, const char *b, std::size_t len) {
  std::uint64_t x, y;
  while (len > 8) {
    std::memcpy(&x, a, 8);
    std::memcpy(&y, b, 8);
    if (x != y) return false;
    a += 8;
    b += 8;
    len -= 8;
  }
  std::memcpy(&x, a, 8);
  std::memcpy(&y, b, 8);
  const std::uint64_t mask = len == 8 ? ~std::uint64_t{0} : (std::uint64_t{1} << (8 * len)) - 1;  // little-endian
  return ((x ^ y) & mask) == 0;
}

// The per-call vocabulary: token bytes (views into the call's lowered arena) → term id, or kStop for a
// stopword (so that every distinct token is hashed and looked up once per occurrence, and checked against
// the stopword list only on its first occurrence).
class Vocab {
 public:
  static constexpr std::uint32_t kStop = 0xFFFFFFFFu;
  void reset(std::size_t expected_tokens) {
    std::size_t cap = 64;
    while (cap < expected_tokens * 2) cap <<= 1;
    slots_.assign(cap, Slot{});
    mask_ = cap - 1;
    used_ = 0;
    terms_ = 0;
  }
  std::uint32_t id(const char *p, std::uint32_t len) {
    const std::uint64_t h = hash_bytes(p, len);
    std::size_t i = h & mask_;
    for (;; i = (i + 1) & mask_) {
      Slot &s = slots_[i];
      if (s.ptr == nullptr) break;
      if (s.hash == h && s.len == len && same_bytes(s.ptr, p, len)) return s.id;
    }
    Slot &s = slots_[i];
    s.ptr = p;
    s.len = len;
    s.hash = h;
    const std::uint32_t id = stopwords().contains(std::string_view(p, len), h) ? kStop : terms_++;
    s.id = id;
    if (++used_ * 2 > slots_.size()) grow();  // invalidates s
    return id;
  }
  std::uint32_t terms() const { return terms_; }

 private:
  struct Slot {
    const char *ptr = nullptr;
    std::uint64_t hash = 0;
    std::uint32_t len = 0, id = 0;
  };
  void grow() {
    std::vector<Slot> old;
    old.swap(slots_);
    slots_.assign(old.size() * 2, Slot{});
    mask_ = slots_.size() - 1;
    for (const Slot &s : old) {
      if (s.ptr == nullptr) continue;
      std::size_t i = s.hash & mask_;
      while (slots_[i].ptr != nullptr) i = (i + 1) & mask_;
      slots_[i] = s;
    }
  }
  std::vector<Slot> slots_;
  std::size_t mask_ = 0, used_ = 0;
  std::uint32_t terms_ = 0;
};

// Per-thread scratch space, reused across calls (the host embeds from several worker threads at once).
// A text of the call whose tokens are kept for reuse: callers often embed a text together with pieces of it
// (O0: the answer and its sentences, each document and its sentences). A piece that lies inside an earlier
// text's memory has exactly that text's tokens within its byte range, provided that no token crosses the
// piece's ends and that lowercasing kept every byte offset (the lowered text is as long as the original:
// no mapping ever lengthens a character, so equal lengths mean that none was shortened either). Then the
// piece's term ids are copied instead of lowercasing, tokenising and hashing it again.
struct Root {
  std::uintptr_t begin = 0, end = 0;  // the text's bytes (addresses)
  std::size_t first = 0, last = 0;    // its tokens in Scratch::tok_*
};

// Per-thread scratch space, reused across calls (the host embeds from several worker threads at once).
struct Scratch {
  std::string arena;
  Vocab vocab;
  std::vector<std::uint32_t> ids;
  std::vector<std::size_t> id_bounds;
  std::vector<std::uint32_t> df;
  std::vector<float> idf;
  std::vector<Root> roots;
  std::vector<std::uint32_t> tok_b, tok_e, tok_id;  // byte range in its text and term id (or kStop)
  std::vector<std::uint32_t> uniq;                  // each text's distinct term ids, in first-occurrence order
  std::vector<std::size_t> uniq_bounds;
};

// Appends the term ids of the piece [b, e) of root r to ids; false when a token crosses b or e.
bool reuse_tokens(const Scratch &sc, const Root &r, std::uintptr_t b, std::uintptr_t e, std::vector<std::uint32_t> &ids) {
  const std::uint32_t s = static_cast<std::uint32_t>(b - r.begin), t = static_cast<std::uint32_t>(e - r.begin);
  const std::uint32_t *tb = sc.tok_b.data(), *te = sc.tok_e.data();
  // First token ending after s, then every token that starts before t.
  std::size_t lo = r.first, hi = r.last;
  while (lo < hi) {
    std::size_t mid = (lo + hi) / 2;
    if (te[mid] <= s) lo = mid + 1;
    else hi = mid;
  }
  if (lo < r.last && tb[lo] < s) return false;  // a token crosses the start
  std::size_t k = lo;
  for (; k < r.last && tb[k] < t; ++k) {
    if (te[k] > t) return false;  // a token crosses the end
  }
  for (std::size_t j = lo; j < k; ++j)
    if (sc.tok_id[j] != Vocab::kStop) ids.push_back(sc.tok_id[j]);
  return true;
}

}  // namespace

bool TfidfEmbedder::is_stopword(std::string_view token) { return stopwords().contains(token, hash_bytes(token.data(), token.size())); }

std::vector<std::string_view> TfidfEmbedder::tokens(std::string_view lowered) {
  std::vector<std::string_view> out;
  std::size_t i = 0, start = 0;
  bool in = false;
  auto emit = [&](std::size_t e) {
    std::string_view t = lowered.substr(start, e - start);
    if (!is_stopword(t)) out.push_back(t);
  };
  while (i < lowered.size()) {
    Cp d = decode(lowered, i);
    bool w = is_word_cp(d.cp);
    if (w && !in) {
      start = i;
      in = true;
    } else if (!w && in) {
      emit(i);
      in = false;
    }
    i += static_cast<std::size_t>(d.len);
  }
  if (in) emit(lowered.size());
  return out;
}

void TfidfEmbedder::embed(const std::vector<std::string_view> &texts, std::vector<float> &out, std::size_t &dim) const {
  thread_local Scratch sc;
  const std::size_t n = texts.size();
  std::size_t total = 0;
  for (auto t : texts) total += t.size();
  // The scratch space is kept for the next call, unless this call was unusually large (then it is freed,
  // so that one huge call does not pin its memory in every worker thread).
  struct Release {
    std::size_t total;
    ~Release() {
      if (total > (std::size_t{16} << 20)) sc = Scratch{};
    }
  } release{total};
  // All lowercased texts live in one arena that is sized up front and never reallocates during the call,
  // so the vocabulary keys (pointers into it) stay valid; lowercasing never makes a text longer.
  // 8 bytes of slack: same_bytes() reads whole words.
  if (sc.arena.size() < total + 8) sc.arena.resize(total + 8);
  char *arena = sc.arena.data();
  sc.vocab.reset(total / 32 + 16);  // distinct tokens; the table grows when needed
  std::vector<std::uint32_t> &ids = sc.ids;  // term ids of all texts, concatenated (stopwords dropped)
  ids.clear();
  std::vector<std::size_t> &id_bounds = sc.id_bounds;
  id_bounds.assign(n + 1, 0);
  sc.roots.clear();
  sc.tok_b.clear();
  sc.tok_e.clear();
  sc.tok_id.clear();
  // At most one token per two bytes of each text: no reallocation while tokenising (reused pieces may add more ids).
  const std::size_t max_tokens = total / 2 + n + 1;
  ids.reserve(max_tokens);
  sc.tok_b.reserve(max_tokens);
  sc.tok_e.reserve(max_tokens);
  sc.tok_id.reserve(max_tokens);
  std::size_t pos = 0, last_root = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const std::uintptr_t tb = reinterpret_cast<std::uintptr_t>(texts[i].data()), te = tb + texts[i].size();
    // A piece of an earlier text (the most recently used one is tried first).
    bool reused = false;
    if (!texts[i].empty() && !sc.roots.empty()) {
      const std::size_t nr = sc.roots.size();
      for (std::size_t k = 0; k < nr && k < 64; ++k) {
        const Root &r = sc.roots[(last_root + nr - k) % nr];
        if (r.begin <= tb && te <= r.end) {
          reused = reuse_tokens(sc, r, tb, te, ids);
          if (reused) last_root = (last_root + nr - k) % nr;
          break;
        }
      }
    }
    if (!reused) {
      char *base = arena + pos;
      const std::size_t first = sc.tok_b.size();
      const std::size_t len = lower_tokens(texts[i], base, [&](std::size_t b, std::size_t e) {
        std::uint32_t id = sc.vocab.id(base + b, static_cast<std::uint32_t>(e - b));
        sc.tok_b.push_back(static_cast<std::uint32_t>(b));
        sc.tok_e.push_back(static_cast<std::uint32_t>(e));
        sc.tok_id.push_back(id);
        if (id != Vocab::kStop) ids.push_back(id);
      });
      pos += len;
      if (len == texts[i].size() && texts[i].size() < 0xFFFFFFFFu) {
        sc.roots.push_back({tb, te, first, sc.tok_b.size()});
        last_root = sc.roots.size() - 1;
      } else {
        sc.tok_b.resize(first);  // offsets moved: this text's tokens cannot be reused
        sc.tok_e.resize(first);
        sc.tok_id.resize(first);
      }
    }
    id_bounds[i + 1] = ids.size();
  }
  const std::size_t V = sc.vocab.terms();
  dim = V == 0 ? 1 : V;
  out.assign(n * dim, 0.0f);
  if (V == 0) return;
  // Raw term counts per text (tf), then document frequencies. Each text's distinct terms are also listed in
  // the order of their first occurrence (that order fixes the summation order of the norm), so that the
  // weighting passes below visit every term once, without branches on the row's values.
  std::vector<std::uint32_t> &df = sc.df;
  df.assign(V, 0);
  std::vector<std::uint32_t> &uniq = sc.uniq;
  std::vector<std::size_t> &uniq_bounds = sc.uniq_bounds;
  uniq.resize(ids.size());
  uniq_bounds.assign(n + 1, 0);
  std::size_t u = 0;
  for (std::size_t i = 0; i < n; ++i) {
    float *row = out.data() + i * dim;
    for (std::size_t k = id_bounds[i]; k < id_bounds[i + 1]; ++k) {
      const std::uint32_t id = ids[k];
      if (row[id] == 0.0f) {
        ++df[id];
        uniq[u++] = id;
      }
      row[id] += 1.0f;
    }
    uniq_bounds[i + 1] = u;
  }
  std::vector<float> &idf = sc.idf;
  idf.resize(V);
  for (std::size_t v = 0; v < V; ++v)
    idf[v] = static_cast<float>(std::log((1.0 + static_cast<double>(n)) / (1.0 + df[v])) + 1.0);
  for (std::size_t i = 0; i < n; ++i) {
    float *row = out.data() + i * dim;
    double norm = 0;
    // Only the terms of this text are non-zero: walk its distinct ids instead of the whole row.
    for (std::size_t k = uniq_bounds[i]; k < uniq_bounds[i + 1]; ++k) {
      const std::uint32_t id = uniq[k];
      row[id] *= idf[id];
      norm += static_cast<double>(row[id]) * row[id];
    }
    if (norm <= 0) continue;
    const float inv = static_cast<float>(1.0 / std::sqrt(norm));
    for (std::size_t k = uniq_bounds[i]; k < uniq_bounds[i + 1]; ++k) row[uniq[k]] *= inv;
  }
}

}  // namespace evalgraph::embed
