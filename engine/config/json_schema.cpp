#include "config/json_schema.h"

#include <cmath>
#include <functional>
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

// One value against one schema, keyword by keyword; the problems go to `out` at `ptr`.
struct Check {
  const json &schema;
  const json &value;
  std::vector<SchemaViolation> &out;
  const std::string &ptr;

  void fail(std::string msg) { out.push_back({ptr, std::move(msg)}); }
  const json *keyword(const char *k) const {
    auto it = schema.find(k);
    return it == schema.end() ? nullptr : &*it;
  }

  // `type`: one type or a list of them; false when the value has none of them.
  bool type() {
    const json *t = keyword("type");
    if (t == nullptr) return true;
    bool ok = false;
    std::string expected;
    if (t->is_string()) {
      ok = has_type(value, t->get<std::string>());
      expected = t->get<std::string>();
    } else if (t->is_array()) {
      for (const auto &x : *t) {
        if (has_type(value, x.get<std::string>())) ok = true;
        expected += (expected.empty() ? "" : " or ") + x.get<std::string>();
      }
    } else {
      ok = true;
    }
    if (!ok) fail(fmt::format("expected {}, got {} {}", expected, type_of(value), short_dump(value)));
    return ok;
  }

  void enum_and_const() {
    if (const json *e = keyword("enum"); e != nullptr && e->is_array()) {
      bool found = false;
      std::vector<std::string> options;
      for (const auto &x : *e) {
        if (x == value) found = true;
        options.push_back(x.is_string() ? x.get<std::string>() : x.dump());
      }
      if (!found) {
        std::string hint = value.is_string() ? did_you_mean(value.get<std::string>(), options) : "";
        fail(fmt::format("{} is not one of: {}{}", short_dump(value), join_list(options), hint));
      }
    }
    if (const json *c = keyword("const"); c != nullptr && *c != value) fail(fmt::format("must be {}", short_dump(*c)));
  }

  void number_bounds() {
    double v = value.get<double>();
    auto bound = [&](const char *k, auto outside, const char *words) {
      if (const json *b = keyword(k); b != nullptr && b->is_number() && outside(v, b->get<double>()))
        fail(fmt::format(fmt::runtime(words), short_dump(value), b->dump()));
    };
    bound("minimum", std::less<>(), "{} is below the minimum {}");
    bound("maximum", std::greater<>(), "{} is above the maximum {}");
    bound("exclusiveMinimum", std::less_equal<>(), "{} must be greater than {}");
    bound("exclusiveMaximum", std::greater_equal<>(), "{} must be less than {}");
  }

  // minLength/maxLength of a text, minItems/maxItems of an array: `n` against whole-number bounds.
  void size_bounds(std::size_t n, const char *min_key, const char *max_key, const char *below, const char *above) {
    if (const json *b = keyword(min_key); b != nullptr && b->is_number_integer() && n < b->get<size_t>())
      fail(fmt::format(fmt::runtime(below), b->get<size_t>(), n));
    if (const json *b = keyword(max_key); b != nullptr && b->is_number_integer() && n > b->get<size_t>())
      fail(fmt::format(fmt::runtime(above), b->get<size_t>(), n));
  }

  void items() {
    if (const json *it = keyword("items"); it != nullptr && it->is_object())
      for (size_t i = 0; i < value.size(); ++i) validate_json_schema(*it, value[i], out, ptr + "/" + std::to_string(i));
  }

  // required, properties, and what additionalProperties says of the others (keys starting with '_' are the host's).
  void object() {
    const json *props = keyword("properties");
    if (props != nullptr && !props->is_object()) props = nullptr;
    if (const json *req = keyword("required"); req != nullptr && req->is_array()) {
      for (const auto &r : *req)
        if (r.is_string() && !value.contains(r.get<std::string>()))
          fail(fmt::format("missing required parameter '{}'", r.get<std::string>()));
    }
    const json *addl = keyword("additionalProperties");
    std::vector<std::string> known;
    if (props != nullptr)
      for (const auto &[k, _] : props->items()) known.push_back(k);
    for (const auto &[k, v] : value.items()) {
      std::string child = ptr + "/" + k;
      if (props != nullptr && props->contains(k)) {
        validate_json_schema((*props)[k], v, out, child);
      } else if (!k.empty() && k[0] == '_') {
        continue;  // reserved for the host (e.g. _output_dir)
      } else if (addl != nullptr) {
        if (addl->is_boolean() && !addl->get<bool>()) {
          std::string list = join_list(known);
          out.push_back({child, fmt::format("unknown parameter '{}'{}; known: {}", k, did_you_mean(k, known),
                                            list.empty() ? "(none)" : list)});
        } else if (addl->is_object()) {
          validate_json_schema(*addl, v, out, child);
        }
      }
    }
  }

  // anyOf (at least one alternative matches) and oneOf (exactly one); where none does, the first one's problem.
  void alternatives(const char *comb) {
    const json *alts = keyword(comb);
    if (alts == nullptr || !alts->is_array()) return;
    int matches = 0;
    std::vector<SchemaViolation> first;
    for (const auto &sub : *alts) {
      std::vector<SchemaViolation> tmp;
      validate_json_schema(sub, value, tmp, ptr);
      if (tmp.empty()) ++matches;
      else if (first.empty()) first = std::move(tmp);
    }
    bool ok = std::string(comb) == "anyOf" ? matches >= 1 : matches == 1;
    if (ok) return;
    if (matches == 0 && !first.empty()) out.push_back(first.front());
    else fail(fmt::format("{} {} alternatives of {} match", short_dump(value), matches, comb));
  }
};
}  // namespace

void validate_json_schema(const json &schema, const json &value, std::vector<SchemaViolation> &out,
                          const std::string &ptr) {
  if (!schema.is_object()) return;
  Check c{schema, value, out, ptr};
  if (!c.type()) return;  // further checks would only repeat the same problem
  c.enum_and_const();
  if (value.is_number()) c.number_bounds();
  if (value.is_string())
    c.size_bounds(value.get_ref<const std::string &>().size(), "minLength", "maxLength",
                  "text is shorter than {} characters", "text is longer than {} characters");
  if (value.is_array()) {
    c.size_bounds(value.size(), "minItems", "maxItems", "needs at least {} items, has {}",
                  "allows at most {} items, has {}");
    c.items();
  }
  if (value.is_object()) c.object();
  c.alternatives("anyOf");
  c.alternatives("oneOf");
}

}  // namespace evalgraph
