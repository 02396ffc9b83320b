// ksodi_text — text handling shared by the KSODI-Standard operators (S0, K0, O0).
//
// Everything here is a hand-written scanner (no std::regex: it is far too slow for the per-record hot path)
// and works on UTF-8 text. Views returned by these functions point into the caller's text.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ksodi::text {

// ---- UTF-8 -------------------------------------------------------------------------------------------------
struct Decoded {
  char32_t cp;  // U+FFFD for an invalid byte
  int len;      // bytes consumed (>= 1)
};
Decoded decode(std::string_view s, std::size_t i);
void append_utf8(std::string &out, char32_t cp);
// Start of the code point that ends right before byte position i (i > 0).
std::size_t prev_cp_start(std::string_view s, std::size_t i);

// Lowercase mapping for ASCII, Latin-1 supplement (Ä Ö Ü → ä ö ü, …), Latin Extended-A, capital sharp s
// (ẞ → ß), basic Greek and Cyrillic. Other code points map to themselves.
char32_t lower_cp(char32_t cp);
// Letters and digits: ASCII alnum, Latin-1/Extended-A letters, and any other code point outside the
// punctuation/symbol blocks (so Greek, Cyrillic, CJK … count as word characters).
bool is_word_cp(char32_t cp);
// A lowercase letter in the scripts lower_cp knows (used by the sentence splitter: a sentence never starts
// with one).
bool is_lower_letter(char32_t cp);

std::string to_lower(std::string_view s);
void to_lower_append(std::string_view s, std::string &out);

// Calls f(token) for every maximal run of word code points in `lowered` (already lowercased text).
template <class F> void for_each_token(std::string_view lowered, F &&f) {
  std::size_t i = 0, n = lowered.size(), start = 0;
  bool in_tok = false;
  while (i < n) {
    unsigned char c = static_cast<unsigned char>(lowered[i]);
    bool word;
    int len = 1;
    if (c < 0x80) {
      word = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z');
    } else {
      Decoded d = decode(lowered, i);
      len = d.len;
      word = is_word_cp(d.cp);
    }
    if (word && !in_tok) {
      start = i;
      in_tok = true;
    } else if (!word && in_tok) {
      f(lowered.substr(start, i - start));
      in_tok = false;
    }
    i += static_cast<std::size_t>(len);
  }
  if (in_tok) f(lowered.substr(start, n - start));
}

// Lowercased tokens of `text` as owned strings (convenience for tests and cold paths).
std::vector<std::string> tokenize(std::string_view text);

// A text lowercased once, with its tokens (views into `lowered`) — input of the keyword detectors.
// Tokens are stored as offsets so that the object can be copied and moved safely.
struct TokenizedText {
  struct Tok {
    std::uint32_t off, len;
  };
  std::string lowered;
  std::vector<Tok> tokens;
  void assign(std::string_view text);
  std::string_view token(std::size_t i) const { return std::string_view(lowered).substr(tokens[i].off, tokens[i].len); }
  std::size_t size() const { return tokens.size(); }
};

// ---- markdown lines ----------------------------------------------------------------------------------------
enum class LineKind {
  Blank,
  FenceOpen,   // ``` or ~~~ opening a code block (info string in `info`)
  FenceClose,  // the matching closing fence
  Code,        // a line inside a fenced code block
  Heading,     // "# …" (ATX), a whole-line **bold** title, a setext title, or a short label line "Fazit:"
  Bullet,      // "- ", "* ", "+ ", "• ", "◦ ", "‣ ", "– " (any indentation)
  Numbered,    // "1. ", "2) ", "(3) ", "Schritt 4:", "Step 5 -" (any indentation)
  TableRow,    // a row of a pipe table
  TableSep,    // the |---|:--:| separator row of a pipe table
  Rule,        // ---, ***, ___, === (horizontal rule or setext underline)
  Text
};

struct Line {
  std::string_view raw;      // the line without its line break (a trailing \r removed)
  std::size_t offset = 0;    // byte offset of raw in the text
  LineKind kind = LineKind::Text;
  std::string_view content;  // the line after its list/heading/quote marker, trimmed
  int number = -1;           // the item number of a Numbered line
  std::string_view info;     // FenceOpen: the info string (e.g. "json")
  int indent = 0;            // leading spaces (a tab counts 4)
};

std::vector<Line> classify_lines(std::string_view text);

// ---- paragraphs --------------------------------------------------------------------------------------------
enum class BlockKind { Prose, Code, Table };
struct Paragraph {
  std::string_view text;  // from the first to the last line of the block, in the original text
  BlockKind kind = BlockKind::Prose;
  std::size_t first_line = 0, last_line = 0;  // indices into the classified lines
};
// Paragraphs are separated by blank lines. A fenced code block is always exactly one paragraph (blank lines
// inside it do not split it; it is also cut off from prose directly above/below it). A pipe table is one
// paragraph of its own. Consecutive list items without blank lines stay in one paragraph with the text
// that introduces them. Blocks holding nothing but horizontal rules are not paragraphs.
std::vector<Paragraph> split_paragraphs(std::string_view text, const std::vector<Line> &lines);
std::vector<Paragraph> split_paragraphs(std::string_view text);

// ---- sentences ---------------------------------------------------------------------------------------------
// Sentence units for grounding checks. Decisions:
//  - fenced code is excluded (code is not a claim in prose; it never gets split either);
//  - headings and horizontal rules are excluded (titles, not statements);
//  - every data row of a pipe table is one unit (the header row and separator are excluded);
//  - every list item starts a new unit (its marker removed); long items are split further;
//  - in prose, a unit ends at . ! ? … (plus closing quotes/brackets) followed by whitespace, unless the next
//    word starts with a lowercase letter, or the period belongs to an abbreviation (z. B., bzw., Dr., e.g.,
//    etc., …, any single letter), a decimal number or version (no space after the period: 3.5, v1.2, URLs),
//    or an ordinal (a number followed by a month or words like "Schritt", "Platz": "am 3. Mai").
// Returned views are trimmed and point into `text`; units without any word character are dropped.
std::vector<std::string_view> split_sentences(std::string_view text, const std::vector<Line> &lines);
std::vector<std::string_view> split_sentences(std::string_view text);
// The claims of an answer (O0's units): split_sentences, and in addition a paragraph that is a JSON object or
// array (an answer in JSON mode, possibly unclosed) contributes its string values, not its text: keys, numbers,
// literals and punctuation are structure; a value is split like prose, at its escaped line breaks too; and a
// value that reads as code (looks_like_code) is excluded, as fenced code is (JSON mode cannot fence code).
std::vector<std::string_view> split_claims(std::string_view text);
// Whether a text (a JSON string value, lines separated by real or escaped line breaks) is code: most of its
// non-blank lines show two signs of code (a call name(…), an assignment, brackets, a trailing ; { }, or a
// leading keyword such as import/def/return/const/SELECT) or start with such a keyword and do not end like a
// sentence.
bool looks_like_code(std::string_view value);
// Splits one run of prose (no markdown handling) — exposed for tests.
void split_prose(std::string_view run, std::vector<std::string_view> &out);

std::string_view trim(std::string_view s);
// Cuts s to at most max_bytes without splitting a UTF-8 sequence.
std::string_view utf8_prefix(std::string_view s, std::size_t max_bytes);

}  // namespace ksodi::text
