#pragma once
// Helpers for writing CSV: escaping one field and flattening a finished record into columns.
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace evalgraph::io {

// The field as RFC 4180 wants it: unchanged when it holds no separator, quote, CR or LF; otherwise wrapped in
// double quotes with inner quotes doubled.
std::string csv_escape(std::string_view field, char sep = ',');
// Same, appended to `out` (no temporary string).
void csv_escape_append(std::string &out, std::string_view field, char sep = ',');

// Text of one cell: strings unquoted, null → "", numbers and booleans as JSON writes them, objects and arrays
// as compact JSON text.
std::string cell_text(const nlohmann::json &value);
std::string cell_text(const nlohmann::ordered_json &value);

// Flattens a record into (column, text) pairs; `out` is cleared first. Top-level scalars keep their name; a
// top-level object (a node's output) expands one level into "node.field" columns; anything deeper, and
// top-level arrays, become compact JSON text. Strings are unquoted, null is "". A record that is not an object
// gives one column "value". Order: the record's own — nlohmann::json sorts keys, ordered_json keeps the
// order of the text.
void flatten(const nlohmann::json &record, std::vector<std::pair<std::string, std::string>> &out);
void flatten(const nlohmann::ordered_json &record, std::vector<std::pair<std::string, std::string>> &out);

}  // namespace evalgraph::io
