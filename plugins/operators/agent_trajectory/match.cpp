// Does one actual call satisfy one expected call: names, and the arguments under equal | subset | regex.
#include <cmath>
#include <stdexcept>

#include "trajectory.hpp"

namespace trajectory {

const char *order_name(Order o) {
  switch (o) {
    case Order::Exact:
      return "exact";
    case Order::AnyOrder:
      return "any_order";
    case Order::Subset:
      return "subset";
    default:
      return "in_order";
  }
}
const char *match_name(ArgMatch m) {
  switch (m) {
    case ArgMatch::Subset:
      return "subset";
    case ArgMatch::Regex:
      return "regex";
    default:
      return "equal";
  }
}
Order order_from(const std::string &name) {
  if (name == "exact") return Order::Exact;
  if (name == "in_order") return Order::InOrder;
  if (name == "any_order") return Order::AnyOrder;
  if (name == "subset") return Order::Subset;
  throw std::invalid_argument("order must be exact, in_order, any_order or subset, got '" + name + "'");
}
ArgMatch match_from(const std::string &name) {
  if (name == "equal") return ArgMatch::Equal;
  if (name == "subset") return ArgMatch::Subset;
  if (name == "regex") return ArgMatch::Regex;
  throw std::invalid_argument("match must be equal, subset or regex, got '" + name + "'");
}

namespace {

// A value as a reason quotes it: its JSON, cut after 80 characters.
std::string brief(const json &v) {
  std::string s = v.dump(-1, ' ', false, json::error_handler_t::replace);
  return s.size() > 80 ? s.substr(0, 77) + "..." : s;
}
std::string type_words(const json &v) { return v.is_number() ? "number" : v.type_name(); }

// One comparison of expected with actual arguments; the first difference goes to `why` (when given).
struct Matcher {
  ArgMatch mode;
  const Regexes &rx;
  std::string *why;

  bool fail(const std::string &place, const std::string &msg) const {
    if (why != nullptr) *why = place + ": " + msg;
    return false;
  }

  bool value(const json &e, const json &a, const std::string &place) const {
    if (e.is_object()) {
      auto r = e.find("$regex");
      if (r != e.end() && e.size() == 1 && r->is_string()) return regex(r->get_ref<const std::string &>(), a, place);
      return object(e, a, place);
    }
    if (e.is_string() && mode == ArgMatch::Regex) return regex(e.get_ref<const std::string &>(), a, place);
    if (e.is_array()) return array(e, a, place);
    // Numbers compare by value (1 == 1.0), across nlohmann's integer and float kinds; other types must agree.
    if (e == a) return true;
    return fail(place, "expected " + brief(e) + ", got " + brief(a));
  }

  bool object(const json &e, const json &a, const std::string &place) const {
    if (!a.is_object()) return fail(place, "expected an object, got " + type_words(a) + " " + brief(a));
    for (const auto &[k, ev] : e.items()) {
      auto it = a.find(k);
      if (it == a.end()) return fail(place + "." + k, "missing (expected " + brief(ev) + ")");
      if (!value(ev, *it, place + "." + k)) return false;
    }
    if (mode != ArgMatch::Equal) return true;
    for (const auto &[k, av] : a.items())
      if (!e.contains(k))
        return fail(place + "." + k, "not expected (" + brief(av) + "; match: equal allows no other key, subset does)");
    return true;
  }

  bool array(const json &e, const json &a, const std::string &place) const {
    if (!a.is_array()) return fail(place, "expected an array, got " + type_words(a) + " " + brief(a));
    if (a.size() != e.size())
      return fail(place, "expected " + std::to_string(e.size()) + " items, got " + std::to_string(a.size()));
    for (std::size_t i = 0; i < e.size(); ++i)
      if (!value(e[i], a[i], place + "." + std::to_string(i))) return false;
    return true;
  }

  // A text (or a number or boolean, as its JSON text) searched with the compiled pattern.
  bool regex(const std::string &pattern, const json &a, const std::string &place) const {
    const std::string shown = "/" + pattern + "/";
    std::string number;
    std::string_view text;
    if (a.is_string())
      text = a.get_ref<const std::string &>();
    else if (a.is_number() || a.is_boolean())
      text = number = a.dump();
    else
      return fail(place, "expected a text matching " + shown + ", got " + type_words(a));
    auto it = rx.find(pattern);
    if (it == rx.end()) throw std::logic_error("agent.trajectory: regex " + shown + " was not compiled");
    std::string limit;
    switch (it->second->search(text, &limit)) {
      case Regex::Result::Match:
        return true;
      case Regex::Result::NoMatch:
        return fail(place, brief(a) + " does not match " + shown);
      default:
        return fail(place, "the regex " + shown + " gave up on " + brief(a) + " (" + limit + ")");
    }
  }
};

// A copy with every integral float written as an integer, so that 1.0 and 1 give the same text.
json canonical(const json &v) {
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9.0e15) return static_cast<long long>(d);
    return v;
  }
  if (v.is_object()) {
    json out = json::object();
    for (const auto &[k, x] : v.items()) out[k] = canonical(x);
    return out;
  }
  if (v.is_array()) {
    json out = json::array();
    for (const auto &x : v) out.push_back(canonical(x));
    return out;
  }
  return v;
}

}  // namespace

bool arguments_match(const ExpectedCall &e, const ActualCall &a, const Regexes &rx, std::string *why) {
  if (!e.arguments) return true;
  if (a.arguments_text) {
    if (why != nullptr) *why = "arguments: the call's arguments are text, not JSON: " + brief(a.arguments);
    return false;
  }
  return Matcher{e.match, rx, why}.value(*e.arguments, a.arguments, "arguments");
}

bool call_matches(const ExpectedCall &e, const ActualCall &a, const Regexes &rx, std::string *why) {
  if (e.name != a.name) {
    if (why != nullptr) *why = "name: expected '" + e.name + "', got '" + a.name + "'";
    return false;
  }
  return arguments_match(e, a, rx, why);
}

std::string call_key(const ActualCall &a) {
  const std::string args = a.arguments_text
                               ? "t" + a.arguments.get<std::string>()
                               : "j" + canonical(a.arguments).dump(-1, ' ', false, json::error_handler_t::replace);
  return a.name + '\x1f' + args;
}

}  // namespace trajectory
