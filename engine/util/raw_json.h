#pragma once
// Raw JSON: checking and splitting JSON text without building a DOM.
//
// The executor moves records as text: a dataset line's fields are handed to nodes as the very bytes they were
// read as, and a node's output is spliced into the record as it came. Only where the engine must look inside a
// value (a `field.sub` binding, an order_by field) does it parse, and then only that value. This is what keeps
// the per-record cost of the engine small next to the operators (see bench/ksodi_throughput.sh).
//
// The checker is as strict as nlohmann::json's parser (RFC 8259, UTF-8 validated, no control characters in
// strings, \u escapes with paired surrogates), so text it accepts parses anywhere.
#include <cstddef>
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

// Nesting deeper than this is refused (the checker recurses).
constexpr int kMaxDepth = 512;

// True if `text` is exactly one JSON value, with optional surrounding whitespace.
bool valid(std::string_view text);

// If `text` is one JSON object, replaces `out` with its members in text order (value spans relative to
// `text`, surrounding whitespace excluded) and returns true. Duplicate keys are all listed.
bool object_members(std::string_view text, std::vector<Member> &out);

// If `text` is one JSON array, replaces `out` with its elements' spans and returns true.
bool array_elements(std::string_view text, std::vector<Span> &out);

// Appends `s` as a JSON string literal, quotes included; bytes that are not UTF-8 become U+FFFD.
void append_string(std::string &out, std::string_view s);

}  // namespace evalgraph::rawjson
