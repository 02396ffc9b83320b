#include "config/yaml_parse.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace evalgraph::config_detail {

// A plain YAML scalar becomes null/bool/int/float when it reads as one (YAML 1.2 core schema); a quoted
// one stays a string.
json scalar_to_json(const YAML::Node &n) {
  const std::string &s = n.Scalar();
  if (n.Tag() == "!") return s;  // quoted
  if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") return nullptr;
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;
  char *end = nullptr;
  errno = 0;
  long long i = std::strtoll(s.c_str(), &end, 10);
  if (end != nullptr && *end == '\0' && errno == 0 &&
      (std::isdigit(static_cast<unsigned char>(s[0])) || s[0] == '-' || s[0] == '+'))
    return i;
  double d = std::strtod(s.c_str(), &end);
  if (end != nullptr && *end == '\0' && !std::isnan(d) &&
      (std::isdigit(static_cast<unsigned char>(s[0])) || s[0] == '-' || s[0] == '+' || s[0] == '.'))
    return d;
  return s;
}

json to_json(Ctx &ctx, const YAML::Node &n, LocationMap *locs, const std::string &ptr) {
  if (locs != nullptr) (*locs)[ptr] = ctx.at(n);
  switch (n.Type()) {
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      return nullptr;
    case YAML::NodeType::Scalar:
      return scalar_to_json(n);
    case YAML::NodeType::Sequence: {
      json a = json::array();
      size_t i = 0;
      for (const auto &item : n) a.push_back(to_json(ctx, item, locs, ptr + "/" + std::to_string(i++)));
      return a;
    }
    case YAML::NodeType::Map: {
      json o = json::object();
      for (const auto &kv : n) {
        std::string key = kv.first.Scalar();
        if (locs != nullptr) (*locs)[ptr + "/" + key + "#key"] = ctx.at(kv.first);
        o[key] = to_json(ctx, kv.second, locs, ptr + "/" + key);
      }
      return o;
    }
  }
  return nullptr;
}

// Replaces ${VAR} and ${VAR:-default} in every string of `v` with the environment's value.
bool expand_env(json &v, std::string &why) {
  if (v.is_object() || v.is_array()) {
    for (auto &x : v)
      if (!expand_env(x, why)) return false;
    return true;
  }
  if (!v.is_string()) return true;
  const std::string &in = v.get_ref<const std::string &>();
  if (in.find("${") == std::string::npos) return true;
  std::string out;
  for (size_t i = 0; i < in.size();) {
    size_t open = in.find("${", i);
    if (open == std::string::npos) {
      out.append(in, i, std::string::npos);
      break;
    }
    size_t close = in.find('}', open);
    if (close == std::string::npos) {
      why = fmt::format("'{}' has an unclosed '${{'", in);
      return false;
    }
    out.append(in, i, open - i);
    std::string expr = in.substr(open + 2, close - open - 2);
    size_t dflt = expr.find(":-");
    std::string name = expr.substr(0, dflt);
    const char *val = std::getenv(name.c_str());
    if (val != nullptr && *val != '\0')
      out += val;
    else if (dflt != std::string::npos)
      out += expr.substr(dflt + 2);
    else {
      why = fmt::format("environment variable {} is not set (write ${{{}:-default}} for a default)", name, name);
      return false;
    }
    i = close + 1;
  }
  v = out;
  return true;
}

// Reports keys of a mapping that are not in `allowed`, with a did-you-mean.
void check_keys(Ctx &ctx, const YAML::Node &map, const std::vector<std::string> &allowed, const std::string &what) {
  for (const auto &kv : map) {
    std::string k = kv.first.Scalar();
    if (std::find(allowed.begin(), allowed.end(), k) == allowed.end())
      ctx.error(kv.first, fmt::format("unknown key '{}' in {}{}; allowed: {}", k, what, did_you_mean(k, allowed),
                                      join_list(allowed)));
  }
}

bool expect(Ctx &ctx, const YAML::Node &n, YAML::NodeType::value t, const std::string &what) {
  if (n.Type() == t) return true;
  const char *want = t == YAML::NodeType::Map        ? "a mapping (key: value)"
                     : t == YAML::NodeType::Sequence ? "a list"
                                                     : "a value";
  ctx.error(n, fmt::format("{} must be {}", what, want));
  return false;
}

std::string scalar(Ctx &ctx, const YAML::Node &n, const std::string &what) {
  if (!n.IsScalar()) {
    ctx.error(n, fmt::format("{} must be a single value", what));
    return {};
  }
  return n.Scalar();
}

}  // namespace evalgraph::config_detail
