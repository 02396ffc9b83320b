// evalgraph SDK, C++ helpers for plugins that write CSV (header-only, needs nlohmann/json): RFC 4180 field
// escaping and the flattening of a finished record into columns, as sink.csv writes them. A sink of your
// own that includes this writes the same columns and cells.
#ifndef EVALGRAPH_CSV_HPP
#define EVALGRAPH_CSV_HPP

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace evalgraph::csv {

// Appends the field as RFC 4180 wants it: quoted (inner quotes doubled) when it holds sep, '"', CR or LF.
inline void escape_append(std::string &out, std::string_view field, char sep = ',') {
  bool needs_quotes = false;
  for (char c : field) {
    if (c == sep || c == '"' || c == '\n' || c == '\r') {
      needs_quotes = true;
      break;
    }
  }
  if (!needs_quotes) {
    out.append(field);
    return;
  }
  out.push_back('"');
  for (char c : field) {
    if (c == '"') out.push_back('"');
    out.push_back(c);
  }
  out.push_back('"');
}

// The field escaped as a new string.
inline std::string escape(std::string_view field, char sep = ',') {
  std::string out;
  out.reserve(field.size() + 2);
  escape_append(out, field, sep);
  return out;
}

// Strings unquoted, null → "", numbers/booleans as JSON writes them, objects/arrays as compact JSON.
template <class Json> std::string cell_text(const Json &value) {
  switch (value.type()) {
    case Json::value_t::null:
    case Json::value_t::discarded:
      return {};
    case Json::value_t::string:
      return value.template get_ref<const std::string &>();
    default:
      return value.dump(-1, ' ', false, Json::error_handler_t::replace);
  }
}

// Top-level scalars keep their name; a top-level object expands one level into "node.field"; deeper values
// and top-level arrays become compact JSON text. `out` is cleared first. Order: the record's own (use
// nlohmann::ordered_json to keep the order of the text).
template <class Json> void flatten(const Json &record, std::vector<std::pair<std::string, std::string>> &out) {
  out.clear();
  if (!record.is_object()) {
    out.emplace_back("value", cell_text(record));
    return;
  }
  for (const auto &[key, value] : record.items()) {
    if (value.is_object()) {
      for (const auto &[field, inner] : value.items()) out.emplace_back(key + "." + field, cell_text(inner));
    } else {
      out.emplace_back(key, cell_text(value));
    }
  }
}

}  // namespace evalgraph::csv

#endif  // EVALGRAPH_CSV_HPP
