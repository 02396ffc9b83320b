// The text library (evalgraph/text.hpp), markdown lines and paragraphs: what each line of a text is (heading,
// bullet, numbered item, table row, code, rule, prose) and the paragraphs they make.
#include "evalgraph/text.hpp"
#include "evalgraph/utf8.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <initializer_list>
#include <span>

namespace evalgraph::text {

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

}  // namespace evalgraph::text
