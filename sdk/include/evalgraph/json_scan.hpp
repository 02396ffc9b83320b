// evalgraph plugin SDK — the one strict JSON scanner (header-only, C++17), shared by the host and the plugins.
//
// json_scan::scan(text, handler) walks JSON text once and tells a handler what it meets: a container begins or
// ends, an array element or an object member starts, a key, a string, a number, a literal. It builds nothing
// (no DOM, no copies): the handler gets offsets into the text and keeps what it needs. It is as strict as
// nlohmann::json's parser (RFC 8259: UTF-8 validated by utf8::sequence_length, no raw control characters in
// strings, escapes JSON has, \u escapes with paired surrogates, numbers as RFC 8259 spells them), so text it
// accepts parses anywhere. It does not recurse: the open containers are kept on a stack of its own (one bit
// each), so no document can drive it past the thread's stack. Limits (nesting depth, item counts, repeated
// keys, a number's range: within_double_range) are the handler's to apply: it answers false to stop the scan.
//
// The engine's checker (lib/util/raw_json), the SDK's input reader (input.hpp) and the python node's fast path
// are handlers of this scanner; tests/fuzz/fuzz_jsonl (raw_json against nlohmann) and fuzz_sdk_input (input.hpp
// against nlohmann) fuzz it.
//
//   struct Count : evalgraph::json_scan::Handler {
//     std::size_t strings = 0;
//     bool scalar(evalgraph::json_scan::Kind k, std::size_t, std::size_t, bool, std::size_t) {
//       strings += k == evalgraph::json_scan::Kind::string;
//       return true;
//     }
//   } count;
//   evalgraph::json_scan::Error e = evalgraph::json_scan::scan(text, count);  // e.ok(): text is one JSON value
#ifndef EVALGRAPH_JSON_SCAN_HPP
#define EVALGRAPH_JSON_SCAN_HPP

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "evalgraph/utf8.hpp"

namespace evalgraph::json_scan {

// What kind of problem ended a scan.
enum class Fault : std::uint8_t {
  none,
  syntax,        // a token where it does not belong, a missing ',' ':' '"' ...
  end_of_text,   // the text ends inside a value
  bad_utf8,      // bytes that are not UTF-8
  control_char,  // a raw control character (NUL included) inside a string
  bad_escape,    // a backslash escape JSON does not have, or a lone surrogate
  trailing,      // something after the value
  stopped,       // the handler answered false
};

// Where exactly: enough, with the text at Error::offset, to word the problem (raw_json's messages do).
enum class Why : std::uint8_t {
  none,
  value_missing,            // the text ends where a value should be
  unexpected_value,         // the byte at offset starts no value
  trailing,                 // more text after the value
  open_object,              // the text ends inside an object
  open_array,               // the text ends inside an array
  expected_comma_object,    // the byte at offset follows an object member: not ',' or '}'
  expected_comma_array,     // the byte at offset follows an array element: not ',' or ']'
  member_missing,           // '}' at offset where a member should be (a comma too many)
  expected_key,             // the byte at offset is where a key in double quotes should be
  expected_colon,           // the byte at offset follows a key: not ':'
  string_not_closed,        // offset: the string's opening quote
  nul_in_string,            // a NUL byte inside a string
  control_in_string,        // the control character at offset inside a string
  bad_utf8,                 // the byte at offset starts no UTF-8 sequence
  unknown_escape,           // offset: the backslash of an escape JSON does not have
  short_unicode_escape,     // offset: a \u without four hex digits
  lone_low_surrogate,       // offset: a \u escape of a low surrogate without its high one
  lone_high_surrogate,      // offset: a \u escape of a high surrogate without its low one
  literal_at_end,           // the text ends inside the literal that starts at offset
  bad_literal,              // offset: a word that is not true, false or null
  leading_zero,             // offset: a number with a leading zero
  minus_without_digits,     // offset: a '-' without digits after it
  fraction_without_digits,  // offset: a number whose '.' has no digits after it
  exponent_without_digits,  // offset: a number whose exponent has no digits
  handler,                  // the handler stopped the scan at offset
};

struct Error {
  Fault fault = Fault::none;
  Why why = Why::none;
  std::size_t offset = 0;  // byte offset in the text
  bool ok() const { return fault == Fault::none; }
};

enum class Kind : std::uint8_t { string, number, true_value, false_value, null };

// The events. Derive, and declare (hide) the ones you need; each answers whether the scan goes on. `depth` is
// the number of containers open around the token (a top-level member's key: 1); offsets are into the text.
struct Handler {
  // A container (object or array) at `off` begins, or ends (`off`: its closing bracket).
  bool begin(bool /*object*/, std::size_t /*off*/, std::size_t /*depth*/) { return true; }
  bool end(bool /*object*/, std::size_t /*off*/, std::size_t /*depth*/) { return true; }
  // An array element starts at `off` (before it is scanned).
  bool element(std::size_t /*off*/, std::size_t /*depth*/) { return true; }
  // An object member's key starts at `off` (its '"', before it is scanned); then key(): the key scanned, quotes
  // included ([off, off + len)), `escaped` when it holds a backslash escape (unescape() decodes it).
  bool member(std::size_t /*off*/, std::size_t /*depth*/) { return true; }
  bool key(std::size_t /*off*/, std::size_t /*len*/, bool /*escaped*/, std::size_t /*depth*/) { return true; }
  // A string (quotes included), a number or a literal at [off, off + len).
  bool scalar(Kind, std::size_t /*off*/, std::size_t /*len*/, bool /*escaped*/, std::size_t /*depth*/) { return true; }
};

// Whether a number the scanner took (its text) lies within a double's range, as nlohmann::json requires: 1e999
// does not.
inline bool within_double_range(std::string_view number) {
  if (number.size() <= 300 && number.find_first_of("eE") == std::string_view::npos) return true;
  return std::isfinite(std::strtod(std::string(number).c_str(), nullptr));
}

// Appends the content of a string the scanner took (the bytes between its quotes) to `out`, escapes decoded.
inline void unescape(std::string_view content, std::string &out) {
  std::size_t i = 0;
  for (;;) {
    const std::size_t j = content.find('\\', i);
    if (j == std::string_view::npos) {
      out.append(content.substr(i));
      return;
    }
    out.append(content.substr(i, j - i));
    const char plain = utf8::json_unescape(content[j + 1]);
    i = j + 2;
    if (plain != 'u') {
      out.push_back(plain);
      continue;
    }
    std::uint32_t cp = 0, lo = 0;
    utf8::read_hex4(content, i, cp);
    i += 4;
    if (cp >= 0xD800 && cp <= 0xDBFF) {  // the scanner saw its low surrogate after it
      utf8::read_hex4(content, i + 2, lo);
      cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
      i += 6;
    }
    utf8::append(out, cp);
  }
}

namespace detail {

// The open containers, one bit each (set: an object): 512 levels in place, deeper ones on the heap. The
// innermost one's kind is kept apart (read after every value).
class Nesting {
 public:
  std::size_t size() const { return n_; }
  bool empty() const { return n_ == 0; }
  bool top() const { return top_; }
  void push(bool object) {
    std::uint64_t &w = word(n_ >> 6);
    const std::uint64_t bit = std::uint64_t{1} << (n_ & 63);
    w = object ? (w | bit) : (w & ~bit);
    ++n_;
    top_ = object;
  }
  void pop() {
    if (--n_ == 0) return;
    const std::size_t i = n_ - 1, w = i >> 6;
    top_ = (((w < kInline ? in_place_[w] : more_[w - kInline]) >> (i & 63)) & 1) != 0;
  }

 private:
  static constexpr std::size_t kInline = 8;
  std::uint64_t &word(std::size_t w) {
    if (w < kInline) return in_place_[w];
    if (more_.size() <= w - kInline) more_.resize(w - kInline + 1);
    return more_[w - kInline];
  }
  std::uint64_t in_place_[kInline] = {};
  std::vector<std::uint64_t> more_;
  std::size_t n_ = 0;
  bool top_ = false;
};

template <class H>
class Scanner {
 public:
  Scanner(std::string_view text, H &h) : text_(text), b_(text.data()), p_(b_), e_(b_ + text.size()), h_(h) {}

  // One JSON value and nothing after it but whitespace.
  Error run() {
    ws();
    for (;;) {
      if (p_ == e_) {
        fail(Fault::end_of_text, Why::value_missing, off());
        return err_;
      }
      const char c = *p_;
      if (c == '{' || c == '[') {
        const bool object = c == '{';
        if (!h_.begin(object, off(), nest_.size())) {
          stopped(off());
          return err_;
        }
        nest_.push(object);
        ++p_;
        ws();
        if (p_ == e_ || *p_ != (object ? '}' : ']')) {
          if (!(object ? key() : element())) return err_;
          continue;  // to the container's first value
        }
        if (!close()) return err_;
      } else if (!scalar(c)) {
        return err_;
      }
      if (!after_value() || done_) return err_;
    }
  }

 private:
  std::size_t off() const { return static_cast<std::size_t>(p_ - b_); }
  void ws() {
    while (p_ != e_ && (*p_ == ' ' || *p_ == '\t' || *p_ == '\n' || *p_ == '\r')) ++p_;
  }
  bool fail(Fault f, Why why, std::size_t at) {
    err_ = Error{f, why, at};
    return false;
  }
  bool stopped(std::size_t at) { return fail(Fault::stopped, Why::handler, at); }

  // After a value: ',' and the next member or element (a value starts at p_), or the ends of containers level
  // by level; done_ once the top-level value has ended and only whitespace follows it.
  bool after_value() {
    for (;;) {
      ws();
      if (nest_.empty()) {
        if (p_ != e_) return fail(Fault::trailing, Why::trailing, off());
        done_ = true;
        return true;
      }
      const bool object = nest_.top();
      if (p_ == e_) return fail(Fault::end_of_text, object ? Why::open_object : Why::open_array, off());
      if (*p_ == ',') {
        ++p_;
        ws();
        return object ? key() : element();
      }
      if (*p_ != (object ? '}' : ']'))
        return fail(Fault::syntax, object ? Why::expected_comma_object : Why::expected_comma_array, off());
      if (!close()) return false;
    }
  }

  // The closing bracket at p_.
  bool close() {
    const bool object = nest_.top();
    nest_.pop();
    const std::size_t at = off();
    ++p_;
    return h_.end(object, at, nest_.size()) || stopped(at);
  }

  bool element() { return h_.element(off(), nest_.size()) || stopped(off()); }

  // An object member's key, its ':' and the whitespace up to its value.
  bool key() {
    if (p_ == e_) return fail(Fault::end_of_text, Why::open_object, off());
    if (*p_ != '"') return fail(Fault::syntax, *p_ == '}' ? Why::member_missing : Why::expected_key, off());
    const std::size_t at = off();
    if (!h_.member(at, nest_.size())) return stopped(at);
    bool escaped = false;
    if (!string(escaped)) return false;
    if (!h_.key(at, off() - at, escaped, nest_.size())) return stopped(at);
    ws();
    if (p_ == e_) return fail(Fault::end_of_text, Why::open_object, off());
    if (*p_ != ':') return fail(Fault::syntax, Why::expected_colon, off());
    ++p_;
    ws();
    return true;
  }

  // A string, number or literal starting with c at p_.
  bool scalar(char c) {
    const std::size_t at = off();
    bool escaped = false;
    Kind kind = Kind::number;
    if (c == '"') {
      if (!string(escaped)) return false;
      kind = Kind::string;
    } else if (c == 't' || c == 'f' || c == 'n') {
      kind = c == 't' ? Kind::true_value : c == 'f' ? Kind::false_value : Kind::null;
      if (!literal(c == 't' ? "true" : c == 'f' ? "false" : "null")) return false;
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      if (!number()) return false;
    } else {
      return fail(Fault::syntax, Why::unexpected_value, at);
    }
    return h_.scalar(kind, at, off() - at, escaped, nest_.size()) || stopped(at);
  }

  // A string literal at p_ ('"'); `escaped`: it holds a backslash escape.
  bool string(bool &escaped) {
    const std::size_t open = off();
    ++p_;
    escaped = false;
    for (;;) {
      // Eight plain bytes at a time (most of a text is printable ASCII), then straight to the first byte that
      // needs a look (the lowest flagged byte is always a true hit).
      while (e_ - p_ >= 8) {
        if (const std::uint64_t m = utf8::json_special8(p_); m != 0) {
          p_ += static_cast<std::size_t>(__builtin_ctzll(m) >> 3);
          break;
        }
        p_ += 8;
      }
      if (p_ == e_) return fail(Fault::end_of_text, Why::string_not_closed, open);
      const auto c = static_cast<unsigned char>(*p_);
      if (c == '"') {
        ++p_;
        return true;
      }
      if (c == '\\') {
        escaped = true;
        if (!escape(open)) return false;
      } else if (c < 0x20) {
        return fail(Fault::control_char, c == 0 ? Why::nul_in_string : Why::control_in_string, off());
      } else if (c >= 0x80) {
        const std::size_t n = utf8::sequence_length(text_, off());
        if (n == 0) return fail(Fault::bad_utf8, Why::bad_utf8, off());
        p_ += n;
      } else {
        ++p_;  // plain ASCII near the end of the text
      }
    }
  }

  // The escape at p_ (a backslash) in the string that opens at `open`.
  bool escape(std::size_t open) {
    const std::size_t at = off();
    if (e_ - p_ < 2) return fail(Fault::end_of_text, Why::string_not_closed, open);
    const char plain = utf8::json_unescape(p_[1]);
    if (plain == 0) return fail(Fault::bad_escape, Why::unknown_escape, at);
    p_ += 2;
    if (plain != 'u') return true;
    std::uint32_t cp = 0, lo = 0;
    if (!utf8::read_hex4(text_, off(), cp)) return fail(Fault::bad_escape, Why::short_unicode_escape, at);
    p_ += 4;
    if (cp >= 0xDC00 && cp <= 0xDFFF) return fail(Fault::bad_escape, Why::lone_low_surrogate, at);
    if (cp < 0xD800 || cp > 0xDBFF) return true;
    if (e_ - p_ < 2 || p_[0] != '\\' || p_[1] != 'u' || !utf8::read_hex4(text_, off() + 2, lo) || lo < 0xDC00 ||
        lo > 0xDFFF)
      return fail(Fault::bad_escape, Why::lone_high_surrogate, at);
    p_ += 6;
    return true;
  }

  bool literal(std::string_view word) {
    const auto left = static_cast<std::size_t>(e_ - p_);
    if (left >= word.size() && std::memcmp(p_, word.data(), word.size()) == 0) {
      p_ += word.size();
      return true;
    }
    if (left < word.size() && std::string_view(p_, left) == word.substr(0, left))
      return fail(Fault::end_of_text, Why::literal_at_end, off());
    return fail(Fault::syntax, Why::bad_literal, off());
  }

  bool digits() {
    const char *s = p_;
    while (p_ != e_ && *p_ >= '0' && *p_ <= '9') ++p_;
    return p_ != s;
  }

  // -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?  (the range is the handler's: within_double_range)
  bool number() {
    const std::size_t start = off();
    if (*p_ == '-') ++p_;
    if (p_ != e_ && *p_ == '0') {
      ++p_;
      if (p_ != e_ && *p_ >= '0' && *p_ <= '9') return fail(Fault::syntax, Why::leading_zero, start);
    } else if (p_ == e_ || *p_ < '1' || *p_ > '9') {
      return fail(Fault::syntax, Why::minus_without_digits, start);
    } else {
      digits();
    }
    if (p_ != e_ && *p_ == '.') {
      ++p_;
      if (!digits()) return fail(Fault::syntax, Why::fraction_without_digits, start);
    }
    if (p_ != e_ && (*p_ == 'e' || *p_ == 'E')) {
      ++p_;
      if (p_ != e_ && (*p_ == '+' || *p_ == '-')) ++p_;
      if (!digits()) return fail(Fault::syntax, Why::exponent_without_digits, start);
    }
    return true;
  }

  std::string_view text_;
  const char *b_, *p_, *e_;
  H &h_;
  Nesting nest_;
  Error err_;
  bool done_ = false;
};

}  // namespace detail

// Scans `text` as exactly one JSON value with optional whitespace around it, telling `handler` what it meets.
// ok(): the text is JSON and the handler never stopped the scan; else the first problem.
template <class H>
Error scan(std::string_view text, H &handler) {
  return detail::Scanner<H>(text, handler).run();
}

}  // namespace evalgraph::json_scan

#endif  // EVALGRAPH_JSON_SCAN_HPP
