// The text library (evalgraph/text.hpp), claims: a JSON answer's string values read as prose, code left out.
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
    if (end_line > run_start) detail::append_sentences(text, std::span<const Line>(lines).subspan(run_start, end_line - run_start), out);
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
