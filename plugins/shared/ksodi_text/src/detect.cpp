#include "ksodi/detect.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>

namespace ksodi::detect {

using text::TokenizedText;

namespace {

bool is_phrase_pattern(std::string_view p) {
  for (std::size_t i = 0; i < p.size();) {
    text::Decoded d = text::decode(p, i);
    bool ok = text::is_word_cp(d.cp) || d.cp == ' ' || d.cp == '-' || d.cp == '*';
    if (!ok) return false;
    i += static_cast<std::size_t>(d.len);
  }
  return true;
}

bool word_cp_before(std::string_view s, std::size_t pos) {
  if (pos == 0) return false;
  std::size_t p = text::prev_cp_start(s, pos);
  return text::is_word_cp(text::decode(s, p).cp);
}

bool word_cp_at(std::string_view s, std::size_t pos) { return pos < s.size() && text::is_word_cp(text::decode(s, pos).cp); }

bool is_negator(std::string_view w) {
  return w == "no" || w == "not" || w == "never" || w == "without" || w == "t" || w == "nicht" || w == "kein" ||
         w == "keine" || w == "keinen" || w == "keinem" || w == "keiner" || w == "keinerlei" || w == "ohne" ||
         w == "nie" || w == "niemals" || w == "nor" || w == "neither";
}

}  // namespace

KeywordSet::KeywordSet(std::initializer_list<const char *> patterns) {
  for (const char *p : patterns) patterns_.push_back(text::to_lower(p));
  for (std::size_t i = 0; i < patterns_.size(); ++i) {
    const std::string &p = patterns_[i];
    if (!is_phrase_pattern(p)) {
      raw_.push_back(i);
      continue;
    }
    Phrase ph;
    ph.pattern = i;
    std::string cur;
    auto push = [&] {
      if (cur.empty()) return;
      bool pre = cur.back() == '*';
      if (pre) cur.pop_back();
      ph.words.push_back(cur);
      ph.prefix.push_back(pre);
      cur.clear();
    };
    for (char c : p) {
      if (c == ' ' || c == '-') push();
      else cur.push_back(c);
    }
    push();
    if (!ph.words.empty()) phrases_.push_back(std::move(ph));
  }
  // Index after phrases_ is final: the table's keys are views into the phrases' strings. At most a quarter
  // full, so probe chains stay short.
  std::size_t cap = 16;
  while (cap < phrases_.size() * 4) cap <<= 1;
  exact_first_.resize(cap);
  for (std::size_t k = 0; k < phrases_.size(); ++k) {
    const Phrase &ph = phrases_[k];
    if (ph.prefix[0]) prefix_first_[static_cast<unsigned char>(ph.words[0][0])].push_back(k);
    else exact_insert(ph.words[0]).push_back(k);
  }
}

std::uint64_t KeywordSet::key_hash(std::string_view k) {
  std::uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a: keys and tokens are short
  for (char c : k) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ULL;
  return h ^ (h >> 29);
}

std::vector<std::size_t> &KeywordSet::exact_insert(std::string_view key) {
  const std::size_t mask = exact_first_.size() - 1;
  std::size_t i = key_hash(key) & mask;
  while (!exact_first_[i].key.empty() && exact_first_[i].key != key) i = (i + 1) & mask;
  exact_first_[i].key = key;
  if (key.size() > exact_max_len_) exact_max_len_ = key.size();
  return exact_first_[i].phrases;
}

const std::vector<std::size_t> *KeywordSet::exact_find(std::string_view key) const {
  if (key.size() > exact_max_len_ || key.empty()) return nullptr;
  const std::size_t mask = exact_first_.size() - 1;
  for (std::size_t i = key_hash(key) & mask;; i = (i + 1) & mask) {
    const Bucket &b = exact_first_[i];
    if (b.key.empty()) return nullptr;
    if (b.key == key) return &b.phrases;
  }
}

bool KeywordSet::phrase_at(const TokenizedText &t, std::size_t ti, const Phrase &p) const {
  if (ti + p.words.size() > t.size()) return false;
  for (std::size_t w = 0; w < p.words.size(); ++w) {
    std::string_view tok = t.token(ti + w);
    if (p.prefix[w]) {
      if (tok.substr(0, p.words[w].size()) != p.words[w]) return false;
    } else if (tok != p.words[w]) {
      return false;
    }
  }
  return true;
}

bool negated_before(const TokenizedText &t, std::size_t ti) {
  std::size_t cur = ti;
  for (int k = 0; k < 3 && cur > 0; ++k) {
    std::size_t p = cur - 1;
    std::size_t gap_b = t.tokens[p].off + t.tokens[p].len;
    std::size_t gap_e = cur < t.size() ? t.tokens[cur].off : t.lowered.size();
    std::string_view gap = std::string_view(t.lowered).substr(gap_b, gap_e - gap_b);
    // "n't": the apostrophe belongs to the contraction, it does not end the clause.
    if (gap.find_first_of(",;:.!?()\n") != std::string_view::npos) return false;
    if (is_negator(t.token(p))) return true;
    cur = p;
  }
  return false;
}

template <class F> void KeywordSet::scan(const TokenizedText &t, bool skip_negated, F &&f) const {
  // Word phrases over tokens.
  for (std::size_t ti = 0; ti < t.size(); ++ti) {
    std::string_view tok = t.token(ti);
    auto check = [&](std::size_t k) {
      const Phrase &ph = phrases_[k];
      if (!phrase_at(t, ti, ph)) return true;
      if (skip_negated && negated_before(t, ti)) return true;
      return f(ph.pattern, static_cast<std::size_t>(t.tokens[ti].off));
    };
    if (const std::vector<std::size_t> *ks = exact_find(tok)) {
      for (std::size_t k : *ks)
        if (!check(k)) return;
    }
    for (std::size_t k : prefix_first_[static_cast<unsigned char>(tok[0])])
      if (!check(k)) return;
  }
  // Raw substrings.
  std::string_view low(t.lowered);
  for (std::size_t r : raw_) {
    const std::string &p = patterns_[r];
    bool wb = word_cp_at(p, 0);
    bool we = word_cp_before(p, p.size());
    for (std::size_t pos = low.find(p); pos != std::string_view::npos; pos = low.find(p, pos + 1)) {
      if (wb && word_cp_before(low, pos)) continue;
      if (we && word_cp_at(low, pos + p.size())) continue;
      if (skip_negated) {
        // The token at or after pos, for the negation look-back.
        auto it = std::lower_bound(t.tokens.begin(), t.tokens.end(), pos,
                                   [](const TokenizedText::Tok &tk, std::size_t v) { return tk.off < v; });
        if (negated_before(t, static_cast<std::size_t>(it - t.tokens.begin()))) continue;
      }
      if (!f(r, pos)) return;
    }
  }
}

const char *KeywordSet::find(const TokenizedText &t, bool skip_negated) const {
  std::size_t best_pos = std::string_view::npos, best = 0;
  scan(t, skip_negated, [&](std::size_t pattern, std::size_t pos) {
    if (pos < best_pos) {
      best_pos = pos;
      best = pattern;
    }
    return true;
  });
  return best_pos == std::string_view::npos ? nullptr : patterns_[best].c_str();
}

std::size_t KeywordSet::count(const TokenizedText &t, bool skip_negated) const {
  std::size_t n = 0;
  scan(t, skip_negated, [&](std::size_t, std::size_t) {
    ++n;
    return true;
  });
  return n;
}

std::size_t KeywordSet::count_and_find(const TokenizedText &t, bool skip_negated, const char **first) const {
  std::size_t n = 0, best_pos = std::string_view::npos, best = 0;
  scan(t, skip_negated, [&](std::size_t pattern, std::size_t pos) {
    ++n;
    if (pos < best_pos) {  // the same rule as find(): the first match reported at the smallest position
      best_pos = pos;
      best = pattern;
    }
    return true;
  });
  *first = best_pos == std::string_view::npos ? nullptr : patterns_[best].c_str();
  return n;
}

// ---- reference scanners ------------------------------------------------------------------------------------
// Whether byte c can start a quotation mark: '"', or the lead byte of „ “ ” (0xE2) or « » (0xC2). These bytes
// are never continuation bytes, so stepping byte-wise to them finds the same positions as stepping per code
// point with decode() (which steps over valid sequences only).
inline bool maybe_quote(unsigned char c) { return c == '"' || c == 0xE2 || c == 0xC2; }

std::size_t count_quotations(std::string_view s) {
  std::size_t n = 0;
  for (std::size_t i = 0; i < s.size();) {
    if (!maybe_quote(static_cast<unsigned char>(s[i]))) {
      ++i;
      continue;
    }
    text::Decoded d = text::decode(s, i);
    char32_t close = 0;
    switch (d.cp) {
      case 0x201E: close = 0x201C; break;  // „ … “
      case 0x201C: close = 0x201D; break;  // “ … ”
      case 0xAB: close = 0xBB; break;      // « … »
      case 0xBB: close = 0xAB; break;      // » … «
      case '"': close = '"'; break;
      default: break;
    }
    std::size_t after = i + static_cast<std::size_t>(d.len);
    if (close == 0) {
      i = after;
      continue;
    }
    // Find the closing mark; German „…” and "…" variants are common, so accept ” and “ for both openers.
    std::size_t j = after;
    bool found = false;
    while (j < s.size()) {
      if (!maybe_quote(static_cast<unsigned char>(s[j]))) {
        ++j;
        continue;
      }
      text::Decoded e = text::decode(s, j);
      if (e.cp == close || (close == 0x201C && e.cp == 0x201D) || (close == 0x201D && e.cp == 0x201C && d.cp != 0x201C)) {
        found = true;
        break;
      }
      j += static_cast<std::size_t>(e.len);
    }
    if (!found) {
      i = after;
      continue;
    }
    std::size_t words = 0;
    // Tokens of the text itself: lowercasing keeps every code point's class (word or not), so the count is
    // that of the lowercased text, without building it.
    text::for_each_token(s.substr(after, j - after), [&](std::string_view) { ++words; });
    if (words >= 2) ++n;
    i = j + static_cast<std::size_t>(text::decode(s, j).len);
  }
  return n;
}

std::size_t count_bracket_refs(std::string_view s) {
  std::size_t n = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '[') {
      // Straight to the next '[' (memchr is vectorised); none left: done.
      const void *q = std::memchr(s.data() + i, '[', s.size() - i);
      if (q == nullptr) break;
      i = static_cast<std::size_t>(static_cast<const char *>(q) - s.data());
    }
    std::size_t j = s.find(']', i + 1);
    if (j == std::string_view::npos || j - i > 24) continue;
    if (j + 1 < s.size() && s[j + 1] == '(') continue;  // markdown link
    std::string_view in = s.substr(i + 1, j - i - 1);
    bool digit = false, ok = !in.empty();
    for (char c : in) {
      if (c >= '0' && c <= '9') digit = true;
      else if (!(std::isalpha(static_cast<unsigned char>(c)) || c == ' ' || c == ',' || c == '-' || c == '_' || c == '.' || c == ':' ||
                 static_cast<unsigned char>(c) >= 0x80))
        ok = false;
    }
    if (ok && digit) ++n;
    i = j;
  }
  return n;
}

std::size_t count_paren_refs(std::string_view s) {
  static constexpr std::array<std::string_view, 22> heads{
      "kap.",  "kapitel", "s. ",     "seite", "abschnitt", "abs.", "section", "sec.", "p. ",    "pp.",    "page",
      "doc",   "dokument", "quelle", "source", "ref",      "vgl.", "cf.",     "art.", "anhang", "appendix", "chapter"};
  std::size_t n = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '(') {
      const void *q = std::memchr(s.data() + i, '(', s.size() - i);  // straight to the next '('
      if (q == nullptr) break;
      i = static_cast<std::size_t>(static_cast<const char *>(q) - s.data());
    }
    std::size_t j = i + 1;
    while (j < s.size() && s[j] == ' ') ++j;
    char buf[12];  // the next 12 bytes lowercased (no heap string per parenthesis)
    std::size_t m = 0;
    for (std::size_t k = j; k < s.size() && k < j + 12; ++k)
      buf[m++] = static_cast<char>(std::tolower(static_cast<unsigned char>(s[k])));
    const std::string_view low(buf, m);
    for (auto h : heads) {
      if (low.compare(0, h.size(), h) == 0) {
        ++n;
        break;
      }
    }
  }
  return n;
}

}  // namespace ksodi::detect
