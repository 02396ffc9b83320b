// The SDK parses a node's parameters once, with its NodeSpec's Params, and hands the struct to the node's
// constructor (T(const Host &, const S &, const json &) or T(const Host &, const S &), S learnt from the
// constructor; plugin.hpp node_type). A bad parameter fails create() with parse()'s message, Params of another
// struct than the constructor's fail it saying both, a spec without Params fails it saying what to declare.
#include <catch2/catch.hpp>

#include <string>

#include "evalgraph/plugin.hpp"

using nlohmann::json;

namespace {

struct Cfg {
  int min = 3;
  std::string mode = "fast";
};
const evalgraph::Params<Cfg> kCfg{{
    evalgraph::param(&Cfg::min, "min", "A lower bound").at_least(0),
    evalgraph::param(&Cfg::mode, "mode", "How").one_of({"fast", "exact"}),
}};
struct Other {
  bool on = false;
};
const evalgraph::Params<Other> kOther{{evalgraph::param(&Other::on, "on", "Switch")}};

const evalgraph::NodeSpec kTyped{.name = "test.typed", .writes = {"min", "mode", "dir"}, .params = kCfg};

// What the constructor received, given back by process(). The SDK learns Cfg from the constructor.
class Typed : public evalgraph::Node {
 public:
  Typed(const evalgraph::Host &, const Cfg &c, const json &params)
      : c_(c), dir_(params.value("_output_dir", std::string())) {}
  json process(evalgraph::Call &, const json &) override { return {{"min", c_.min}, {"mode", c_.mode}, {"dir", dir_}}; }

 private:
  const Cfg c_;
  const std::string dir_;
};
// The two-argument typed form.
class TypedShort : public evalgraph::Node {
 public:
  TypedShort(const evalgraph::Host &, const Cfg &c) : min_(c.min) {}
  json process(evalgraph::Call &, const json &) override { return {{"min", min_}}; }

 private:
  const int min_;
};
// Misdeclared classes, each its own (the SDK keeps a typed class's Params per class).
class TypedOther : public TypedShort {
 public:
  using TypedShort::TypedShort;
};
class TypedNone : public Typed {
 public:
  using Typed::Typed;
};
class TypedTwice : public Typed {
 public:
  using Typed::Typed;
};

// create() with `params`, then one process(): {status, the output or the error text}.
std::pair<eg_status, std::string> run(const eg_node_type &t, const char *params) {
  void *inst = nullptr;
  eg_buffer err{};
  const eg_status s = t.create(nullptr, params, &inst, &err);
  if (s != EG_OK) return {s, evalgraph::detail::take_buffer(err)};
  REQUIRE(inst != nullptr);
  eg_buffer out{};
  const eg_status p = t.process(inst, nullptr, "{}", 2, &out);
  std::string text = evalgraph::detail::take_buffer(out);
  t.destroy(inst);
  return {p, text};
}

}  // namespace

TEST_CASE("node_type: the typed constructor gets the parameters parsed with the spec's Params", "[sdk][params]") {
  STATIC_REQUIRE(evalgraph::detail::constructor_form<Typed>() == 3);
  STATIC_REQUIRE(evalgraph::detail::constructor_form<TypedShort>() == 2);
  STATIC_REQUIRE(evalgraph::detail::constructor_form<Cfg>() == -1);  // no constructor node_type<T> takes
  const eg_node_type t = evalgraph::node_type<Typed>(kTyped);
  auto [ok, out] = run(t, R"({"min": 7, "mode": "exact", "_output_dir": "/tmp/x"})");
  REQUIRE(ok == EG_OK);
  CHECK(json::parse(out) == json{{"min", 7}, {"mode", "exact"}, {"dir", "/tmp/x"}});
  // Defaults where absent, and no parameters at all.
  CHECK(json::parse(run(t, "{}").second) == json{{"min", 3}, {"mode", "fast"}, {"dir", ""}});
  CHECK(json::parse(run(t, "").second) == json{{"min", 3}, {"mode", "fast"}, {"dir", ""}});
  CHECK(json::parse(run(evalgraph::node_type<TypedShort>(kTyped), R"({"min": 9})").second) == json{{"min", 9}});
}

TEST_CASE("node_type: a bad parameter fails create() of a typed node with parse()'s message", "[sdk][params]") {
  const eg_node_type t = evalgraph::node_type<Typed>(kTyped);
  const eg_node_type short_form = evalgraph::node_type<TypedShort>(kTyped);
  for (const char *bad : {R"({"min": -1})", R"({"mode": "slow"})", R"({"min": "three"})", R"({"nope": 1})", "[1]"}) {
    INFO(bad);
    std::string message;
    try {
      (void)kCfg.parse(json::parse(bad));
    } catch (const std::invalid_argument &e) {
      message = e.what();
    }
    REQUIRE_FALSE(message.empty());
    CHECK(run(t, bad) == std::pair<eg_status, std::string>{EG_ERROR, message});
    CHECK(run(short_form, bad) == std::pair<eg_status, std::string>{EG_ERROR, message});
  }
  CHECK(run(t, R"({"min": -1})").second == "parameter 'min' = -1 is outside [0, inf]");
  CHECK(run(t, R"({"min": 1)").first == EG_INVALID_INPUT);  // not JSON: refused before any parsing, as before
}

TEST_CASE("node_type: a typed node whose spec declares other Params, or none, fails create() saying so", "[sdk][params]") {
  // The struct learnt from the constructor: checked when a node is created, both structs named.
  const eg_node_type other = evalgraph::node_type<TypedOther>({.name = "test.other", .params = kOther});
  CHECK(run(other, "{}") ==
        std::pair<eg_status, std::string>{
            EG_ERROR,
            "test.other: the node's constructor takes (anonymous namespace)::Cfg, but its NodeSpec's .params "
            "parse into (anonymous namespace)::Other; declare .params = an "
            "evalgraph::Params<(anonymous namespace)::Cfg>"});
  const eg_node_type none = evalgraph::node_type<TypedNone>({.name = "test.none"});
  CHECK(run(none, "{}").second ==
        "test.none: the node's constructor takes its parameters' struct, so its NodeSpec "
        "needs .params = the evalgraph::Params of that struct (evalgraph::no_params() for none)");
  // One class as two node types: the same Params work, different ones fail both (create() cannot tell them apart).
  static const evalgraph::Params<Cfg> kCfg2{{evalgraph::param(&Cfg::min, "min", "Another bound")}};
  const eg_node_type first = evalgraph::node_type<TypedTwice>(kTyped);
  CHECK(run(first, "{}").first == EG_OK);
  const eg_node_type again = evalgraph::node_type<TypedTwice>({.name = "test.again", .params = kCfg});
  CHECK(run(again, "{}").first == EG_OK);
  const eg_node_type second = evalgraph::node_type<TypedTwice>({.name = "test.second", .params = kCfg2});
  const std::pair<eg_status, std::string> twice{EG_ERROR, "test.second: one node class declared as several node types "
                                                           "with different Params; give each its own class or the same Params"};
  CHECK(run(second, "{}") == twice);
  CHECK(run(first, "{}") == twice);
}
