// Content preservation between an original and a transformed text (header-only, tested in tests/chatbot).
//
//   tokens        maximal runs of letters/digits, lower-cased (Ä Ö Ü → ä ö ü), ß → ss
//   content words tokens of >= 3 letters that are not in the German/English stop-word list, and numbers
//   stem          one suffix removed, longest first, of: innen, ern, en, er, em, es, e, n, s — only when at
//                 least 3 letters remain ("Kundinnen", "Kunden", "Kunde" → "kund"; "Arbeitnehmer" →
//                 "arbeitnehm")
//   O, T          the sets of distinct stems of the original and of the transformed text
//   recall        |O ∩ T| / |O|   (the index value: how much of the original's content vocabulary survives)
//   precision     |O ∩ T| / |T|   (how much of the transformed text's vocabulary comes from the original)
//   f1            harmonic mean of both
// An original without content words has no defined recall (value null, valid false).
#pragma once
#include <algorithm>
#include <set>
#include <string>
#include <unordered_set>
#include <vector>

#include "chatbot_text/utf8_text.hpp"

namespace chatbot_text {

inline const std::unordered_set<std::string> &stop_words() {
  static const std::unordered_set<std::string> s = {
      // German
      "aber", "alle", "allem", "allen", "aller", "alles", "als", "also", "am", "an", "auch", "auf", "aus", "bei",
      "beim", "bin", "bis", "bist", "da", "dabei", "damit", "dann", "das", "dass", "dein", "deine", "dem", "den",
      "der", "des", "dessen", "die", "dies", "diese", "diesem", "diesen", "dieser", "dieses", "doch", "dort", "du",
      "durch", "ein", "eine", "einem", "einen", "einer", "eines", "er", "es", "etwas", "euch", "euer", "für", "gegen",
      "hat", "hatte", "hätte", "haben", "hier", "hin", "ich", "ihm", "ihn", "ihnen", "ihr", "ihre", "ihrem", "ihren",
      "ihrer", "im", "in", "ist", "ja", "jede", "jedem", "jeden", "jeder", "jedes", "kann", "können", "könnte",
      "mit", "muss", "müssen", "nach", "nicht", "noch", "nun", "nur", "ob", "oder", "ohne", "sehr", "sein", "seine",
      "seinem", "seinen", "seiner", "sich", "sie", "sind", "so", "soll", "sollen", "sollte", "über", "um", "und",
      "uns", "unser", "unsere", "unter", "vom", "von", "vor", "war", "waren", "was", "weil", "wenn", "wer", "werden",
      "wie", "wir", "wird", "wo", "wurde", "wurden", "würde", "zu", "zum", "zur", "zwischen", "bitte", "sowie",
      // English
      "the", "and", "for", "are", "but", "not", "you", "all", "any", "can", "had", "her", "was", "one", "our",
      "out", "has", "him", "his", "how", "its", "who", "did", "this", "that", "with", "have", "from", "they",
      "will", "would", "there", "their", "what", "about", "which", "when", "were", "been", "into", "than", "then",
      "them", "these", "those", "should", "could", "your"};
  return s;
}

inline std::string stem(const std::string &w) {
  static const std::vector<std::string> suffixes = {"innen", "ern", "en", "er", "em", "es", "e", "n", "s"};
  for (const auto &suf : suffixes) {
    if (w.size() > suf.size() && w.compare(w.size() - suf.size(), suf.size(), suf) == 0) {
      std::string rest = w.substr(0, w.size() - suf.size());
      if (decode(rest).size() >= 3) return rest;
    }
  }
  return w;
}

// Distinct content stems in order of first occurrence.
inline std::vector<std::string> content_stems(const std::string &text) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  std::string tok;
  int letters = 0;
  bool digits_only = true;
  auto flush = [&] {
    if (!tok.empty()) {
      bool keep = digits_only || (letters >= 3 && stop_words().count(tok) == 0);
      if (keep) {
        std::string s = digits_only ? tok : stem(tok);
        if (seen.insert(s).second) out.push_back(s);
      }
    }
    tok.clear();
    letters = 0;
    digits_only = true;
  };
  for (char32_t c : decode(text)) {
    if (is_letter(c)) {
      c = lower(c);
      if (c == 0xDF) {
        tok += "ss";
      } else {
        append_utf8(tok, c);
      }
      ++letters;
      digits_only = false;
    } else if (is_digit(c)) {
      append_utf8(tok, c);
    } else {
      flush();
    }
  }
  flush();
  return out;
}

struct Preservation {
  std::size_t n_original = 0, n_transformed = 0, n_shared = 0;
  double recall = 0, precision = 0, f1 = 0;
  std::vector<std::string> missing;  // stems of the original the transformed text lacks (first 20)
  bool defined() const { return n_original > 0; }
};

inline Preservation content_preservation(const std::string &original, const std::string &transformed) {
  Preservation p;
  auto o = content_stems(original), t = content_stems(transformed);
  std::set<std::string> ts(t.begin(), t.end());
  p.n_original = o.size();
  p.n_transformed = t.size();
  for (const auto &s : o) {
    if (ts.count(s) != 0) {
      ++p.n_shared;
    } else if (p.missing.size() < 20) {
      p.missing.push_back(s);
    }
  }
  if (p.n_original > 0) p.recall = static_cast<double>(p.n_shared) / p.n_original;
  if (p.n_transformed > 0) p.precision = static_cast<double>(p.n_shared) / p.n_transformed;
  if (p.recall + p.precision > 0) p.f1 = 2 * p.recall * p.precision / (p.recall + p.precision);
  return p;
}

}  // namespace chatbot_text
