// evalgraph plugin SDK — parameters declared once.
//
// A node's parameters are a plain struct whose member initialisers are the defaults. Declare each member once,
// with its name, description and constraints; the JSON Schema the node publishes (every property with
// `default` and `description`) and the parsing of `with:` into the struct both come from that declaration:
//
//   struct Cfg {
//     double tau = 0.35;
//     std::string mode = "fast";
//   };
//   const evalgraph::Params<Cfg> kParams{{
//       evalgraph::param(&Cfg::tau, "tau", "Threshold of ...").range(0, 1),
//       evalgraph::param(&Cfg::mode, "mode", "How ...").one_of({"fast", "exact"}),
//   }};
//   ... NodeSpec{..., .params = kParams};
// The node class's constructor (const Host &, const Cfg &) or (const Host &, const Cfg &, const json &) gets the
// parsed struct from the SDK (plugin.hpp, node_type).
//
// The schema's description is the node type's (NodeSpec::description), said there once. The older form with a
// description first, Params<Cfg>{"What the node does", {...}}, still compiles; that description then stays the
// schema's own.
// Member types: bool, double, integers, std::string, std::vector<std::string>, std::map<std::string, double>,
// nlohmann::json (give its schema with .schema()), std::optional of these (default null: "not set"), and a
// nested struct with its own Params (param(&S::sub, "sub", "...", sub_params)).
// The engine validates `with:` against the schema before a node is created (errors at file:line:column), so
// parse() refuses only what a host that does not validate lets through; keys starting with '_' are the host's.
#ifndef EVALGRAPH_PARAMS_HPP
#define EVALGRAPH_PARAMS_HPP

#include <algorithm>
#include <cmath>
#include <functional>
#include <initializer_list>
#include <limits>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

#include "evalgraph/json_bounded.hpp"

namespace evalgraph {

template <class S> class Params;

// The struct of a node type without parameters (its declaration: no_params(), below).
struct NoParams {};

namespace detail {
template <class T> struct optional_of { using type = void; };
template <class T> struct optional_of<std::optional<T>> { using type = T; };

// The schema type of a member type, its value as JSON, and the conversion from a (non-null) JSON value.
template <class T> nlohmann::json schema_of() {
  using J = nlohmann::json;
  if constexpr (std::is_same_v<T, bool>) return {{"type", "boolean"}};
  else if constexpr (std::is_integral_v<T>) return {{"type", "integer"}};
  else if constexpr (std::is_floating_point_v<T>) return {{"type", "number"}};
  else if constexpr (std::is_same_v<T, std::string>) return {{"type", "string"}};
  else if constexpr (std::is_same_v<T, std::vector<std::string>>) return {{"type", "array"}, {"items", {{"type", "string"}}}};
  else if constexpr (std::is_same_v<T, std::map<std::string, double>>)
    return {{"type", "object"}, {"additionalProperties", {{"type", "number"}}}};
  else if constexpr (!std::is_void_v<typename optional_of<T>::type>) return schema_of<typename optional_of<T>::type>();
  else return J::object();  // nlohmann::json: any value, unless .schema() says more
}
template <class T> nlohmann::json value_of(const T &v) {
  if constexpr (!std::is_void_v<typename optional_of<T>::type>) return v ? nlohmann::json(*v) : nlohmann::json();
  else return nlohmann::json(v);
}
// A bound as the schema shows it: 10, not 10.0 (the engine's messages quote it).
inline nlohmann::json bound(double x) {
  if (x == static_cast<double>(static_cast<long long>(x)) && x > -1e15 && x < 1e15) return static_cast<long long>(x);
  return x;
}
[[noreturn]] inline void bad(const std::string &name, const char *what) {
  throw std::invalid_argument("parameter '" + name + "' must be " + what);
}
// Refuses what the schema's number and string bounds and enum refuse (a host may not have validated).
inline void check_bounds(const nlohmann::json &s, const nlohmann::json &v, const std::string &name) {
  auto num = [&](const char *k) { auto it = s.find(k); return it != s.end() && it->is_number() ? &*it : nullptr; };
  if (v.is_number()) {
    const double x = v.get<double>();
    const nlohmann::json *lo = num("minimum"), *hi = num("maximum"), *ex = num("exclusiveMinimum");
    if ((lo && x < lo->get<double>()) || (hi && x > hi->get<double>()) || (ex && x <= ex->get<double>()))
      throw std::invalid_argument("parameter '" + name + "' = " + v.dump() + " is outside " + (ex ? "(" + ex->dump() : "[" + (lo ? lo->dump() : "-inf")) +
                                  ", " + (hi ? hi->dump() : "inf") + "]");
  }
  if (auto e = s.find("enum"); e != s.end() && std::find(e->begin(), e->end(), v) == e->end())
    throw std::invalid_argument("parameter '" + name + "' must be one of " + e->dump() + ", got " + v.dump());
  if (auto m = s.find("minLength"); m != s.end() && v.is_string() && v.get_ref<const std::string &>().size() < m->get<std::size_t>())
    throw std::invalid_argument("parameter '" + name + "' is shorter than " + m->dump() + " characters");
}
template <class T>
[[noreturn]] void outside_type(const nlohmann::json &v, const std::string &name) {
  using L = std::numeric_limits<T>;
  throw std::invalid_argument("parameter '" + name + "' = " + v.dump() + " is outside what the parameter holds [" +
                              nlohmann::json(L::lowest()).dump() + ", " + nlohmann::json(L::max()).dump() + "]");
}
// An integer parameter takes a whole number that fits its type: 2.5 is refused, not truncated, and 1e40 is
// refused, not wrapped (converting a double past the type's range is undefined behaviour).
template <class T>
T to_integer(const nlohmann::json &v, const std::string &name) {
  using L = std::numeric_limits<T>;
  if (v.is_number_unsigned()) {
    const auto u = v.get<unsigned long long>();
    if (u > static_cast<unsigned long long>(L::max())) outside_type<T>(v, name);
    return static_cast<T>(u);
  }
  if (v.is_number_integer()) {
    const auto i = v.get<long long>();
    if constexpr (std::is_signed_v<T>) {
      if (i < static_cast<long long>(L::min()) || i > static_cast<long long>(L::max())) outside_type<T>(v, name);
    } else if (i < 0 || static_cast<unsigned long long>(i) > static_cast<unsigned long long>(L::max())) {
      outside_type<T>(v, name);
    }
    return static_cast<T>(i);
  }
  const double d = v.get<double>();
  if (d != std::trunc(d)) bad(name, "an integer");
  if (!fits_integer<T>(d)) outside_type<T>(v, name);
  return static_cast<T>(d);
}
template <class T> T convert(const nlohmann::json &v, const std::string &name) {
  if constexpr (std::is_same_v<T, bool>) {
    if (!v.is_boolean()) bad(name, "true or false");
    return v.get<bool>();
  } else if constexpr (std::is_integral_v<T>) {
    if (!v.is_number()) bad(name, "an integer");
    return to_integer<T>(v, name);
  } else if constexpr (std::is_arithmetic_v<T>) {
    if (!v.is_number()) bad(name, "a number");
    const double d = v.get<double>();
    if constexpr (sizeof(T) < sizeof(double))  // a double past a float's range does not convert (undefined)
      if (std::fabs(d) > static_cast<double>(std::numeric_limits<T>::max())) outside_type<T>(v, name);
    return static_cast<T>(d);
  } else if constexpr (std::is_same_v<T, std::string>) {
    if (!v.is_string()) bad(name, "a string");
    return v.get<std::string>();
  } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
    if (!v.is_array()) bad(name, "an array of strings");
    T out;
    for (const auto &x : v) out.push_back(convert<std::string>(x, name));
    return out;
  } else if constexpr (std::is_same_v<T, std::map<std::string, double>>) {
    if (!v.is_object()) bad(name, "an object of numbers");
    T out;
    for (const auto &[k, x] : v.items()) out[k] = convert<double>(x, name + "." + k);
    return out;
  } else if constexpr (!std::is_void_v<typename optional_of<T>::type>) {
    return convert<typename optional_of<T>::type>(v, name);
  } else {
    return v;  // nlohmann::json
  }
}
}  // namespace detail

// One declared parameter of struct S: its schema property, and how a value lands in S.
template <class S> struct Param {
  std::string name;
  nlohmann::json schema;  // the property, "default" and "description" included
  bool required = false;
  std::function<void(S &, const nlohmann::json &, const std::string &)> set;  // (struct, non-null value, name)

  Param &&range(double lo, double hi) && {
    schema["minimum"] = detail::bound(lo), schema["maximum"] = detail::bound(hi);
    return std::move(*this);
  }
  Param &&at_least(double lo) && { schema["minimum"] = detail::bound(lo); return std::move(*this); }
  Param &&above(double lo) && { schema["exclusiveMinimum"] = detail::bound(lo); return std::move(*this); }  // > lo
  Param &&one_of(std::initializer_list<const char *> options) && {
    schema["enum"] = nlohmann::json::array();
    for (const char *o : options) schema["enum"].push_back(o);
    return std::move(*this);
  }
  Param &&min_length(std::size_t n) && { schema["minLength"] = n; return std::move(*this); }
  Param &&max_length(std::size_t n) && { schema["maxLength"] = n; return std::move(*this); }
  Param &&unit(const char *u) && { schema["unit"] = u; return std::move(*this); }
  Param &&nullable() && {  // null is accepted and means "not set"
    schema["type"] = nlohmann::json::array({schema.at("type"), "null"});
    return std::move(*this);
  }
  // The required parameters have no default.
  Param &&make_required() && { required = true, schema.erase("default"); return std::move(*this); }
  // A default that the struct cannot show (e.g. one that depends on another parameter: say which in the text).
  Param &&shown_default(nlohmann::json d) && { schema["default"] = std::move(d); return std::move(*this); }
  // More JSON Schema keywords for this property (items, minItems, pattern, ...), merged in.
  Param &&with_schema(const nlohmann::json &extra) && { schema.update(extra); return std::move(*this); }
  Param &&items_range(double lo, double hi) && {  // a std::map<std::string, double>'s values
    schema["additionalProperties"]["minimum"] = detail::bound(lo), schema["additionalProperties"]["maximum"] = detail::bound(hi);
    return std::move(*this);
  }
};

template <class S0, class B> using param_struct = std::conditional_t<std::is_void_v<S0>, B, S0>;

// Declares member `m` of S as parameter `name`; its default is the member's initialiser. S is the member's class;
// for a member of a base class, name the struct: param<Derived>(&Derived::base_member, ...).
template <class S0 = void, class T, class B>
Param<param_struct<S0, B>> param(T B::*mb, const char *name, const char *description) {
  using S = param_struct<S0, B>;
  T S::*m = mb;
  Param<S> p;
  p.name = name;
  p.schema = detail::schema_of<T>();
  p.schema["description"] = description;
  p.schema["default"] = detail::value_of(S{}.*m);
  p.set = [m](S &s, const nlohmann::json &v, const std::string &n) { s.*m = detail::convert<T>(v, n); };
  return p;
}
// A parameter naming another node of the pipeline, of node type `node_type`, whose output the node reads (e.g. a
// report's judge): a string member, "Node id of the <node_type> node", not empty.
template <class S0 = void, class B>
Param<param_struct<S0, B>> node_id_param(std::string B::*m, const char *name, const char *node_type) {
  return param<S0>(m, name, ("Node id of the " + std::string(node_type) + " node").c_str()).min_length(1);
}
// A nested object parameter whose members are declared by `sub` (it must outlive the declaration).
template <class S0 = void, class T, class B>
Param<param_struct<S0, B>> param(T B::*mb, const char *name, const char *description, const Params<T> &sub) {
  using S = param_struct<S0, B>;
  T S::*m = mb;
  Param<S> p;
  p.name = name;
  p.schema = sub.schema_json();
  p.schema.erase("patternProperties");
  p.schema["description"] = description;
  p.schema["default"] = sub.defaults();
  p.set = [m, &sub](S &s, const nlohmann::json &v, const std::string &n) { s.*m = sub.parse(v, n + "."); };
  return p;
}

// An array parameter whose items are objects declared by `item` (it must outlive the declaration).
template <class S0 = void, class T, class B>
Param<param_struct<S0, B>> param(std::vector<T> B::*mb, const char *name, const char *description, const Params<T> &item) {
  using S = param_struct<S0, B>;
  std::vector<T> S::*m = mb;
  Param<S> p;
  p.name = name;
  nlohmann::json items = item.schema_json();
  items.erase("patternProperties");
  p.schema = {{"type", "array"}, {"items", std::move(items)}, {"description", description}, {"default", nlohmann::json::array()}};
  p.set = [m, &item](S &s, const nlohmann::json &v, const std::string &n) {
    if (!v.is_array()) detail::bad(n, "an array");
    (s.*m).clear();
    for (std::size_t i = 0; i < v.size(); ++i) (s.*m).push_back(item.parse(v[i], n + "." + std::to_string(i) + "."));
  };
  return p;
}

// What every Params<S> publishes, whatever its struct S: the JSON Schema of `with:` (NodeSpec::params).
class ParamsSchema {
 public:
  // The JSON Schema text to publish; lives as long as this object.
  const char *schema() const { return text_.c_str(); }
  const nlohmann::json &schema_json() const { return schema_; }
  // The schema text with `description` (the node type's) as its description where the declaration gave none.
  std::string schema_text(const char *description) const {
    if (schema_.contains("description") || description == nullptr || *description == '\0') return text_;
    nlohmann::json s = schema_;
    s["description"] = description;
    return s.dump();
  }
  // The struct S of the Params<S> this is, and parse() into it without naming it (node_type<T> hands the
  // result to T's constructor, which names it: plugin.hpp).
  virtual const std::type_info &struct_type() const = 0;
  virtual std::shared_ptr<const void> parse_erased(const nlohmann::json &with) const = 0;

 protected:
  ParamsSchema() = default;
  virtual ~ParamsSchema() = default;
  nlohmann::json schema_;
  std::string text_;
};

// Marks Params whose node also takes parameters it does not declare (the python node: its script's own, which
// its describe() declares per node): Params<S>{evalgraph::other_keys_allowed, {...}}. The schema then allows
// other keys and parse() leaves them to the node (its constructor's `const json &params`).
struct OtherKeysAllowed {};
inline constexpr OtherKeysAllowed other_keys_allowed{};

// The declared parameters of a node type: its JSON Schema and the parsing of `with:` into S.
template <class S> class Params : public ParamsSchema {
 public:
  explicit Params(std::vector<Param<S>> params) : Params(nullptr, std::move(params)) {}
  Params(OtherKeysAllowed, std::vector<Param<S>> params) : Params(nullptr, std::move(params)) {
    other_keys_ = true;
    schema_["additionalProperties"] = true;
    text_ = schema_.dump();
  }
  // The parameters of `base` (a base struct of S, e.g. evalgraph::LlmParams) followed by `more`.
  template <class B, class = std::enable_if_t<std::is_base_of_v<B, S> && !std::is_same_v<B, S>>>
  Params(const Params<B> &base, std::vector<Param<S>> more) : Params(nullptr, lift(base, std::move(more))) {}
  // The same with a description of the schema's own (the older form; NodeSpec::description is said once).
  Params(const char *description, std::vector<Param<S>> params) : params_(std::move(params)) {
    schema_ = {{"type", "object"}, {"additionalProperties", false}, {"properties", nlohmann::json::object()}};
    if (description != nullptr && *description != '\0') schema_["description"] = description;
    for (const auto &p : params_) {
      schema_["properties"][p.name] = p.schema;
      if (p.required) schema_["required"].push_back(p.name);
    }
    schema_["patternProperties"] = {{"^_", {{"description", "Set by the host (_output_dir, _limits, _run)."}}}};
    text_ = schema_.dump();
  }
  template <class B, class = std::enable_if_t<std::is_base_of_v<B, S> && !std::is_same_v<B, S>>>
  Params(const char *description, const Params<B> &base, std::vector<Param<S>> more)
      : Params(description, lift(base, std::move(more))) {}
  Params(const Params &) = delete;
  Params &operator=(const Params &) = delete;

  // Every parameter's default, as an object.
  nlohmann::json defaults() const {
    nlohmann::json d = nlohmann::json::object();
    for (const auto &p : params_)
      if (!p.required) d[p.name] = p.schema.at("default");
    return d;
  }

  // The parameters as a struct: defaults where absent or null; a key that is not declared, a missing required
  // one or a value outside its declaration throws std::invalid_argument naming the parameter (`prefix` + name).
  S parse(const nlohmann::json &with, const std::string &prefix = "") const {
    S s{};
    if (with.is_null()) return check_required(s, with, prefix);
    if (!with.is_object()) throw std::invalid_argument(prefix.empty() ? "parameters must be a JSON object" : "parameter '" + prefix.substr(0, prefix.size() - 1) + "' must be an object");
    for (const auto &[k, v] : with.items()) {
      if (!k.empty() && k[0] == '_' && prefix.empty()) continue;  // the host's
      const Param<S> *p = find(k);
      if (p == nullptr && other_keys_ && prefix.empty()) continue;  // the node's own (OtherKeysAllowed)
      if (p == nullptr) {
        std::string known;
        for (const auto &d : params_) known += (known.empty() ? "" : ", ") + d.name;
        throw std::invalid_argument("unknown parameter '" + prefix + k + "' (known: " + (known.empty() ? "none" : known) + ")");
      }
      if (v.is_null()) continue;
      detail::check_bounds(p->schema, v, prefix + k);
      p->set(s, v, prefix + k);
    }
    return check_required(s, with, prefix);
  }
  const std::type_info &struct_type() const override { return typeid(S); }
  std::shared_ptr<const void> parse_erased(const nlohmann::json &with) const override {
    return std::make_shared<const S>(parse(with));
  }

 private:
  template <class B> friend class Params;
  template <class B> static std::vector<Param<S>> lift(const Params<B> &base, std::vector<Param<S>> more) {
    std::vector<Param<S>> all;
    for (const auto &b : base.params_)
      all.push_back({b.name, b.schema, b.required, [f = b.set](S &s, const nlohmann::json &v, const std::string &n) { f(s, v, n); }});
    for (auto &p : more) all.push_back(std::move(p));
    return all;
  }
  const Param<S> *find(const std::string &k) const {
    for (const auto &p : params_)
      if (p.name == k) return &p;
    return nullptr;
  }
  S check_required(S s, const nlohmann::json &with, const std::string &prefix) const {
    for (const auto &p : params_)
      if (p.required && (!with.is_object() || !with.contains(p.name) || with.at(p.name).is_null()))
        throw std::invalid_argument("missing required parameter '" + prefix + p.name + "'");
    return s;
  }

  std::vector<Param<S>> params_;
  bool other_keys_ = false;
};

// The parameters of a node type that takes none: NodeSpec{..., .params = evalgraph::no_params()} (a `with:` with
// any key is refused).
inline const Params<NoParams> &no_params() {
  static const Params<NoParams> p{{}};
  return p;
}

}  // namespace evalgraph

#endif  // EVALGRAPH_PARAMS_HPP
