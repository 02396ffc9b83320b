#pragma once
// Raw JSON: checking and splitting JSON text without building a DOM.
//
// The executor moves records as text: a dataset line's fields are handed to nodes as the very bytes they were
// read as, and a node's output is spliced into the record as it came. Only where the engine must look inside a
// value (a `field.sub` binding, an order_by field) does it parse, and then only that value. This is what keeps
// the per-record cost of the engine small next to the operators (see bench/ksodi_throughput.sh).
//
// The checker is as strict as nlohmann::json's parser (RFC 8259, UTF-8 validated, no control characters in
// strings, \u escapes with paired surrogates), so text it accepts parses anywhere. It does not recurse: any
// nesting is scanned with a stack of its own, so no document can drive it past the thread's stack.
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

namespace evalgraph::rawjson {

// A value inside a text: [off, off + len).
struct Span {
  std::size_t off = 0, len = 0;
};

struct Member {
  std::string key;  // unescaped
  Span value;
};

// valid(), object_members() and array_elements() refuse nesting deeper than this (records deeper than this are
// never handed to nlohmann, whose serialiser recurses). check() reports deeper nesting as a limit.
constexpr int kMaxDepth = 512;

// True if `text` is exactly one JSON value, with optional surrounding whitespace.
bool valid(std::string_view text);

// If `text` is one JSON object, replaces `out` with its members in text order (value spans relative to
// `text`, surrounding whitespace excluded) and returns true. Duplicate keys are all listed.
bool object_members(std::string_view text, std::vector<Member> &out);

// If `text` is one JSON array, replaces `out` with its elements' spans and returns true.
bool array_elements(std::string_view text, std::vector<Span> &out);

// The offset of the first byte of `s` that is not part of well-formed UTF-8, or npos when all of it is.
std::size_t invalid_utf8(std::string_view s);

// Appends `s` as a JSON string literal, quotes included; bytes that are not UTF-8 become U+FFFD.
void append_string(std::string &out, std::string_view s);

// ---- check(): the whole text, with limits and with the reason for a refusal ----

struct CheckOptions {
  int max_depth = kMaxDepth;                                      // containers nested deeper are a limit fault
  std::size_t max_items = std::numeric_limits<std::size_t>::max();  // elements of one array, members of one object
  bool unique_keys = false;                                       // a key repeated in one object is a fault
};

enum class Fault : std::uint8_t {
  none,
  // The text is not JSON: a reader refuses it.
  syntax,        // a token where it does not belong, a missing ',' ':' '"' ...
  end_of_text,   // the text ends inside a value
  bad_utf8,      // bytes that are not UTF-8
  control_char,  // a raw control character (NUL included) inside a string
  bad_escape,    // a backslash escape JSON does not have, or a lone surrogate
  trailing,      // something after the value
  // Well-formed JSON that the engine does not take (check() goes on scanning after these).
  depth,          // nested deeper than max_depth
  items,          // an array with more than max_items elements
  members,        // an object with more than max_items members
  number_range,   // a number beyond a double's range (1e999999)
  duplicate_key,  // a key twice in one object (with unique_keys)
};

// True for the faults of well-formed JSON (depth, items, number_range, duplicate_key).
inline bool is_limit(Fault f) { return f >= Fault::depth; }

struct Problem {
  Fault fault = Fault::none;
  std::size_t offset = 0;  // byte offset in the text where the problem starts
  long member = -1;        // index of the top-level member it lies in (objects; -1: none)
  std::string what;        // in our words, e.g. "the number 1e999999 is beyond a double's range (±1.8e308)"
};

struct CheckResult {
  // The first problem that makes the text no JSON (fault none: the text is one JSON value).
  Problem error;
  // Limit faults, in text order (the first 16 of them; `limit_faults` counts them all). Only when error is none.
  std::vector<Problem> limits;
  std::size_t limit_faults = 0;
  // Every top-level member (index, as in `members`) that holds a limit fault, once each, in text order.
  std::vector<long> fault_members;
  // Whether the text is an object / an array (valid or not, by its first character).
  bool object = false, array = false;
  bool ok() const { return error.fault == Fault::none && limit_faults == 0; }
};

// Checks that `text` is exactly one JSON value (surrounding whitespace allowed) under `opt`. Syntax problems
// stop the scan (result.error); limit faults are collected and the scan goes on, so the members of an object
// are all found even when one of them is over a limit. When `members` is non-null and the text is an object,
// it receives the top-level members (spans into `text`; a repeated key is listed each time it appears).
void check(std::string_view text, const CheckOptions &opt, CheckResult &result, std::vector<Member> *members);

// The 1-based column of byte `offset` in `line`, counted in characters (UTF-8 sequences count once).
std::size_t column_of(std::string_view line, std::size_t offset);

// A short, printable excerpt of `text` from `offset` (at most ~40 bytes, cut at a character boundary).
std::string excerpt(std::string_view text, std::size_t offset);
// `text` fit for a message: control characters as spaces, bytes that are not UTF-8 as U+FFFD.
std::string printable(std::string_view text);

}  // namespace evalgraph::rawjson
