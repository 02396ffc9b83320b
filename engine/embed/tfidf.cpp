#include "embed/tfidf.h"

#include "evalgraph/text.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace evalgraph::embed {

namespace {

// Tokens are those of the text library (evalgraph/text.hpp): lowercased per code point, maximal runs of word
// characters; text::lower_tokens lowercases and tokenises a text in one pass.
using text::lower_tokens;
// Token hashes (the stopword set, the per-call vocabulary) and the vocabulary's table are the text library's too.
using text::hash_bytes;

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
      std::size_t i = hash_bytes(s) & kMask;
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
    table_.reset(cap);
    terms_ = 0;
  }
  std::uint32_t id(const char *p, std::uint32_t len) {
    const std::uint64_t h = hash_bytes(std::string_view(p, len));
    const Slot *s = table_.find(h, [&](const Slot &e) { return e.len == len && same_bytes(e.ptr, p, len); });
    if (s != nullptr) return s->id;
    const std::uint32_t id = stopwords().contains(std::string_view(p, len), h) ? kStop : terms_++;
    table_.insert({p, h, len, id});
    return id;
  }
  std::uint32_t terms() const { return terms_; }

 private:
  struct Slot {
    const char *ptr = nullptr;
    std::uint64_t hash = 0;
    std::uint32_t len = 0, id = 0;
    bool empty() const { return ptr == nullptr; }
  };
  text::ProbeTable<Slot> table_;
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

// Sizes the scratch space for a call of n texts of `total` bytes. All lowercased texts live in one arena that
// is sized up front and never reallocates during the call, so the vocabulary keys (pointers into it) stay
// valid; lowercasing never makes a text longer. 8 bytes of slack: same_bytes() reads whole words.
void prepare(Scratch &sc, std::size_t total, std::size_t n) {
  if (sc.arena.size() < total + 8) sc.arena.resize(total + 8);
  sc.vocab.reset(total / 32 + 16);  // distinct tokens; the table grows when needed
  sc.ids.clear();
  sc.id_bounds.assign(n + 1, 0);
  sc.roots.clear();
  sc.tok_b.clear();
  sc.tok_e.clear();
  sc.tok_id.clear();
  // At most one token per two bytes of each text: no reallocation while tokenising (reused pieces may add more ids).
  const std::size_t max_tokens = total / 2 + n + 1;
  sc.ids.reserve(max_tokens);
  sc.tok_b.reserve(max_tokens);
  sc.tok_e.reserve(max_tokens);
  sc.tok_id.reserve(max_tokens);
}

// The term ids of a text that is a piece of an earlier one (the most recently used root is tried first),
// appended to sc.ids; false when it is none, or its tokens do not line up with the piece.
bool reuse_earlier_text(Scratch &sc, std::string_view text, std::size_t &last_root) {
  if (text.empty() || sc.roots.empty()) return false;
  const std::uintptr_t tb = reinterpret_cast<std::uintptr_t>(text.data()), te = tb + text.size();
  const std::size_t nr = sc.roots.size();
  for (std::size_t k = 0; k < nr && k < 64; ++k) {
    const Root &r = sc.roots[(last_root + nr - k) % nr];
    if (r.begin <= tb && te <= r.end) {
      const bool reused = reuse_tokens(sc, r, tb, te, sc.ids);
      if (reused) last_root = (last_root + nr - k) % nr;
      return reused;
    }
  }
  return false;
}

// Lowercases and tokenises a text into the arena at `pos`, its term ids appended to sc.ids. The text becomes a
// root whose tokens later pieces can reuse, unless lowercasing changed its length (the offsets moved).
void tokenise_text(Scratch &sc, std::string_view text, std::size_t &pos, std::size_t &last_root) {
  char *base = sc.arena.data() + pos;
  const std::size_t first = sc.tok_b.size();
  const std::size_t len = lower_tokens(text, base, [&](std::size_t b, std::size_t e) {
    std::uint32_t id = sc.vocab.id(base + b, static_cast<std::uint32_t>(e - b));
    sc.tok_b.push_back(static_cast<std::uint32_t>(b));
    sc.tok_e.push_back(static_cast<std::uint32_t>(e));
    sc.tok_id.push_back(id);
    if (id != Vocab::kStop) sc.ids.push_back(id);
  });
  pos += len;
  if (len == text.size() && text.size() < 0xFFFFFFFFu) {
    const std::uintptr_t tb = reinterpret_cast<std::uintptr_t>(text.data());
    sc.roots.push_back({tb, tb + text.size(), first, sc.tok_b.size()});
    last_root = sc.roots.size() - 1;
  } else {
    sc.tok_b.resize(first);  // offsets moved: this text's tokens cannot be reused
    sc.tok_e.resize(first);
    sc.tok_id.resize(first);
  }
}

// Raw term counts per text (tf) into the rows of `out`, then document frequencies. Each text's distinct terms
// are also listed in the order of their first occurrence (that order fixes the summation order of the norm),
// so that the weighting pass visits every term once, without branches on the row's values.
void count_terms(Scratch &sc, std::size_t n, std::size_t dim, std::vector<float> &out) {
  sc.df.assign(dim, 0);
  sc.uniq.resize(sc.ids.size());
  sc.uniq_bounds.assign(n + 1, 0);
  std::size_t u = 0;
  for (std::size_t i = 0; i < n; ++i) {
    float *row = out.data() + i * dim;
    for (std::size_t k = sc.id_bounds[i]; k < sc.id_bounds[i + 1]; ++k) {
      const std::uint32_t id = sc.ids[k];
      if (row[id] == 0.0f) {
        ++sc.df[id];
        sc.uniq[u++] = id;
      }
      row[id] += 1.0f;
    }
    sc.uniq_bounds[i + 1] = u;
  }
}

// tf × idf (smoothed: log((1 + n) / (1 + df)) + 1), each row then scaled to unit length.
void weight_rows(Scratch &sc, std::size_t n, std::size_t dim, std::vector<float> &out) {
  std::vector<float> &idf = sc.idf;
  idf.resize(dim);
  for (std::size_t v = 0; v < dim; ++v)
    idf[v] = static_cast<float>(std::log((1.0 + static_cast<double>(n)) / (1.0 + sc.df[v])) + 1.0);
  const std::vector<std::uint32_t> &uniq = sc.uniq;
  for (std::size_t i = 0; i < n; ++i) {
    float *row = out.data() + i * dim;
    double norm = 0;
    // Only the terms of this text are non-zero: walk its distinct ids instead of the whole row.
    for (std::size_t k = sc.uniq_bounds[i]; k < sc.uniq_bounds[i + 1]; ++k) {
      const std::uint32_t id = uniq[k];
      row[id] *= idf[id];
      norm += static_cast<double>(row[id]) * row[id];
    }
    if (norm <= 0) continue;
    const float inv = static_cast<float>(1.0 / std::sqrt(norm));
    for (std::size_t k = sc.uniq_bounds[i]; k < sc.uniq_bounds[i + 1]; ++k) row[uniq[k]] *= inv;
  }
}

}  // namespace

bool TfidfEmbedder::is_stopword(std::string_view token) { return stopwords().contains(token, hash_bytes(token)); }

std::vector<std::string_view> TfidfEmbedder::tokens(std::string_view lowered) {
  std::vector<std::string_view> out;
  text::for_each_token(lowered, [&](std::string_view t) {
    if (!is_stopword(t)) out.push_back(t);
  });
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
  prepare(sc, total, n);
  std::size_t pos = 0, last_root = 0;
  for (std::size_t i = 0; i < n; ++i) {  // term ids of all texts, concatenated (stopwords dropped)
    if (!reuse_earlier_text(sc, texts[i], last_root)) tokenise_text(sc, texts[i], pos, last_root);
    sc.id_bounds[i + 1] = sc.ids.size();
  }
  const std::size_t V = sc.vocab.terms();
  dim = V == 0 ? 1 : V;
  out.assign(n * dim, 0.0f);
  if (V == 0) return;
  count_terms(sc, n, dim, out);
  weight_rows(sc, n, dim, out);
}

}  // namespace evalgraph::embed
