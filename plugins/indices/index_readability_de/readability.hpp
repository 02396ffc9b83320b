// German readability (header-only, tested in tests/chatbot): Amstad's Flesch Reading Ease for German and the
// first Wiener Sachtextformel, with a syllable counter that handles umlauts.
//
//   words      tokens with at least one letter (letters, digits, inner hyphens and apostrophes form a token)
//   sentences  segments ended by . ! ? (a run counts once) or by a line break, that contain a word;
//              a text with words but no end mark is one sentence
//   syllables  per word: the number of vowel groups (a e i o u y ä ö ü, accented vowels), at least 1.
//              Adjacent vowels form one group, so diphthongs (ei, au, eu, äu, ie) count once; hiatus
//              ("Theater", "Museum") is undercounted by one — a known limit of the heuristic.
//   ASL = words / sentences, ASW = syllables / words
//   FRE_de (Amstad 1978) = 180 − ASL − 58.5 · ASW              (higher = easier; ~0..100)
//   WSTF1 (Bamberger & Vanecek 1984) = 0.1935·MS + 0.1672·SL + 0.1297·IW − 0.0327·ES − 0.875
//              MS = % words with ≥ 3 syllables, SL = ASL, IW = % words with > 6 letters,
//              ES = % words with 1 syllable                      (school grade 4..15; lower = easier)
#pragma once
#include <string>
#include <vector>

#include "chatbot_text/utf8_text.hpp"

namespace chatbot_text {

struct ReadabilityStats {
  int words = 0, sentences = 0, syllables = 0;
  int polysyllabic = 0;  // words with >= 3 syllables
  int monosyllabic = 0;  // words with 1 syllable
  int long_words = 0;    // words with > 6 letters
  double asl = 0, asw = 0, fre = 0, wstf = 0;
  bool defined() const { return words > 0; }
};

inline int count_syllables(const std::vector<char32_t> &word) {
  int groups = 0;
  bool in_vowel = false;
  for (char32_t c : word) {
    bool v = is_vowel(c);
    if (v && !in_vowel) ++groups;
    in_vowel = v;
  }
  return groups < 1 ? 1 : groups;
}

inline ReadabilityStats readability(const std::string &text) {
  ReadabilityStats st;
  std::vector<char32_t> cps = decode(text);
  std::vector<char32_t> word;
  int words_in_sentence = 0;
  auto end_word = [&] {
    bool has_letter = false;
    int letters = 0;
    for (char32_t c : word)
      if (is_letter(c)) {
        has_letter = true;
        ++letters;
      }
    if (has_letter) {
      int syl = count_syllables(word);
      ++st.words;
      ++words_in_sentence;
      st.syllables += syl;
      if (syl >= 3) ++st.polysyllabic;
      if (syl == 1) ++st.monosyllabic;
      if (letters > 6) ++st.long_words;
    }
    word.clear();
  };
  auto end_sentence = [&] {
    end_word();
    if (words_in_sentence > 0) ++st.sentences;
    words_in_sentence = 0;
  };
  for (std::size_t i = 0; i < cps.size(); ++i) {
    char32_t c = cps[i];
    if (is_letter(c) || is_digit(c)) {
      word.push_back(c);
    } else if ((c == '-' || c == '\'' || c == 0x2019) && !word.empty() && i + 1 < cps.size() &&
               (is_letter(cps[i + 1]) || is_digit(cps[i + 1]))) {
      word.push_back(c);  // inner hyphen or apostrophe
    } else if (c == '.' || c == '!' || c == '?' || c == '\n') {
      // "3.5" is a number, not a sentence end.
      if (c == '.' && !word.empty() && is_digit(word.back()) && i + 1 < cps.size() && is_digit(cps[i + 1])) {
        word.push_back(c);
        continue;
      }
      end_sentence();
    } else {
      end_word();
    }
  }
  end_sentence();
  if (st.words == 0) return st;
  st.asl = static_cast<double>(st.words) / st.sentences;
  st.asw = static_cast<double>(st.syllables) / st.words;
  st.fre = 180.0 - st.asl - 58.5 * st.asw;
  double ms = 100.0 * st.polysyllabic / st.words, iw = 100.0 * st.long_words / st.words,
         es = 100.0 * st.monosyllabic / st.words;
  st.wstf = 0.1935 * ms + 0.1672 * st.asl + 0.1297 * iw - 0.0327 * es - 0.875;
  return st;
}

}  // namespace chatbot_text
