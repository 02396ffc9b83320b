// The text library (evalgraph/text.hpp), sentences: prose split at sentence ends (abbreviations, ordinals and
// numbers aside); lists, headings, tables and code are units of their own.
#include "evalgraph/text.hpp"
#include "evalgraph/utf8.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <initializer_list>
#include <span>

#include "internal.hpp"

namespace evalgraph::text {

using detail::WordSet;

// ---- sentences ---------------------------------------------------------------------------------------------
namespace {

// Byte length of a whitespace character at s[i] (ASCII space, NBSP, thin/narrow spaces), 0 if none.
std::size_t space_len(std::string_view s, std::size_t i) {
  unsigned char c = static_cast<unsigned char>(s[i]);
  if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') return 1;
  if (c == 0xC2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) == 0xA0) return 2;
  if (c == 0xE2 && i + 2 < s.size() && static_cast<unsigned char>(s[i + 1]) == 0x80) {
    unsigned char d = static_cast<unsigned char>(s[i + 2]);
    if (d == 0xAF || (d >= 0x80 && d <= 0x8A)) return 3;
  }
  return 0;
}

// Byte length of a closing quote/bracket/emphasis character at s[i], 0 if none.
std::size_t closer_len(std::string_view s, std::size_t i) {
  char c = s[i];
  if (c == '"' || c == '\'' || c == ')' || c == ']' || c == '*' || c == '_') return 1;
  Decoded d = decode(s, i);
  switch (d.cp) {
    case 0x201D: case 0x201C: case 0x2019: case 0x2018: case 0xBB: case 0xAB: return static_cast<std::size_t>(d.len);
    default: return 0;
  }
}


const WordSet &abbreviations() {
  // Lowercased, without the final period. Single letters (z. B., u. a., S., e.g., i.e.) need no entry.
  static const WordSet s{
      "bzw", "usw", "ca", "nr", "dr", "prof", "etc", "vs", "mr", "mrs", "ms", "fig", "kap", "abs", "vgl", "ggf", "evtl",
      "inkl", "exkl", "zzgl", "bspw", "sog", "str", "tel", "abb", "jh", "jhd", "mio", "mrd", "std", "min", "max", "sek",
      "hr", "fr", "dipl", "ing", "st", "no", "vol", "approx", "dept", "corp", "inc", "ltd", "co", "jr", "sr", "jan",
      "feb", "mär", "apr", "jun", "jul", "aug", "sep", "sept", "okt", "oct", "nov", "dez", "dec", "bd", "hrsg", "aufl",
      "ff", "usf", "allg", "anm", "bes", "betr", "bzgl", "geb", "gegr", "zb", "lt", "ehem", "einschl", "entspr", "gem",
      "od", "resp", "zz", "zzt", "pp", "pg", "sec", "art", "para", "ref", "cf", "al", "ibid", "wg", "ua", "dh", "uvm",
      "tsd", "eur", "mwst", "ust", "lfd", "akt", "ggü", "insb", "insbes", "jew", "urspr", "zt", "tw", "vorm", "nachm"};
  return s;
}

const WordSet &ordinal_followers() {
  // After "<number>." these words mark an ordinal, not a sentence end: "am 3. Mai", "der 2. Schritt".
  static const WordSet s{
      "januar", "februar", "märz", "april", "mai", "juni", "juli", "august", "september", "oktober", "november",
      "dezember", "jan", "feb", "mär", "apr", "jun", "jul", "aug", "sep", "sept", "okt", "nov", "dez", "schritt",
      "stelle", "platz", "kapitel", "absatz", "abschnitt", "jahrhundert", "quartal", "klasse", "auflage", "stock",
      "etage", "obergeschoss", "tag", "tages", "woche", "monat", "monats", "jahr", "runde", "liga", "mahnung", "mal",
      "ordnung", "grades", "semester", "lebensjahr", "geburtstag", "kalenderwoche", "kw", "bundesliga", "version",
      "stufe", "ebene", "level", "reihe", "zeile", "spalte", "punkt", "teil", "band", "ausgabe", "stunde", "minute"};
  return s;
}

bool has_word_cp(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    Decoded d = decode(s, i);
    if (is_word_cp(d.cp)) return true;
    i += static_cast<std::size_t>(d.len);
  }
  return false;
}

void push_unit(std::string_view u, std::vector<std::string_view> &out) {
  u = trim(u);
  if (!u.empty() && has_word_cp(u)) out.push_back(u);
}

// Whether one of the 8 bytes at p is '.', '!', '?' or 0xE2 (a yes/no answer for the whole word, with the
// classic "has a zero byte" bit trick).
bool maybe_terminator8(const char *p) {
  std::uint64_t w;
  std::memcpy(&w, p, 8);
  constexpr std::uint64_t ones = 0x0101010101010101ULL, high = 0x8080808080808080ULL;
  auto zero = [](std::uint64_t x) { return (x - ones) & ~x; };
  return ((zero(w ^ (ones * '.')) | zero(w ^ (ones * '!')) | zero(w ^ (ones * '?')) | zero(w ^ (ones * 0xE2))) & high) != 0;
}

bool is_terminator_at(std::string_view s, std::size_t i, std::size_t &len) {
  char c = s[i];
  if (c == '.' || c == '!' || c == '?') {
    len = 1;
    return true;
  }
  if (static_cast<unsigned char>(c) == 0xE2 && i + 2 < s.size() && static_cast<unsigned char>(s[i + 1]) == 0x80 &&
      static_cast<unsigned char>(s[i + 2]) == 0xA6) {  // …
    len = 3;
    return true;
  }
  return false;
}

}  // namespace

void split_prose(std::string_view run, std::vector<std::string_view> &out) {
  const std::size_t n = run.size();
  std::size_t seg = 0, i = 0;
  std::string low;
  while (i < n) {
    std::size_t tl = 0;
    if (!is_terminator_at(run, i, tl)) {
      // Skip to the next byte that can start a terminator ('.', '!', '?' or the lead byte 0xE2 of '…').
      // Stepping byte-wise finds the same positions as stepping per code point: these bytes never occur
      // inside a (valid or invalid) multi-byte sequence that decode() would step over.
      ++i;
      while (i + 8 <= n && !maybe_terminator8(run.data() + i)) i += 8;
      while (i < n) {
        char b = run[i];
        if (b == '.' || b == '!' || b == '?' || static_cast<unsigned char>(b) == 0xE2) break;
        ++i;
      }
      continue;
    }
    const bool single_period = run[i] == '.' && (i + 1 >= n || run[i + 1] != '.');
    std::size_t j = i;
    while (j < n && is_terminator_at(run, j, tl)) j += tl;
    std::size_t k = j, cl = 0;
    while (k < n && (cl = closer_len(run, k)) > 0) k += cl;
    if (k < n && space_len(run, k) == 0) {  // "3.5", "e.g.", "z.B.", "example.com", "v1.2": no boundary
      i = j;
      continue;
    }
    std::size_t m = k, sl = 0;
    while (m < n && (sl = space_len(run, m)) > 0) m += sl;
    if (m >= n) break;  // the rest is the last unit
    Decoded next = decode(run, m);
    bool boundary = !is_lower_letter(next.cp);
    if (boundary && single_period && j == i + 1) {
      // The word right before the period.
      std::size_t ws = i;
      int cps = 0;
      bool all_digits = true;
      while (ws > 0) {
        std::size_t p = prev_cp_start(run, ws);
        Decoded d = decode(run, p);
        if (!is_word_cp(d.cp)) break;
        if (d.cp < '0' || d.cp > '9') all_digits = false;
        ws = p;
        ++cps;
      }
      if (cps > 0) {
        low.clear();
        to_lower_append(run.substr(ws, i - ws), low);
        if (all_digits) {
          // Ordinal ("am 3. Mai", "1. Schritt") or a date ("3. 5. 2024").
          std::size_t we = m;
          while (we < n) {
            Decoded d = decode(run, we);
            if (!is_word_cp(d.cp)) break;
            we += static_cast<std::size_t>(d.len);
          }
          std::string nw = to_lower(run.substr(m, we - m));
          if ((next.cp >= '0' && next.cp <= '9') || ordinal_followers().contains(nw)) boundary = false;
        } else if (cps == 1) {
          boundary = false;  // single letter: z. B., u. a., d. h., S. 12, e.g., initials
        } else if (abbreviations().contains(low)) {
          boundary = false;
        }
      }
    }
    if (boundary) {
      push_unit(run.substr(seg, k - seg), out);
      seg = m;
      i = m;
    } else {
      i = j;
    }
  }
  if (seg < n) push_unit(run.substr(seg), out);
}

// (internal.hpp)
void detail::append_sentences(std::string_view text, std::span<const Line> lines, std::vector<std::string_view> &out) {
  const char *base = text.data();
  bool open = false;
  std::size_t rs = 0, re = 0;  // the current prose run [rs, re) in text
  auto flush = [&] {
    if (open && re > rs) split_prose(text.substr(rs, re - rs), out);
    open = false;
  };
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const Line &L = lines[i];
    switch (L.kind) {
      case LineKind::Text:
        if (!open) {
          open = true;
          rs = static_cast<std::size_t>(L.content.data() - base);
        }
        re = L.offset + L.raw.size();
        break;
      case LineKind::Bullet:
      case LineKind::Numbered:
        flush();
        if (!L.content.empty()) {
          open = true;
          rs = static_cast<std::size_t>(L.content.data() - base);
          re = rs + L.content.size();
        }
        break;
      case LineKind::TableRow: {
        flush();
        if (i + 1 < lines.size() && lines[i + 1].kind == LineKind::TableSep) break;  // header row
        std::string_view row = trim(L.raw);
        while (!row.empty() && row.front() == '|') row.remove_prefix(1);
        while (!row.empty() && row.back() == '|') row.remove_suffix(1);
        push_unit(row, out);
        break;
      }
      default:  // blank, headings, rules, table separators, code: end the run, contribute no unit
        flush();
        break;
    }
  }
  flush();
}

std::vector<std::string_view> split_sentences(std::string_view text, const std::vector<Line> &lines) {
  std::vector<std::string_view> out;
  detail::append_sentences(text, lines, out);
  return out;
}

std::vector<std::string_view> split_sentences(std::string_view text) { return split_sentences(text, classify_lines(text)); }

}  // namespace evalgraph::text
