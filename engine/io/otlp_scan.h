#pragma once
// Internal to engine/io: a forgiving single-pass JSON cursor for OTLP/JSON, and OTLP's AnyValue as JSON.
//
// The trace reader walks large export requests in place: it descends only where OTLP puts what it needs
// (resourceSpans → scopeSpans → spans → attributes) and skips everything else without building a DOM, so a
// byte is looked at about once. The cursor never reads outside its text and never recurses; malformed or
// truncated text sets `failed` and every further call returns false, so a caller's loops simply end. It does
// not validate everything it skips: whatever the reader copies into a record is decoded and re-encoded here
// (strings as UTF-8, bytes that are not UTF-8 replaced), so a record is always valid JSON.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace evalgraph::io::otlp {

class Cursor {
 public:
  Cursor() = default;
  explicit Cursor(std::string_view text) : b_(text.data()), p_(text.data()), e_(text.data() + text.size()) {}

  bool failed = false;

  // Objects: begin_object() at '{'; then next_member(key) until it returns false (at '}' or on failure).
  // `key` is the key's raw text (escapes as written: OTLP's keys have none that matter).
  bool begin_object() { return !failed && expect('{'); }
  bool next_member(std::string_view &key);
  // Arrays: begin_array() at '['; then next_element() until false (at ']'); the cursor stands at the element.
  bool begin_array() { return !failed && expect('['); }
  bool next_element();
  // The value at the cursor: skipped (its text returned), a string's raw content (no quotes, escapes as
  // written), or a number (a JSON number, or a string holding one, as OTLP writes 64-bit integers).
  std::string_view skip();
  bool raw_string(std::string_view &raw);
  bool integer(std::int64_t &out);
  // What comes next, after whitespace: '{', '[', '"', a digit... or '\0' at the end.
  char peek() {
    ws();
    return p_ < e_ ? *p_ : '\0';
  }
  // Offset of the cursor in the text it was given (after whitespace).
  std::size_t offset();
  // The text between two offset()s.
  std::string_view text_between(std::size_t from, std::size_t to) const {
    return std::string_view(b_ + from, to - from);
  }
  // Newlines skipped so far as whitespace (between values: a JSON string holds no raw newline).
  std::size_t newlines = 0;

 private:
  bool expect(char c) {
    ws();
    if (p_ < e_ && *p_ == c) {
      ++p_;
      return true;
    }
    fail();
    return false;
  }
  void fail() {
    failed = true;
    p_ = e_;
  }
  // Whitespace skipped; inline for the usual case of none (compact JSON), which is most calls.
  void ws() {
    if (p_<e_ &&static_cast<unsigned char>(*p_)> ' ') return;
    ws_run();
  }
  void ws_run();
  const char *b_ = nullptr, *p_ = nullptr, *e_ = nullptr;
};

// A JSON string's raw content (between the quotes) decoded: escapes resolved, bytes that are not UTF-8 (and
// lone surrogates) replaced by U+FFFD. `bad` is set when something had to be replaced.
std::string unescape(std::string_view raw, bool &bad);

// OTLP AnyValue ({"stringValue": ...}, intValue, doubleValue, boolValue, arrayValue {values}, kvlistValue
// {values: [{key, value}]}, bytesValue) as plain JSON; null for an empty or unknown one. `bad` as unescape().
nlohmann::json any_value(std::string_view any_value_text, bool &bad);
// A string AnyValue's text (other kinds: their JSON text; "" when empty). Cheaper than any_value() for strings.
std::string any_string(std::string_view any_value_text, bool &bad);

// A trace or span id as OTLP/JSON writes it: 32 (16) hex digits. Base64 (the proto3 JSON mapping some
// exporters use) is accepted too. Returns the id as lower-case hex, or "" when it is neither.
std::string normalise_id(std::string_view raw, std::size_t bytes);

}  // namespace evalgraph::io::otlp
