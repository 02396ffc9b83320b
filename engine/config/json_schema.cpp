#include "config/json_schema.h"

#include <cmath>
#include <fmt/format.h>

#include "config/diagnostics.h"

namespace evalgraph {
using nlohmann::json;

namespace {
bool has_type(const json &v, const std::string &t) {
  if (t == "object") return v.is_object();
  if (t == "array") return v.is_array();
  if (t == "string") return v.is_string();
  if (t == "boolean") return v.is_boolean();
  if (t == "null") return v.is_null();
  if (t == "number") return v.is_number();
  if (t == "integer") return v.is_number_integer() || (v.is_number_float() && std::floor(v.get<double>()) == v.get<double>());
  return true;
}
std::string type_of(const json &v) {
  if (v.is_number_integer()) return "integer";
  if (v.is_number()) return "number";
  return v.type_name();
}
std::string short_dump(const json &v) {
  std::string s = v.dump();
  return s.size() > 60 ? s.substr(0, 57) + "..." : s;
}
}  // namespace

void validate_json_schema(const json &schema, const json &value, std::vector<SchemaViolation> &out,
                          const std::string &ptr) {
  if (!schema.is_object()) return;
  auto fail = [&](std::string msg) { out.push_back({ptr, std::move(msg)}); };

  if (auto it = schema.find("type"); it != schema.end()) {
    bool ok = false;
    std::string expected;
    if (it->is_string()) {
      ok = has_type(value, it->get<std::string>());
      expected = it->get<std::string>();
    } else if (it->is_array()) {
      for (const auto &t : *it) {
        if (has_type(value, t.get<std::string>())) ok = true;
        expected += (expected.empty() ? "" : " or ") + t.get<std::string>();
      }
    } else {
      ok = true;
    }
    if (!ok) {
      fail(fmt::format("expected {}, got {} {}", expected, type_of(value), short_dump(value)));
      return;  // further checks would only repeat the same problem
    }
  }
  if (auto it = schema.find("enum"); it != schema.end() && it->is_array()) {
    bool found = false;
    std::vector<std::string> options;
    for (const auto &e : *it) {
      if (e == value) found = true;
      options.push_back(e.is_string() ? e.get<std::string>() : e.dump());
    }
    if (!found) {
      std::string list;
      for (const auto &o : options) list += (list.empty() ? "" : ", ") + o;
      std::string hint = value.is_string() ? did_you_mean(value.get<std::string>(), options) : "";
      fail(fmt::format("{} is not one of: {}{}", short_dump(value), list, hint));
    }
  }
  if (auto it = schema.find("const"); it != schema.end() && *it != value)
    fail(fmt::format("must be {}", short_dump(*it)));

  if (value.is_number()) {
    double v = value.get<double>();
    if (auto it = schema.find("minimum"); it != schema.end() && it->is_number() && v < it->get<double>())
      fail(fmt::format("{} is below the minimum {}", short_dump(value), it->dump()));
    if (auto it = schema.find("maximum"); it != schema.end() && it->is_number() && v > it->get<double>())
      fail(fmt::format("{} is above the maximum {}", short_dump(value), it->dump()));
    if (auto it = schema.find("exclusiveMinimum"); it != schema.end() && it->is_number() && v <= it->get<double>())
      fail(fmt::format("{} must be greater than {}", short_dump(value), it->dump()));
    if (auto it = schema.find("exclusiveMaximum"); it != schema.end() && it->is_number() && v >= it->get<double>())
      fail(fmt::format("{} must be less than {}", short_dump(value), it->dump()));
  }
  if (value.is_string()) {
    auto n = value.get_ref<const std::string &>().size();
    if (auto it = schema.find("minLength"); it != schema.end() && it->is_number_integer() && n < it->get<size_t>())
      fail(fmt::format("text is shorter than {} characters", it->get<size_t>()));
    if (auto it = schema.find("maxLength"); it != schema.end() && it->is_number_integer() && n > it->get<size_t>())
      fail(fmt::format("text is longer than {} characters", it->get<size_t>()));
  }
  if (value.is_array()) {
    if (auto it = schema.find("minItems"); it != schema.end() && it->is_number_integer() && value.size() < it->get<size_t>())
      fail(fmt::format("needs at least {} items, has {}", it->get<size_t>(), value.size()));
    if (auto it = schema.find("maxItems"); it != schema.end() && it->is_number_integer() && value.size() > it->get<size_t>())
      fail(fmt::format("allows at most {} items, has {}", it->get<size_t>(), value.size()));
    if (auto it = schema.find("items"); it != schema.end() && it->is_object()) {
      for (size_t i = 0; i < value.size(); ++i) validate_json_schema(*it, value[i], out, ptr + "/" + std::to_string(i));
    }
  }
  if (value.is_object()) {
    const json *props = nullptr;
    if (auto it = schema.find("properties"); it != schema.end() && it->is_object()) props = &*it;
    if (auto it = schema.find("required"); it != schema.end() && it->is_array()) {
      for (const auto &r : *it)
        if (r.is_string() && !value.contains(r.get<std::string>()))
          fail(fmt::format("missing required parameter '{}'", r.get<std::string>()));
    }
    auto addl = schema.find("additionalProperties");
    std::vector<std::string> known;
    if (props != nullptr)
      for (const auto &[k, _] : props->items()) known.push_back(k);
    for (const auto &[k, v] : value.items()) {
      std::string child = ptr + "/" + k;
      if (props != nullptr && props->contains(k)) {
        validate_json_schema((*props)[k], v, out, child);
      } else if (!k.empty() && k[0] == '_') {
        continue;  // reserved for the host (e.g. _output_dir)
      } else if (addl != schema.end()) {
        if (addl->is_boolean() && !addl->get<bool>()) {
          std::string list;
          for (const auto &n : known) list += (list.empty() ? "" : ", ") + n;
          out.push_back({child, fmt::format("unknown parameter '{}'{}; known: {}", k, did_you_mean(k, known),
                                            list.empty() ? "(none)" : list)});
        } else if (addl->is_object()) {
          validate_json_schema(*addl, v, out, child);
        }
      }
    }
  }
  for (const char *comb : {"anyOf", "oneOf"}) {
    auto it = schema.find(comb);
    if (it == schema.end() || !it->is_array()) continue;
    int matches = 0;
    std::vector<SchemaViolation> first;
    for (const auto &sub : *it) {
      std::vector<SchemaViolation> tmp;
      validate_json_schema(sub, value, tmp, ptr);
      if (tmp.empty()) ++matches;
      else if (first.empty()) first = std::move(tmp);
    }
    bool ok = std::string(comb) == "anyOf" ? matches >= 1 : matches == 1;
    if (!ok) {
      if (matches == 0 && !first.empty()) out.push_back(first.front());
      else fail(fmt::format("{} {} alternatives of {} match", short_dump(value), matches, comb));
    }
  }
}

}  // namespace evalgraph
