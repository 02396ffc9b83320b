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

// ---- markdown lines ----------------------------------------------------------------------------------------
namespace {

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// Byte length of a bullet marker at the start of s (followed by a space or tab), 0 if none.
std::size_t bullet_marker(std::string_view s) {
  static constexpr std::array<std::string_view, 8> marks{"-", "*", "+", "\u2022", "\u25E6", "\u2023", "\u2013", "\u25AA"};
  for (auto m : marks) {
    if (starts_with(s, m) && s.size() > m.size() && (s[m.size()] == ' ' || s[m.size()] == '\t')) return m.size();
  }
  return 0;
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// Numbered item marker: "1. ", "2) ", "(3) ", "Schritt 4:", "Step 5 -", optionally wrapped in ** **.
// Returns the byte length of the marker (0 if none) and sets number.
std::size_t numbered_marker(std::string_view s, int &number) {
  std::size_t i = 0;
  auto digits = [&](std::size_t from, std::size_t &to) {
    to = from;
    while (to < s.size() && is_digit(s[to]) && to - from < 4) ++to;
    return to > from && to - from <= 3;
  };
  auto parse = [&](std::size_t a, std::size_t b) {
    int v = 0;
    for (std::size_t k = a; k < b; ++k) v = v * 10 + (s[k] - '0');
    return v;
  };
  std::size_t e = 0;
  bool paren = false;
  if (i < s.size() && s[i] == '(') {
    paren = true;
    ++i;
  }
  if (digits(i, e)) {
    if (e < s.size() && (s[e] == ')' || (!paren && s[e] == '.')) && (e + 1 == s.size() || s[e + 1] == ' ' || s[e + 1] == '\t')) {
      number = parse(i, e);
      return e + 1;
    }
    return 0;
  }
  if (paren) return 0;
  // "Schritt N" / "Step N" at the start of the line, optionally bold.
  std::size_t j = 0;
  if (starts_with(s, "**") || starts_with(s, "__")) j = 2;
  std::string low;
  for (std::size_t k = j; k < s.size() && k < j + 8; ++k) low.push_back(static_cast<char>((s[k] >= 'A' && s[k] <= 'Z') ? s[k] + 32 : s[k]));
  std::size_t wlen = 0;
  if (starts_with(low, "schritt ")) wlen = 8;
  else if (starts_with(low, "step ")) wlen = 5;
  if (wlen == 0) return 0;
  std::size_t d0 = j + wlen;
  if (!digits(d0, e)) return 0;
  if (e < s.size() && !(s[e] == ':' || s[e] == '.' || s[e] == ')' || s[e] == ' ' || s[e] == '-' || s[e] == '*' || s[e] == '_')) return 0;
  number = parse(d0, e);
  while (e < s.size() && (s[e] == ':' || s[e] == '.' || s[e] == ')' || s[e] == '*' || s[e] == '_')) ++e;
  return e;
}

bool is_rule(std::string_view body) {
  char ch = 0;
  int count = 0;
  for (char c : body) {
    if (c == ' ' || c == '\t') continue;
    if (c != '-' && c != '*' && c != '_' && c != '=') return false;
    if (ch != 0 && c != ch) return false;
    ch = c;
    ++count;
  }
  return count >= 3;
}

bool is_table_sep(std::string_view body) {
  bool pipe = false, dash = false;
  for (char c : body) {
    if (c == '|') pipe = true;
    else if (c == '-') dash = true;
    else if (c != ':' && c != ' ' && c != '\t') return false;
  }
  return pipe && dash;
}

std::size_t count_char(std::string_view s, char c) { return static_cast<std::size_t>(std::count(s.begin(), s.end(), c)); }

bool is_fence(std::string_view body, char &fch, std::size_t &flen) {
  if (body.size() < 3 || (body[0] != '`' && body[0] != '~')) return false;
  std::size_t k = 0;
  while (k < body.size() && body[k] == body[0]) ++k;
  if (k < 3) return false;
  fch = body[0];
  flen = k;
  return true;
}

std::size_t word_count(std::string_view s) {
  std::size_t n = 0;
  bool in = false;
  for (char c : s) {
    bool sp = c == ' ' || c == '\t';
    if (!sp && !in) ++n;
    in = !sp;
  }
  return n;
}

// A code fence that is open (``` or ~~~, at least `len` of `ch`).
struct Fence {
  bool open = false;
  char ch = 0;
  std::size_t len = 0;
};

// A line inside a fenced block: code, or the fence that closes it.
void classify_code(Line &L, std::string_view body, Fence &fence) {
  char fch = 0;
  std::size_t flen = 0;
  if (L.indent <= 3 && is_fence(body, fch, flen) && fch == fence.ch && flen >= fence.len && trim(body.substr(flen)).empty()) {
    L.kind = LineKind::FenceClose;
    fence.open = false;
  } else {
    L.kind = LineKind::Code;
    L.content = L.raw;
  }
}

// "# Title" (up to six #), else text.
void classify_hashes(Line &L, std::string_view body) {
  std::size_t h = 0;
  while (h < body.size() && body[h] == '#') ++h;
  if (h <= 6 && (h == body.size() || body[h] == ' ' || body[h] == '\t')) {
    L.kind = LineKind::Heading;
    L.content = trim(body.substr(h));
  } else {
    L.kind = LineKind::Text;
    L.content = body;
  }
}

// A whole line in bold (**Title** or __Title__), used as a title.
bool bold_line(std::string_view body) {
  if (body.size() < 5) return false;
  for (std::string_view mark : {"**", "__"})
    if (starts_with(body, mark) && body.substr(body.size() - 2) == mark &&
        body.substr(2, body.size() - 4).find(mark) == std::string_view::npos)
      return true;
  return false;
}

// A line outside code, its block-quote markers removed: fence, blank, table, rule, heading, list item or text.
void classify_body(Line &L, std::string_view body, Fence &fence) {
  body = trim(body);
  char fch = 0;
  std::size_t flen = 0, m = 0;
  int number = -1;
  if (is_fence(body, fch, flen) && L.indent <= 3) {
    L.kind = LineKind::FenceOpen;
    L.info = trim(body.substr(flen));
    fence = {true, fch, flen};
  } else if (body.empty()) {
    L.kind = LineKind::Blank;
  } else if (is_table_sep(body)) {
    L.kind = LineKind::TableSep;
  } else if (is_rule(body)) {
    L.kind = LineKind::Rule;
  } else if (body[0] == '#') {
    classify_hashes(L, body);
  } else if ((m = bullet_marker(body)) > 0) {
    L.kind = LineKind::Bullet;
    L.content = trim(body.substr(m));
  } else if ((m = numbered_marker(body, number)) > 0) {
    L.kind = LineKind::Numbered;
    L.number = number;
    L.content = trim(body.substr(m));
  } else if (body[0] == '|' && count_char(body, '|') >= 2) {
    L.kind = LineKind::TableRow;
    L.content = body;
  } else if (bold_line(body)) {
    L.kind = LineKind::Heading;  // a whole-line bold title
    L.content = trim(body.substr(2, body.size() - 4));
  } else if (body.back() == ':' && body.size() <= 40 && word_count(body) <= 3 && body.find('|') == std::string_view::npos) {
    L.kind = LineKind::Heading;  // a short label line such as "Fazit:" or "Next steps:"
    L.content = body;
  } else {
    L.kind = LineKind::Text;
    L.content = body;
  }
}

// One line (its \r removed) with its indentation (a tab counts 4), classified in the light of an open fence.
Line classify_line(std::string_view raw, std::size_t offset, Fence &fence) {
  Line L;
  L.raw = raw;
  L.offset = offset;
  std::size_t k = 0;
  int indent = 0;
  while (k < raw.size() && (raw[k] == ' ' || raw[k] == '\t')) {
    indent += raw[k] == '\t' ? 4 : 1;
    ++k;
  }
  L.indent = indent;
  std::string_view body = raw.substr(k);
  if (fence.open) {
    classify_code(L, body, fence);
  } else if (trim(body).empty()) {
    L.kind = LineKind::Blank;
  } else {
    // Block quotes: classify what follows the '>' markers.
    while (!body.empty() && body[0] == '>') {
      body.remove_prefix(1);
      while (!body.empty() && (body[0] == ' ' || body[0] == '\t')) body.remove_prefix(1);
    }
    classify_body(L, body, fence);
  }
  return L;
}

// Second pass: rows of tables without leading pipes ("a | b") around a separator; setext headings.
void mark_tables_and_setext_headings(std::vector<Line> &lines) {
  for (std::size_t i = 0; i < lines.size(); ++i) {
    Line &L = lines[i];
    if (L.kind == LineKind::TableSep) {
      if (i > 0 && lines[i - 1].kind == LineKind::Text && count_char(lines[i - 1].raw, '|') >= 1) lines[i - 1].kind = LineKind::TableRow;
      for (std::size_t j = i + 1; j < lines.size(); ++j) {
        if (lines[j].kind == LineKind::Text && count_char(lines[j].raw, '|') >= 1) lines[j].kind = LineKind::TableRow;
        else if (lines[j].kind != LineKind::TableRow) break;
      }
    } else if (L.kind == LineKind::Rule && i > 0 && lines[i - 1].kind == LineKind::Text) {
      std::string_view b = trim(L.raw);
      if (!b.empty() && (b[0] == '=' || b[0] == '-')) lines[i - 1].kind = LineKind::Heading;
    }
  }
}

}  // namespace

std::vector<Line> classify_lines(std::string_view text) {
  std::vector<Line> lines;
  Fence fence;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    std::size_t nl = text.find('\n', pos);
    std::size_t end = nl == std::string_view::npos ? text.size() : nl;
    std::string_view raw = text.substr(pos, end - pos);
    if (!raw.empty() && raw.back() == '\r') raw.remove_suffix(1);
    lines.push_back(classify_line(raw, pos, fence));
    if (nl == std::string_view::npos) break;
    pos = nl + 1;
  }
  mark_tables_and_setext_headings(lines);
  return lines;
}

// ---- paragraphs --------------------------------------------------------------------------------------------
std::vector<Paragraph> split_paragraphs(std::string_view text, const std::vector<Line> &lines) {
  std::vector<Paragraph> out;
  bool open = false;
  BlockKind kind = BlockKind::Prose;
  std::size_t first = 0, last = 0;
  auto close = [&] {
    if (!open) return;
    const Line &a = lines[first];
    const Line &b = lines[last];
    Paragraph p;
    p.text = text.substr(a.offset, b.offset + b.raw.size() - a.offset);
    p.kind = kind;
    p.first_line = first;
    p.last_line = last;
    out.push_back(p);
    open = false;
  };
  auto start = [&](std::size_t i, BlockKind k) {
    open = true;
    kind = k;
    first = last = i;
  };
  for (std::size_t i = 0; i < lines.size(); ++i) {
    LineKind lk = lines[i].kind;
    switch (lk) {
      case LineKind::Blank:
      case LineKind::Rule:
        close();
        break;
      case LineKind::FenceOpen: {
        close();
        std::size_t j = i + 1;
        while (j < lines.size() && lines[j].kind == LineKind::Code) ++j;
        if (j >= lines.size()) j = lines.size() - 1;  // unclosed fence: the block runs to the end
        start(i, BlockKind::Code);
        last = j;
        close();
        i = j;
        break;
      }
      case LineKind::TableRow:
      case LineKind::TableSep:
        if (!open || kind != BlockKind::Table) {
          close();
          start(i, BlockKind::Table);
        }
        last = i;
        break;
      default:
        if (open && (kind != BlockKind::Prose || (lk == LineKind::Heading && !lines[i].raw.empty() && trim(lines[i].raw)[0] == '#'))) close();
        if (!open) start(i, BlockKind::Prose);
        last = i;
        break;
    }
  }
  close();
  return out;
}

std::vector<Paragraph> split_paragraphs(std::string_view text) { return split_paragraphs(text, classify_lines(text)); }

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

// A fixed set of short words in an open-addressing table (built once, read-only afterwards, so thread-safe):
// looked up at most sentence ends, where std::unordered_set's hashing and node chasing showed in profiles.
class WordSet {
 public:
  WordSet(std::initializer_list<std::string_view> words) {
    std::size_t cap = 16;
    while (cap < words.size() * 4) cap <<= 1;
    slots_.resize(cap);
    for (std::string_view w : words) {
      if (w.size() > max_len_) max_len_ = w.size();
      std::size_t i = hash(w) & (cap - 1);
      while (!slots_[i].empty() && slots_[i] != w) i = (i + 1) & (cap - 1);
      slots_[i] = w;
    }
  }
  bool contains(std::string_view w) const {
    if (w.empty() || w.size() > max_len_) return false;
    const std::size_t mask = slots_.size() - 1;
    for (std::size_t i = hash(w) & mask;; i = (i + 1) & mask) {
      if (slots_[i].empty()) return false;
      if (slots_[i] == w) return true;
    }
  }

 private:
  static std::uint64_t hash(std::string_view w) {
    std::uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a
    for (char c : w) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ULL;
    return h ^ (h >> 29);
  }
  std::vector<std::string_view> slots_;  // empty: a free slot (the sets hold no empty word)
  std::size_t max_len_ = 0;
};

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

namespace {

// The sentences of the lines [lines.begin(), lines.end()) of text, appended to out (split_sentences and the prose
// runs of split_claims, which pass a part of the text's lines without copying them).
void append_sentences(std::string_view text, std::span<const Line> lines, std::vector<std::string_view> &out) {
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

}  // namespace

std::vector<std::string_view> split_sentences(std::string_view text, const std::vector<Line> &lines) {
  std::vector<std::string_view> out;
  append_sentences(text, lines, out);
  return out;
}

std::vector<std::string_view> split_sentences(std::string_view text) { return split_sentences(text, classify_lines(text)); }

// ---- claims: JSON answers ----------------------------------------------------------------------------------
namespace {

bool ident_char(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'; }

// One line of a candidate code value. A keyword that cannot start a sentence (def, const, lambda, …) makes a line
// code unless it ends like a sentence; one that can ("If the file is empty, skip it", "Let me know", "Print the
// form", "Select the rows") counts only as one sign of the two a line needs.
bool code_line(std::string_view line) {
  line = trim(line);
  if (line.empty()) return false;
  static const WordSet code_keywords{"def", "elif", "const", "var", "function", "fn", "func", "lambda", "async",
                                     "await", "void", "int", "#include"};
  static const WordSet prose_keywords{"import", "from", "class", "return", "let", "for", "while", "if", "else",
                                      "try", "except", "catch", "public", "private", "static", "select", "insert",
                                      "update", "delete", "print", "echo", "using", "package", "yield", "with"};
  std::size_t w = 0;
  while (w < line.size() && (ident_char(line[w]) || (w == 0 && line[w] == '#'))) ++w;
  int signs = 0;
  bool code_keyword = false;
  if (w > 0 && w < line.size() && (line[w] == ' ' || line[w] == '(' || line[w] == ':')) {
    const std::string word = to_lower(line.substr(0, w));
    code_keyword = code_keywords.contains(word);
    signs += code_keyword || prose_keywords.contains(word) ? 1 : 0;
  }
  bool call = false, assign = false, brackets = false;
  for (std::size_t i = 1; i < line.size(); ++i) {
    const char c = line[i];
    if (c == '(' && ident_char(line[i - 1]) && line.find(')', i) != std::string_view::npos) call = true;
    if (c == '=' && line[i - 1] != '=' && line[i - 1] != '!' && line[i - 1] != '<' && line[i - 1] != '>' &&
        (i + 1 >= line.size() || line[i + 1] != '=')) assign = true;
    if ((c == '[' && line.find(']', i) != std::string_view::npos) || c == '{') brackets = true;
  }
  const char last = line.back();
  signs += (call ? 1 : 0) + (assign ? 1 : 0) + (brackets ? 1 : 0) + ((last == ';' || last == '{' || last == '}') ? 1 : 0);
  const bool sentence_end = last == '.' || last == '!' || last == '?';
  return signs >= 2 || (code_keyword && !sentence_end);
}

// The pieces of a JSON string value between its line breaks (escaped "\n" or raw), each a view into the value.
template <class F> void for_each_value_line(std::string_view v, F &&f) {
  std::size_t start = 0;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (v[i] == '\n') {
      f(v.substr(start, i - start));
      start = i + 1;
    } else if (v[i] == '\\' && i + 1 < v.size()) {
      if (v[i + 1] == 'n' || v[i + 1] == 'r') {
        f(v.substr(start, i - start));
        start = i + 2;
      }
      ++i;  // an escaped character never starts a break of its own ("\\n" is a backslash and an n)
    }
  }
  f(v.substr(start));
}

// The string values of the JSON text starting at json[0] ('{' or '['): each value's pieces go to prose(); the
// scan ends where the outermost bracket closes (or at the end). Returns the bytes consumed.
template <class F> std::size_t scan_json_values(std::string_view json, F &&prose) {
  int depth = 0;
  std::size_t i = 0;
  while (i < json.size()) {
    const char c = json[i];
    if (c == '{' || c == '[') {
      ++depth;
    } else if (c == '}' || c == ']') {
      if (--depth <= 0) return i + 1;
    } else if (c == '"') {
      std::size_t j = i + 1;
      while (j < json.size() && json[j] != '"') j += json[j] == '\\' ? 2 : 1;
      const std::string_view value = json.substr(i + 1, std::min(j, json.size()) - i - 1);
      std::size_t k = j + 1;
      while (k < json.size() && (json[k] == ' ' || json[k] == '\t' || json[k] == '\n' || json[k] == '\r')) ++k;
      const bool key = k < json.size() && json[k] == ':';
      if (!key && !looks_like_code(value)) for_each_value_line(value, prose);
      i = j;
    }
    ++i;
  }
  return json.size();
}

// "{" then a key or "}", or "[" then an object, a string or an array: a JSON text, not "[1] Smith" or "[link](…)".
bool json_start(std::string_view s) {
  if (s.empty() || (s[0] != '{' && s[0] != '[')) return false;
  std::size_t k = 1;
  while (k < s.size() && (s[k] == ' ' || s[k] == '\t')) ++k;
  if (k == s.size()) return true;  // a pretty-printed JSON's first line
  return s[0] == '{' ? (s[k] == '"' || s[k] == '}') : (s[k] == '{' || s[k] == '"' || s[k] == '[');
}

}  // namespace

bool looks_like_code(std::string_view value) {
  int lines = 0, code = 0;
  for_each_value_line(value, [&](std::string_view line) {
    if (trim(line).empty()) return;
    ++lines;
    code += code_line(line) ? 1 : 0;
  });
  return lines > 0 && 2 * code >= lines + (lines == 1 ? 1 : 0);
}

std::vector<std::string_view> split_claims(std::string_view text) {
  const std::vector<Line> lines = classify_lines(text);
  std::vector<std::string_view> out;
  // Runs of lines outside JSON paragraphs are split into sentences as split_sentences does, over their lines.
  std::size_t i = 0, run_start = 0;
  auto flush = [&](std::size_t end_line) {
    if (end_line > run_start) append_sentences(text, std::span<const Line>(lines).subspan(run_start, end_line - run_start), out);
  };
  while (i < lines.size()) {
    const Line &L = lines[i];
    const bool para_start = i == 0 || lines[i - 1].kind == LineKind::Blank;
    if (L.kind == LineKind::Text && para_start && json_start(L.content)) {
      flush(i);
      // The JSON ends where its outermost bracket closes, or (unclosed) with its paragraph.
      std::size_t para_end = i;
      while (para_end < lines.size() && lines[para_end].kind != LineKind::Blank) ++para_end;
      const std::size_t from = static_cast<std::size_t>(L.content.data() - text.data());
      const std::size_t to = para_end < lines.size() ? lines[para_end].offset : text.size();
      const std::size_t used = scan_json_values(text.substr(from, to - from), [&](std::string_view piece) { split_prose(piece, out); });
      const std::size_t end = from + used;
      while (i < lines.size() && lines[i].offset < end) ++i;  // lines after the JSON's end are text again
      run_start = i;
      continue;
    }
    ++i;
  }
  flush(lines.size());
  return out;
}

}  // namespace evalgraph::text
