// Reading KSODI inputs from a node's input JSON (header-only; needs nlohmann/json, which the SDK provides).
#pragma once

#include <nlohmann/json.hpp>
#include <stdexcept>

#include "evalgraph/json_bounded.hpp"
#include <string>
#include <vector>

namespace ksodi {

// A text field: absent/null → "", string → as is, anything else (an object tool profile, a number) → its JSON.
inline std::string text_of(const nlohmann::json &in, const char *key) {
  auto it = in.find(key);
  if (it == in.end() || it->is_null()) return {};
  if (it->is_string()) return it->get<std::string>();
  return it->dump();
}

struct Doc {
  std::string id;
  std::string text;
};

// Retrieved docs / tool outputs in any of the accepted shapes:
//   [{"id": "...", "text": "..."}, …]   (text may also be under content/page_content/output/result)
//   ["text", "text", …]                 (ids become <prefix>1, <prefix>2, …)
//   "[…]"                               a string holding one of the above as JSON (CSV datasets), nested at
//                                       most `max_depth` deep (the pipeline's limits.nesting_depth)
//   null / "" / absent                  no docs
// Anything else throws std::invalid_argument with a message naming the field.
inline std::vector<Doc> parse_docs(const nlohmann::json &in, const char *field, const char *id_prefix,
                                   int max_depth = evalgraph::kDefaultNestingDepth) {
  std::vector<Doc> out;
  auto it = in.find(field);
  if (it == in.end() || it->is_null()) return out;
  nlohmann::json parsed;
  const nlohmann::json *v = &*it;
  if (v->is_string()) {
    const std::string &s = v->get_ref<const std::string &>();
    std::size_t b = s.find_first_not_of(" \t\r\n");
    if (b == std::string::npos) return out;
    if (s[b] != '[')
      throw std::invalid_argument(std::string(field) + ": expected an array of {\"id\",\"text\"} objects or of strings "
                                  "(or a string holding such a JSON array), got a plain string");
    std::string why;
    if (!evalgraph::parse_bounded(s, parsed, max_depth, &why))
      throw std::invalid_argument(std::string(field) + ": the string looks like a JSON array but is " + why +
                                  " (limits.nesting_depth = " + std::to_string(max_depth) + ")");
    v = &parsed;
  }
  if (!v->is_array())
    throw std::invalid_argument(std::string(field) + ": expected an array of {\"id\",\"text\"} objects or of strings, got " +
                                std::string(v->type_name()));
  std::size_t i = 0;
  for (const auto &e : *v) {
    ++i;
    Doc d;
    d.id = std::string(id_prefix) + std::to_string(i);
    if (e.is_string()) {
      d.text = e.get<std::string>();
    } else if (e.is_object()) {
      bool found = false;
      for (const char *k : {"text", "content", "page_content", "output", "result"}) {
        auto t = e.find(k);
        if (t == e.end() || t->is_null()) continue;
        d.text = t->is_string() ? t->get<std::string>() : t->dump();
        found = true;
        break;
      }
      if (!found)
        throw std::invalid_argument(std::string(field) + "[" + std::to_string(i - 1) +
                                    "]: object has no \"text\" (or content/page_content/output/result) member");
      for (const char *k : {"id", "doc_id", "name", "tool", "source"}) {
        auto t = e.find(k);
        if (t == e.end() || t->is_null()) continue;
        d.id = t->is_string() ? t->get<std::string>() : t->dump();
        break;
      }
    } else {
      throw std::invalid_argument(std::string(field) + "[" + std::to_string(i - 1) + "]: expected an object or a string, got " +
                                  std::string(e.type_name()));
    }
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace ksodi
