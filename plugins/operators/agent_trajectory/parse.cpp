// What agent.trajectory reads: a record's tool calls, and the expected calls (parameter or port).
#include <stdexcept>

#include "evalgraph/json_bounded.hpp"
#include "evalgraph/params.hpp"
#include "trajectory.hpp"

namespace trajectory {

namespace {

// One expected call as the user writes it; parsed by the SDK's Params, so an unknown key or a wrong type is
// refused in the words every other parameter is.
struct CallSpec {
  std::string name;
  json arguments;
  std::optional<std::string> match;
};
const evalgraph::Params<CallSpec> &call_params() {
  using evalgraph::param;
  static const evalgraph::Params<CallSpec> p{{
      param(&CallSpec::name, "name", "The tool's name (compared exactly)").make_required().min_length(1),
      param(&CallSpec::arguments, "arguments",
            "The expected arguments (an object; left out: any arguments). A value {\"$regex\": \"...\"} matches "
            "a text by a Perl-compatible regex (searched; anchor with ^ and $)")
          .with_schema({{"type", "object"}}),
      param(&CallSpec::match, "match",
            "How the arguments compare: equal (same keys, equal values), subset (the expected keys and "
            "values are in the actual arguments), regex (subset, and every expected text is a regex); "
            "default: the node's `match`")
          .one_of({"equal", "subset", "regex"}),
  }};
  return p;
}

std::string type_words(const json &v) { return v.is_number() ? "number" : v.type_name(); }

void compile(const std::string &pattern, const std::string &place, Regexes &rx) {
  if (rx.count(pattern) > 0) return;
  try {
    rx.emplace(pattern, std::make_shared<const Regex>(pattern));
  } catch (const std::invalid_argument &e) {
    throw std::invalid_argument(place + ": invalid regex \"" + pattern + "\": " + e.what());
  }
}

// Compiles the patterns of one call's arguments: every {"$regex": p}, and under match: regex every text.
void collect_regexes(const json &v, ArgMatch mode, const std::string &place, Regexes &rx) {
  if (v.is_object()) {
    if (auto it = v.find("$regex"); it != v.end()) {
      if (v.size() != 1 || !it->is_string())
        throw std::invalid_argument(place + ": {\"$regex\": \"pattern\"} takes one text pattern and no other key");
      compile(it->get<std::string>(), place, rx);
      return;
    }
    for (const auto &[k, x] : v.items()) collect_regexes(x, mode, place + "." + k, rx);
  } else if (v.is_array()) {
    for (std::size_t i = 0; i < v.size(); ++i) collect_regexes(v[i], mode, place + "." + std::to_string(i), rx);
  } else if (v.is_string() && mode == ArgMatch::Regex) {
    compile(v.get<std::string>(), place, rx);
  }
}

// Arguments given as JSON text: the value it holds; empty text: no arguments. Not JSON: nullopt (`why` says).
std::optional<json> arguments_from_text(const std::string &text, int depth, std::string *why) {
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) return json::object();
  json j;
  if (!evalgraph::parse_bounded(text, j, depth, why)) return std::nullopt;
  return j;
}

ExpectedCall parse_call(const json &v, ArgMatch default_match, const std::string &place, int depth, bool from_text,
                        Regexes &rx) {
  if (!v.is_object())
    throw std::invalid_argument(place + ": an expected call is an object {name, arguments?, match?}, got " +
                                type_words(v));
  json call = v;
  if (auto a = call.find("arguments"); from_text && a != call.end() && a->is_string()) {
    std::string why;
    std::optional<json> parsed = arguments_from_text(a->get<std::string>(), depth, &why);
    if (!parsed) throw std::invalid_argument(place + ".arguments: the text is " + why);
    *a = std::move(*parsed);
  }
  const CallSpec spec = call_params().parse(call, place + ".");
  ExpectedCall e;
  e.name = spec.name;
  e.match = spec.match ? match_from(*spec.match) : default_match;
  if (!spec.arguments.is_null()) {
    if (!spec.arguments.is_object())
      throw std::invalid_argument(place + ".arguments: the expected arguments are an object, got " +
                                  type_words(spec.arguments));
    collect_regexes(spec.arguments, e.match, place + ".arguments", rx);
    e.arguments = spec.arguments;
  }
  e.shown = std::move(call);
  return e;
}

}  // namespace

json expected_schema() {
  json call = call_params().schema_json();
  call.erase("patternProperties");
  // An item is a call (the object keywords apply) or a list of calls, an alternative (`items` applies).
  json item = call;
  item["type"] = json::array({"object", "array"});
  item["items"] = call;
  return {{"type", json::array({"array", "null"})}, {"items", std::move(item)}};
}

Expected parse_expected(const json &v, ArgMatch default_match, const std::string &where, int nesting_depth,
                        bool from_text) {
  if (!v.is_array())
    throw std::invalid_argument(where +
                                ": expected calls are a list of calls {name, arguments?, match?} or a "
                                "list of such lists (alternatives), got " +
                                type_words(v));
  Expected out;
  const bool lists = !v.empty() && v[0].is_array();
  if (!lists) out.alternatives.emplace_back();
  for (std::size_t i = 0; i < v.size(); ++i) {
    const std::string place = where + "." + std::to_string(i);
    if (v[i].is_array() != lists)
      throw std::invalid_argument(place +
                                  ": the list mixes calls and lists of calls; write one list of calls, or "
                                  "a list of alternatives each a list of calls");
    if (!lists) {
      out.alternatives[0].push_back(parse_call(v[i], default_match, place, nesting_depth, from_text, out.regexes));
      continue;
    }
    Alternative alt;
    for (std::size_t k = 0; k < v[i].size(); ++k)
      alt.push_back(
          parse_call(v[i][k], default_match, place + "." + std::to_string(k), nesting_depth, from_text, out.regexes));
    out.alternatives.push_back(std::move(alt));
  }
  return out;
}

std::vector<ActualCall> parse_tool_calls(const json &v, int nesting_depth, const std::string &where) {
  std::vector<ActualCall> out;
  if (v.is_null()) return out;
  if (!v.is_array())
    throw std::invalid_argument(where + " must be a JSON array of calls {name, arguments, ...}, got " + type_words(v) +
                                (v.is_string() ? " (a CSV column: list it in options.json_columns)" : ""));
  out.reserve(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) {
    const json &c = v[i];
    const std::string place = where + "." + std::to_string(i);
    if (!c.is_object())
      throw std::invalid_argument(place + ": a call is an object {name, arguments, ...}, got " + type_words(c));
    auto name = c.find("name");
    if (name == c.end() || !name->is_string() || name->get_ref<const std::string &>().empty())
      throw std::invalid_argument(place + ": a call needs a non-empty text 'name'");
    ActualCall a;
    a.name = name->get<std::string>();
    a.shown = {{"name", a.name}};
    auto args = c.find("arguments");
    if (args == c.end() || args->is_null()) {
      a.arguments = json::object();
    } else if (args->is_string()) {
      a.shown["arguments"] = *args;
      std::optional<json> parsed = arguments_from_text(args->get<std::string>(), nesting_depth, nullptr);
      a.arguments_text = !parsed.has_value();
      a.arguments = parsed ? std::move(*parsed) : *args;
    } else {
      a.arguments = *args;
      a.shown["arguments"] = *args;
    }
    out.push_back(std::move(a));
  }
  return out;
}

}  // namespace trajectory
