// evalgraph/params.hpp: parameters declared once, schema and parsing derived from the declaration.
#include <catch2/catch.hpp>
#include <cstdint>
#include <evalgraph/params.hpp>
#include <limits>

namespace {
using nlohmann::json;

struct Inner {
  double w = 1;
};
struct Item {
  std::string id;
  std::optional<std::string> label;
};
struct Base {
  double tau = 0.35;
};
struct ParamCfg : Base {
  std::string mode = "fast";
  int window = 3;
  bool strict = true;
  std::optional<std::string> provider;
  std::vector<std::string> tags;
  std::map<std::string, double> weights;
  Inner inner;
  std::vector<Item> items;
  long long seed = 1;
  unsigned count = 0;
};
const evalgraph::Params<Base> kBase{"", {evalgraph::param(&Base::tau, "tau", "Threshold").range(0, 1)}};
const evalgraph::Params<Inner> kInner{"", {evalgraph::param(&Inner::w, "w", "A weight").range(0, 10)}};
const evalgraph::Params<Item> kItem{"", {evalgraph::param(&Item::id, "id", "The id").make_required(),
                                         evalgraph::param(&Item::label, "label", "The label")}};
const evalgraph::Params<ParamCfg> kParams{
    "A test node",
    kBase,
    {
        evalgraph::param(&ParamCfg::mode, "mode", "How").one_of({"fast", "exact"}),
        evalgraph::param(&ParamCfg::window, "window", "Turns").range(1, 100).unit("turns"),
        evalgraph::param(&ParamCfg::strict, "strict", "Strictly"),
        evalgraph::param(&ParamCfg::provider, "provider", "Provider; null = default").nullable(),
        evalgraph::param(&ParamCfg::tags, "tags", "Tags"),
        evalgraph::param(&ParamCfg::weights, "weights", "Weights").items_range(0, 10),
        evalgraph::param(&ParamCfg::inner, "inner", "Nested", kInner),
        evalgraph::param(&ParamCfg::items, "items", "Items", kItem),
        evalgraph::param(&ParamCfg::seed, "seed", "Seed"),
        evalgraph::param(&ParamCfg::count, "count", "Count"),
    }};
// parse()'s message, or "" where it took the parameters.
std::string err(const json &with) {
  try {
    (void)kParams.parse(with);
  } catch (const std::invalid_argument &e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST_CASE("params: the schema carries type, default, description and constraints of every declaration") {
  const json s = json::parse(kParams.schema());
  CHECK(s["type"] == "object");
  CHECK(s["description"] == "A test node");
  CHECK(s["additionalProperties"] == false);
  CHECK(s["patternProperties"].contains("^_"));
  for (const auto &[k, p] : s["properties"].items()) {
    CHECK(p.contains("description"));
    CHECK(p.contains("default"));
  }
  CHECK(s["properties"]["tau"] == json{{"type", "number"}, {"minimum", 0}, {"maximum", 1}, {"default", 0.35}, {"description", "Threshold"}});
  CHECK(s["properties"]["mode"]["enum"] == json{"fast", "exact"});
  CHECK(s["properties"]["mode"]["default"] == "fast");
  CHECK(s["properties"]["window"]["type"] == "integer");
  CHECK(s["properties"]["window"]["unit"] == "turns");
  CHECK(s["properties"]["provider"]["type"] == json{"string", "null"});
  CHECK(s["properties"]["provider"]["default"].is_null());
  CHECK(s["properties"]["weights"]["additionalProperties"]["maximum"] == 10);
  CHECK(s["properties"]["inner"]["properties"]["w"]["default"] == 1.0);
  CHECK(s["properties"]["inner"]["default"] == json{{"w", 1.0}});
  CHECK(s["properties"]["items"]["items"]["required"] == json{"id"});
  CHECK(kParams.defaults()["strict"] == true);
}

TEST_CASE("params: parse fills the struct, defaults where absent or null") {
  ParamCfg c = kParams.parse(json::object());
  CHECK(c.tau == 0.35);
  CHECK(c.mode == "fast");
  CHECK(c.window == 3);
  CHECK_FALSE(c.provider);
  c = kParams.parse(json{{"tau", 0.5}, {"mode", "exact"}, {"strict", false}, {"provider", "local"},
                         {"tags", {"a", "b"}}, {"weights", {{"x", 2}}}, {"inner", {{"w", 4}}},
                         {"items", {{{"id", "a"}}, {{"id", "b"}, {"label", "B"}}}}, {"seed", 9007199254740993LL},
                         {"_output_dir", "/tmp"}, {"window", nullptr}});
  CHECK(c.tau == 0.5);
  CHECK(c.mode == "exact");
  CHECK(c.window == 3);  // null = the default
  CHECK_FALSE(c.strict);
  CHECK(*c.provider == "local");
  CHECK(c.tags == std::vector<std::string>{"a", "b"});
  CHECK(c.weights.at("x") == 2);
  CHECK(c.inner.w == 4);
  REQUIRE(c.items.size() == 2);
  CHECK_FALSE(c.items[0].label);
  CHECK(*c.items[1].label == "B");
  CHECK(c.seed == 9007199254740993LL);  // integers are not routed through double
}

TEST_CASE("params: parse refuses what a host that does not validate lets through, naming the parameter") {
  CHECK_THAT(err({{"tua", 1}}), Catch::Contains("unknown parameter 'tua'") && Catch::Contains("known: tau, mode"));
  CHECK_THAT(err({{"tau", 2}}), Catch::Contains("parameter 'tau' = 2 is outside [0, 1]"));
  CHECK_THAT(err({{"tau", "x"}}), Catch::Contains("parameter 'tau' must be a number"));
  CHECK_THAT(err({{"mode", "slow"}}), Catch::Contains("parameter 'mode' must be one of"));
  CHECK_THAT(err({{"strict", 1}}), Catch::Contains("parameter 'strict' must be true or false"));
  CHECK_THAT(err({{"inner", {{"v", 1}}}}), Catch::Contains("unknown parameter 'inner.v'"));
  CHECK_THAT(err({{"inner", {{"w", 11}}}}), Catch::Contains("parameter 'inner.w'"));
  CHECK_THAT(err({{"items", {{{"label", "x"}}}}}), Catch::Contains("missing required parameter 'items.0.id'"));
  CHECK_THAT(err(json::array()), Catch::Contains("parameters must be a JSON object"));
}

TEST_CASE("params: an integer parameter takes a whole number that fits its type, never truncated or wrapped") {
  // Found by fuzz_plugin_params under UBSan: a double past long long's range was cast (undefined behaviour).
  CHECK_THAT(err(json::parse(R"({"seed": 1666666666666666666666666666666666666666666666666666})")),
             Catch::Contains("parameter 'seed' = 1.6666666666666668e+51 is outside what the parameter holds"));
  CHECK_THAT(err({{"seed", -1e19}}), Catch::Contains("parameter 'seed' = -1e+19 is outside"));
  CHECK_THAT(err({{"seed", 9223372036854775808.0}}), Catch::Contains("is outside"));  // 2^63: one past the top
  CHECK_THAT(err({{"seed", 2.5}}), Catch::Contains("parameter 'seed' must be an integer"));
  CHECK_THAT(err({{"count", -1}}),
             Catch::Contains("parameter 'count' = -1 is outside what the parameter holds [0, 4294967295]"));
  CHECK_THAT(err({{"count", 4294967296ULL}}), Catch::Contains("parameter 'count' = 4294967296 is outside"));
  CHECK_THAT(err({{"count", 5e9}}), Catch::Contains("is outside"));
  CHECK(kParams.parse({{"seed", 4.0}, {"count", 4294967295ULL}}).seed == 4);  // a whole double is an integer
  CHECK(kParams.parse({{"seed", -9223372036854775807LL - 1}}).seed == std::numeric_limits<long long>::min());
  CHECK(kParams.parse({{"seed", -9223372036854775808.0}}).seed == std::numeric_limits<long long>::min());
  CHECK(kParams.parse({{"count", 4294967295ULL}}).count == 4294967295U);
}

TEST_CASE("sdk fits_integer: a double converts to an integer type only where its whole part is in the range") {
  // (what params, OTLP attributes and LLM usage counts check before a cast: past the range it is undefined)
  CHECK(evalgraph::fits_integer<long long>(-9223372036854775808.0));       // -2^63: the least
  CHECK_FALSE(evalgraph::fits_integer<long long>(9223372036854775808.0));  // 2^63: one past the top
  CHECK(evalgraph::fits_integer<long long>(9223372036854774784.0));        // the greatest double below 2^63
  CHECK_FALSE(evalgraph::fits_integer<long long>(-1e19));
  CHECK(evalgraph::fits_integer<unsigned>(4294967295.0));
  CHECK(evalgraph::fits_integer<unsigned>(4294967295.5));  // (truncates to the top)
  CHECK_FALSE(evalgraph::fits_integer<unsigned>(4294967296.0));
  CHECK_FALSE(evalgraph::fits_integer<unsigned>(-1.0));
  CHECK(evalgraph::fits_integer<std::uint64_t>(18446744073709549568.0));  // the greatest double below 2^64
  CHECK_FALSE(evalgraph::fits_integer<std::uint64_t>(18446744073709551616.0));
  CHECK_FALSE(evalgraph::fits_integer<int>(1e300));
  CHECK_FALSE(evalgraph::fits_integer<int>(std::numeric_limits<double>::infinity()));
  CHECK_FALSE(evalgraph::fits_integer<int>(std::numeric_limits<double>::quiet_NaN()));
}

TEST_CASE("params: node_id_param declares a non-empty node id, described by the node type it names") {
  struct Names {
    std::string judge = "judge";
  };
  struct Report : Names {};  // a member of a base struct: the struct is named, as with param<S>
  static const evalgraph::Params<Report> p{{evalgraph::node_id_param<Report>(&Names::judge, "judge", "acme.judge")}};
  CHECK(p.schema_json()["properties"]["judge"] == json{{"type", "string"}, {"minLength", 1}, {"default", "judge"},
                                                       {"description", "Node id of the acme.judge node"}});
  CHECK(p.parse(json{{"judge", "grader"}}).judge == "grader");
  CHECK_THROWS_WITH(p.parse(json{{"judge", ""}}), "parameter 'judge' is shorter than 1 characters");
}
