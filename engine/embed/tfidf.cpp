#include "embed/tfidf.h"

#include <cmath>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <unordered_set>

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

void append_utf8(std::string &out, char32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

// Lowercases s onto out; never grows the byte length (all mappings keep or shrink it).
void lower_append(std::string_view s, std::string &out) {
  for (std::size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      out.push_back((c >= 'A' && c <= 'Z') ? static_cast<char>(c + 32) : static_cast<char>(c));
      ++i;
      continue;
    }
    Cp d = decode(s, i);
    char32_t l = lower_cp(d.cp);
    if (l == d.cp || d.cp == 0xFFFD) out.append(s.substr(i, static_cast<std::size_t>(d.len)));
    else append_utf8(out, l);
    i += static_cast<std::size_t>(d.len);
  }
}

template <class F> void for_each_token(std::string_view low, F &&f) {
  std::size_t i = 0, start = 0;
  bool in = false;
  while (i < low.size()) {
    Cp d = decode(low, i);
    bool w = is_word_cp(d.cp);
    if (w && !in) {
      start = i;
      in = true;
    } else if (!w && in) {
      f(low.substr(start, i - start));
      in = false;
    }
    i += static_cast<std::size_t>(d.len);
  }
  if (in) f(low.substr(start));
}

// Function words of German and English that carry no topic. Negations (nicht, kein, not, no) are kept on
// purpose: they change what a sentence claims.
const std::unordered_set<std::string_view> &stopwords() {
  static const std::unordered_set<std::string_view> s{
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
  return s;
}

}  // namespace

bool TfidfEmbedder::is_stopword(std::string_view token) { return stopwords().count(token) > 0; }

std::vector<std::string_view> TfidfEmbedder::tokens(std::string_view lowered) {
  std::vector<std::string_view> out;
  for_each_token(lowered, [&](std::string_view t) {
    if (!is_stopword(t)) out.push_back(t);
  });
  return out;
}

void TfidfEmbedder::embed(const std::vector<std::string_view> &texts, std::vector<float> &out, std::size_t &dim) const {
  const std::size_t n = texts.size();
  std::size_t total = 0;
  for (auto t : texts) total += t.size();
  // All lowercased texts live in one arena that never reallocates, so the vocabulary keys (views into it)
  // stay valid; lowercasing never makes a text longer.
  std::string arena;
  arena.reserve(total);
  std::vector<std::size_t> bounds(n + 1, 0);
  for (std::size_t i = 0; i < n; ++i) {
    lower_append(texts[i], arena);
    bounds[i + 1] = arena.size();
  }
  std::unordered_map<std::string_view, std::uint32_t> vocab;
  vocab.reserve(total / 6 + 16);
  std::vector<std::uint32_t> ids;  // token ids of all texts, concatenated
  ids.reserve(total / 5 + 16);
  std::vector<std::size_t> id_bounds(n + 1, 0);
  std::string_view all(arena);
  for (std::size_t i = 0; i < n; ++i) {
    for_each_token(all.substr(bounds[i], bounds[i + 1] - bounds[i]), [&](std::string_view tok) {
      if (is_stopword(tok)) return;
      auto [it, inserted] = vocab.try_emplace(tok, static_cast<std::uint32_t>(vocab.size()));
      ids.push_back(it->second);
    });
    id_bounds[i + 1] = ids.size();
  }
  const std::size_t V = vocab.size();
  dim = V == 0 ? 1 : V;
  out.assign(n * dim, 0.0f);
  if (V == 0) return;
  // Raw term counts per text (tf), then document frequencies.
  std::vector<std::uint32_t> df(V, 0);
  for (std::size_t i = 0; i < n; ++i) {
    float *row = out.data() + i * dim;
    for (std::size_t k = id_bounds[i]; k < id_bounds[i + 1]; ++k) {
      std::uint32_t id = ids[k];
      if (row[id] == 0.0f) ++df[id];
      row[id] += 1.0f;
    }
  }
  std::vector<float> idf(V);
  for (std::size_t v = 0; v < V; ++v)
    idf[v] = static_cast<float>(std::log((1.0 + static_cast<double>(n)) / (1.0 + df[v])) + 1.0);
  for (std::size_t i = 0; i < n; ++i) {
    float *row = out.data() + i * dim;
    double norm = 0;
    // Only the terms of this text are non-zero: walk its ids instead of the whole row.
    for (std::size_t k = id_bounds[i]; k < id_bounds[i + 1]; ++k) {
      std::uint32_t id = ids[k];
      if (row[id] > 0.0f) {
        row[id] = -row[id] * idf[id];  // negative marks "already weighted"
        norm += static_cast<double>(row[id]) * row[id];
      }
    }
    if (norm <= 0) continue;
    float inv = static_cast<float>(-1.0 / std::sqrt(norm));  // also flips the sign back
    for (std::size_t k = id_bounds[i]; k < id_bounds[i + 1]; ++k) {
      std::uint32_t id = ids[k];
      if (row[id] < 0.0f) row[id] *= inv;
    }
  }
}

}  // namespace evalgraph::embed
