#include "io/csv_write.h"

namespace evalgraph::io {

void csv_escape_append(std::string &out, std::string_view field, char sep) {
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

std::string csv_escape(std::string_view field, char sep) {
  std::string out;
  out.reserve(field.size() + 2);
  csv_escape_append(out, field, sep);
  return out;
}

namespace {
template <class Json> std::string cell_text_of(const Json &value) {
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

template <class Json> void flatten_into(const Json &record, std::vector<std::pair<std::string, std::string>> &out) {
  out.clear();
  if (!record.is_object()) {
    out.emplace_back("value", cell_text_of(record));
    return;
  }
  for (const auto &[key, value] : record.items()) {
    if (value.is_object()) {
      for (const auto &[field, inner] : value.items()) out.emplace_back(key + "." + field, cell_text_of(inner));
    } else {
      out.emplace_back(key, cell_text_of(value));
    }
  }
}
}  // namespace

std::string cell_text(const nlohmann::json &value) { return cell_text_of(value); }
std::string cell_text(const nlohmann::ordered_json &value) { return cell_text_of(value); }
void flatten(const nlohmann::json &record, std::vector<std::pair<std::string, std::string>> &out) {
  flatten_into(record, out);
}
void flatten(const nlohmann::ordered_json &record, std::vector<std::pair<std::string, std::string>> &out) {
  flatten_into(record, out);
}

}  // namespace evalgraph::io
