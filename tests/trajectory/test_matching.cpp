// agent.trajectory's computation: every order mode, alternatives, the argument matchers, forbidden tools,
// max_steps, repeated calls, empty lists, arguments given as JSON text, and malformed input. The expected numbers
// are worked out by hand in the comments.
#include <catch2/catch.hpp>
#include <string>

#include "trajectory.hpp"

namespace {

using trajectory::json;

json tool(const std::string &name, json args = nullptr) {
  json c = {{"name", name}};
  if (!args.is_null()) c["arguments"] = std::move(args);
  return c;
}

trajectory::Options with_order(const std::string &order) {
  trajectory::Options o;
  o.order = trajectory::order_from(order);
  return o;
}

// The node's output for `calls` against `expected` (null: no expectation).
json judge(const json &expected, const json &calls, const trajectory::Options &o = {}) {
  const auto actual = trajectory::parse_tool_calls(calls, 64, "tool_calls");
  if (expected.is_null()) return trajectory::evaluate(nullptr, actual, o, "none");
  const auto e = trajectory::parse_expected(expected, o.match, "expected", 64, false);
  return trajectory::evaluate(&e, actual, o, "parameter");
}
json judge(const json &expected, const json &calls, const std::string &order) {
  return judge(expected, calls, with_order(order));
}

std::string reason_of(const json &out) { return out["first_mismatch"]["reason"].get<std::string>(); }

// search, lookup, answer: the trajectory most cases below look at.
const json kCalls = json::array({tool("search", {{"q", "weather"}}), tool("lookup", {{"id", 1}}), tool("answer")});

}  // namespace

TEST_CASE("exact needs the same calls in the same order and nothing else") {
  json out = judge(kCalls, kCalls, "exact");
  CHECK(out["passed"] == true);
  CHECK(out["precision"] == 1.0);
  CHECK(out["recall"] == 1.0);
  CHECK(out["f1"] == 1.0);
  CHECK(out["steps"] == 3);
  CHECK(out["first_mismatch"].is_null());
  CHECK(out["parameters"]["order"] == "exact");

  // search, answer expected: lookup stands where answer should. Matched 2 (order kept) of 3 actual, 2 of 2.
  out = judge(json::array({kCalls[0], kCalls[2]}), kCalls, "exact");
  CHECK(out["passed"] == false);
  CHECK(out["matched"] == 2);
  CHECK(out["precision"].get<double>() == Approx(2.0 / 3));
  CHECK(out["recall"] == 1.0);
  CHECK(out["first_mismatch"]["index"] == 1);
  CHECK(out["first_mismatch"]["expected"]["name"] == "answer");
  CHECK(out["first_mismatch"]["actual"]["name"] == "lookup");
  CHECK_THAT(reason_of(out), Catch::Contains("name: expected 'answer', got 'lookup'"));
  CHECK(out["failures"][0]["check"] == "order");
  CHECK_THAT(out["failures"][0]["message"].get<std::string>(), Catch::StartsWith("exact: call 1 differs"));

  // One call too few: the trajectory ends early.
  out = judge(kCalls, json::array({kCalls[0], kCalls[1]}), "exact");
  CHECK(out["passed"] == false);
  CHECK(out["first_mismatch"]["index"].is_null());
  CHECK(out["first_mismatch"]["actual"].is_null());
  CHECK_THAT(reason_of(out), Catch::Contains("missing call 'answer': the trajectory ended after 2 calls"));
}

TEST_CASE("exact counts matches by order, not by position") {
  // x, search, lookup, answer against search, lookup, answer: position 0 differs, yet 3 calls match in order:
  // precision 3/4, recall 3/3.
  json calls = kCalls;
  calls.insert(calls.begin(), tool("x"));
  json out = judge(kCalls, calls, "exact");
  CHECK(out["passed"] == false);
  CHECK(out["matched"] == 3);
  CHECK(out["precision"] == 0.75);
  CHECK(out["recall"] == 1.0);
  CHECK(out["f1"].get<double>() == Approx(2 * 0.75 / 1.75));
  CHECK(out["assignment"] ==
        json::parse(R"([{"expected":0,"actual":1},{"expected":1,"actual":2},{"expected":2,"actual":3}])"));
  CHECK(out["first_mismatch"]["index"] == 0);
}

TEST_CASE("in_order takes the expected calls as a subsequence, extra calls allowed") {
  json out = judge(json::array({kCalls[0], kCalls[2]}), kCalls, "in_order");
  CHECK(out["passed"] == true);
  CHECK(out["precision"].get<double>() == Approx(2.0 / 3));
  CHECK(out["recall"] == 1.0);
  CHECK(out["f1"].get<double>() == Approx(0.8));  // 2·(2/3)·1 / (2/3 + 1)

  // answer, then search: search comes before answer, so in order only one of the two is found.
  out = judge(json::array({kCalls[2], kCalls[0]}), kCalls, "in_order");
  CHECK(out["passed"] == false);
  CHECK(out["matched"] == 1);
  CHECK(out["recall"] == 0.5);
  CHECK(out["first_mismatch"]["expected"]["name"] == "search");
  CHECK(out["first_mismatch"]["index"].is_null());  // nothing left after answer (call 2)
  CHECK_THAT(reason_of(out), Catch::Contains("expected call 1 'search' not found: the trajectory ended after 3 calls"));
  CHECK_THAT(reason_of(out), Catch::Contains("called earlier, at call 0: out of order"));

  // The call is there, in order, with other arguments: the reason says which argument.
  out = judge(json::array({tool("lookup", {{"id", 2}})}), kCalls, "in_order");
  CHECK(out["passed"] == false);
  CHECK(out["first_mismatch"]["index"] == 1);
  CHECK_THAT(reason_of(out), Catch::Contains("call 1, differs: arguments.id: expected 2, got 1"));
}

TEST_CASE("any_order needs every expected call in any order, and finds the maximum assignment") {
  json out = judge(json::array({kCalls[2], kCalls[0]}), kCalls, "any_order");
  CHECK(out["passed"] == true);
  CHECK(out["matched"] == 2);
  CHECK(out["precision"].get<double>() == Approx(2.0 / 3));

  out = judge(json::array({kCalls[2], tool("delete")}), kCalls, "any_order");
  CHECK(out["passed"] == false);
  CHECK(out["recall"] == 0.5);
  CHECK(out["first_mismatch"]["expected"]["name"] == "delete");
  CHECK_THAT(reason_of(out), Catch::Contains("expected call 1 'delete' was never called"));

  // Greedy would give expected 0 (any q) the first call and leave expected 1 (q = exact) without one; the
  // maximum assignment gives expected 0 the second call.
  const json expected = json::array({tool("search", {{"q", {{"$regex", ".*"}}}}), tool("search", {{"q", "exact"}})});
  const json calls = json::array({tool("search", {{"q", "exact"}}), tool("search", {{"q", "other"}})});
  out = judge(expected, calls, "any_order");
  CHECK(out["passed"] == true);
  CHECK(out["matched"] == 2);
  CHECK(out["assignment"] == json::parse(R"([{"expected":0,"actual":1},{"expected":1,"actual":0}])"));

  // Two expected calls, one actual call to the tool: the second expected call finds it taken.
  out = judge(json::array({tool("answer"), tool("answer")}), kCalls, "any_order");
  CHECK(out["passed"] == false);
  CHECK_THAT(reason_of(out), Catch::Contains("every call to it is assigned to another expected call"));
}

TEST_CASE("subset allows only expected calls, not all of them needed") {
  // Four expected, three called, all among them: precision 1, recall 3/4.
  json out = judge(json::array({kCalls[0], kCalls[1], kCalls[2], tool("other")}), kCalls, "subset");
  CHECK(out["passed"] == true);
  CHECK(out["precision"] == 1.0);
  CHECK(out["recall"] == 0.75);

  out = judge(json::array({kCalls[0], kCalls[2]}), kCalls, "subset");
  CHECK(out["passed"] == false);
  CHECK(out["first_mismatch"]["index"] == 1);
  CHECK(out["first_mismatch"]["expected"].is_null());
  CHECK_THAT(reason_of(out), Catch::Contains("call 1 'lookup' is not among the expected tools"));

  // The tool is expected, with other arguments.
  out = judge(json::array({kCalls[0], tool("lookup", {{"id", 7}}), kCalls[2]}), kCalls, "subset");
  CHECK(out["passed"] == false);
  CHECK(out["first_mismatch"]["expected"]["arguments"]["id"] == 7);
  CHECK_THAT(reason_of(out), Catch::Contains("arguments.id: expected 7, got 1"));

  // A repeated allowed call is still allowed (each actual call needs some expected call, not its own).
  out = judge(json::array({kCalls[0]}), json::array({kCalls[0], kCalls[0]}), "subset");
  CHECK(out["passed"] == true);
  CHECK(out["precision"] == 0.5);  // one-to-one: one of the two calls is paired
}

TEST_CASE("alternatives: any passes, the best is reported") {
  const json alts =
      json::array({json::array({tool("search"), tool("lookup")}), json::array({tool("search"), tool("answer")})});
  json out = judge(alts, json::array({tool("search"), tool("answer")}), "exact");
  CHECK(out["passed"] == true);
  CHECK(out["matched_alternative"] == 1);
  CHECK(out["alternatives"].size() == 2);
  CHECK(out["alternatives"][0]["passed"] == false);
  CHECK(out["alternatives"][1]["passed"] == true);
  CHECK(out["parameters"]["alternatives"] == 2);

  // Neither holds; both match one of two: the tie goes to the first, and the message says none held.
  out = judge(alts, json::array({tool("search"), tool("other")}), "exact");
  CHECK(out["passed"] == false);
  CHECK(out["matched_alternative"] == 0);
  CHECK_THAT(out["failures"][0]["message"].get<std::string>(),
             Catch::StartsWith("none of the 2 alternatives holds; the closest, 0, exact: "));

  // Neither holds; the second matches more (F1 2/3 against 0): it is the closest.
  const json two = json::array({json::array({tool("x"), tool("y")}), json::array({tool("search"), tool("z")})});
  out = judge(two, json::array({tool("search")}), "in_order");
  CHECK(out["matched_alternative"] == 1);
  CHECK(out["f1"].get<double>() == Approx(2.0 / 3));  // precision 1, recall 1/2
}

TEST_CASE("equal arguments: same keys, equal values, numbers by value") {
  const json expected = json::array({tool("weather", {{"city", "Berlin"}, {"days", 3}})});
  CHECK(judge(expected, json::array({tool("weather", {{"days", 3.0}, {"city", "Berlin"}})}))["passed"] == true);
  json out = judge(expected, json::array({tool("weather", {{"city", "Berlin"}})}));
  CHECK(out["passed"] == false);
  CHECK_THAT(reason_of(out), Catch::Contains("arguments.days: missing (expected 3)"));
  out = judge(expected, json::array({tool("weather", {{"city", "Berlin"}, {"days", 3}, {"units", "C"}})}));
  CHECK_THAT(reason_of(out), Catch::Contains("arguments.units: not expected"));
  out = judge(expected, json::array({tool("weather", {{"city", "Berlin"}, {"days", "3"}})}));
  CHECK_THAT(reason_of(out), Catch::Contains("arguments.days: expected 3, got \"3\""));
  // No arguments expected: any arguments pass.
  CHECK(judge(json::array({tool("weather")}), json::array({tool("weather", {{"x", 1}})}))["passed"] == true);
  // Empty arguments expected: none may come.
  CHECK(judge(json::array({tool("weather", json::object())}), json::array({tool("weather", {{"x", 1}})}))["passed"] ==
        false);
  CHECK(judge(json::array({tool("weather", json::object())}), json::array({tool("weather")}))["passed"] == true);
}

TEST_CASE("subset arguments: the expected keys and values are in the actual ones, recursively") {
  const json expected = json::parse(R"([{"name": "book", "match": "subset",
      "arguments": {"guest": {"name": "Ada"}, "tags": ["a", {"k": 1}]}}])");
  const json ok = json::array({tool(
      "book", json::parse(R"({"guest": {"name": "Ada", "age": 36}, "tags": ["a", {"k": 1, "x": 2}], "room": 4})"))});
  json out = judge(expected, ok);
  CHECK(out["passed"] == true);
  // Arrays compare item by item and must be as long.
  out = judge(expected,
              json::array({tool("book", json::parse(R"({"guest": {"name": "Ada"}, "tags": ["a", {"k": 1}, "b"]})"))}));
  CHECK(out["passed"] == false);
  CHECK_THAT(reason_of(out), Catch::Contains("arguments.tags: expected 2 items, got 3"));
  out = judge(expected,
              json::array({tool("book", json::parse(R"({"guest": {"name": "Bob"}, "tags": ["a", {"k": 1}]})"))}));
  CHECK_THAT(reason_of(out), Catch::Contains("arguments.guest.name: expected \"Ada\", got \"Bob\""));
  // The node's `match` is the default for calls that do not say their own.
  trajectory::Options o;
  o.match = trajectory::ArgMatch::Subset;
  CHECK(judge(json::array({tool("w", {{"city", "Berlin"}})}), json::array({tool("w", {{"city", "Berlin"}, {"d", 1}})}),
              o)["passed"] == true);
  CHECK(judge(json::array({tool("w", {{"city", "Berlin"}})}),
              json::array({tool("w", {{"city", "Berlin"}, {"d", 1}})}))["passed"] == false);
}

TEST_CASE("regex arguments: {\"$regex\": ...} values and match: regex") {
  const json expected =
      json::array({tool("weather", {{"city", {{"$regex", "^Ber"}}}, {"days", {{"$regex", "^[1-3]$"}}}})});
  CHECK(judge(expected, json::array({tool("weather", {{"city", "Berlin"}, {"days", 2}})}))["passed"] == true);
  json out = judge(expected, json::array({tool("weather", {{"city", "Paris"}, {"days", 2}})}));
  CHECK(out["passed"] == false);
  CHECK_THAT(reason_of(out), Catch::Contains("arguments.city: \"Paris\" does not match /^Ber/"));
  out = judge(expected, json::array({tool("weather", {{"city", {{"name", "Berlin"}}}, {"days", 2}})}));
  CHECK_THAT(reason_of(out), Catch::Contains("arguments.city: expected a text matching /^Ber/, got object"));

  // match: regex: every expected text is a pattern (searched: unanchored), and other keys are allowed.
  const json searched = json::parse(R"([{"name": "search", "match": "regex", "arguments": {"q": "weather.*Berlin"}}])");
  CHECK(judge(searched, json::array({tool("search", {{"q", "the weather in Berlin today"}, {"n", 5}})}))["passed"] ==
        true);
  CHECK(judge(searched, json::array({tool("search", {{"q", "Berlin weather"}})}))["passed"] == false);

  // Perl-compatible syntax: classes such as \\d, inline flags such as (?i).
  const json perl =
      json::array({tool("weather", {{"city", {{"$regex", "(?i)^berlin$"}}}, {"days", {{"$regex", "^\\d+$"}}}})});
  CHECK(judge(perl, json::array({tool("weather", {{"city", "BERLIN"}, {"days", 12}})}))["passed"] == true);
  CHECK(judge(perl, json::array({tool("weather", {{"city", "Berlin"}, {"days", 1.5}})}))["passed"] == false);
}

TEST_CASE("a regex that would backtrack for ever gives up with the reason, on any length of text") {
  // ^(a+)+$ over 40 a's and a b: exponential backtracking; ^(a|aa)+$ over 200,000 of them: a recursive matcher
  // (std::regex) would overflow the stack on it. Both end within PCRE2's match and heap limits.
  const json nested = json::array({tool("t", {{"v", {{"$regex", "^(a+)+$"}}}})});
  json out = judge(nested, json::array({tool("t", {{"v", std::string(40, 'a') + "b"}})}));
  CHECK(out["passed"] == false);
  CHECK_THAT(reason_of(out),
             Catch::Contains("arguments.v: the regex /^(a+)+$/ gave up on") && Catch::Contains("limit"));
  const json alternation = json::array({tool("t", {{"v", {{"$regex", "^(a|aa)+$"}}}})});
  out = judge(alternation, json::array({tool("t", {{"v", std::string(200000, 'a') + "b"}})}));
  CHECK(out["passed"] == false);
  CHECK_THAT(reason_of(out), Catch::Contains("gave up") && Catch::Contains("limit"));
  // A long text with a pattern that scans it once is matched.
  out = judge(json::array({tool("t", {{"v", {{"$regex", "needle"}}}})}),
              json::array({tool("t", {{"v", std::string(1000000, 'a') + "needle"}})}));
  CHECK(out["passed"] == true);
}

TEST_CASE("arguments given as JSON text are parsed, other text matches only calls without arguments") {
  const json expected = json::array({tool("weather", {{"city", "Berlin"}})});
  CHECK(judge(expected, json::array({tool("weather", "{\"city\": \"Berlin\"}")}))["passed"] == true);
  json out = judge(expected, json::array({tool("weather", "city=Berlin")}));
  CHECK(out["passed"] == false);
  CHECK_THAT(reason_of(out), Catch::Contains("arguments: the call's arguments are text, not JSON: \"city=Berlin\""));
  CHECK(out["first_mismatch"]["actual"]["arguments"] == "city=Berlin");  // shown as it came
  CHECK(judge(json::array({tool("weather")}), json::array({tool("weather", "city=Berlin")}))["passed"] == true);
  // Empty text: no arguments.
  CHECK(judge(json::array({tool("answer", json::object())}), json::array({tool("answer", "  ")}))["passed"] == true);
  // The record's expected calls (port) may also give their arguments as JSON text.
  const auto e =
      trajectory::parse_expected(json::parse(R"([{"name": "weather", "arguments": "{\"city\": \"Berlin\"}"}])"),
                                 trajectory::ArgMatch::Equal, "expected", 64, true);
  REQUIRE(e.alternatives[0][0].arguments.has_value());
  CHECK(*e.alternatives[0][0].arguments == json{{"city", "Berlin"}});
  CHECK_THROWS_WITH(trajectory::parse_expected(json::parse(R"([{"name": "w", "arguments": "{oops"}])"),
                                               trajectory::ArgMatch::Equal, "expected", 64, true),
                    Catch::Contains("expected.0.arguments: the text is not valid JSON"));
}

TEST_CASE("forbidden tools, max_steps and repeated calls") {
  trajectory::Options o;
  o.forbidden = {"delete_user"};
  const json calls = json::array({tool("search"), tool("delete_user", {{"id", 1}}), tool("delete_user", {{"id", 2}})});
  json out = judge(nullptr, calls, o);
  CHECK(out["passed"] == false);
  CHECK(out["forbidden_calls"]["count"] == 2);
  CHECK(out["forbidden_calls"]["calls"][0] == json{{"index", 1}, {"name", "delete_user"}});
  CHECK(out["failures"].size() == 1);
  CHECK(out["failures"][0]["check"] == "forbidden");
  CHECK_THAT(out["failures"][0]["message"].get<std::string>(),
             Catch::Contains("call 1 'delete_user' is a forbidden tool (and 1 more"));
  // Without an expectation there is nothing to score: precision, recall, F1 are null.
  CHECK(out["precision"].is_null());
  CHECK(out["matched_alternative"].is_null());
  CHECK(out["parameters"]["expected_source"] == "none");

  trajectory::Options steps;
  steps.max_steps = 2;
  out = judge(nullptr, kCalls, steps);
  CHECK(out["passed"] == false);
  CHECK(out["failures"][0] == json{{"check", "max_steps"}, {"message", "3 calls, more than max_steps 2"}});
  steps.max_steps = 3;
  CHECK(judge(nullptr, kCalls, steps)["passed"] == true);

  // 1 and 1.0, object and JSON text: the same call.
  const json repeated = json::array(
      {tool("lookup", {{"id", 1}}), tool("search"), tool("lookup", "{\"id\": 1.0}"), tool("lookup", {{"id", 2}})});
  out = judge(nullptr, repeated);
  CHECK(out["passed"] == true);  // allow_repeats is true by default: reported, not failed
  CHECK(out["redundant_calls"]["count"] == 1);
  CHECK(out["redundant_calls"]["calls"][0] == json{{"index", 2}, {"name", "lookup"}, {"same_as", 0}});
  trajectory::Options strict;
  strict.allow_repeats = false;
  out = judge(nullptr, repeated, strict);
  CHECK(out["passed"] == false);
  CHECK(out["failures"][0]["check"] == "repeats");
  CHECK_THAT(out["failures"][0]["message"].get<std::string>(), Catch::Contains("call 2 'lookup' repeats call 0"));
}

TEST_CASE("empty lists") {
  // Nothing expected, nothing done: passes in every mode; precision and recall are 0/0, null.
  for (const char *order : {"exact", "in_order", "any_order", "subset"}) {
    json out = judge(json::array(), json::array(), order);
    CHECK(out["passed"] == true);
    CHECK(out["precision"].is_null());
    CHECK(out["recall"].is_null());
    CHECK(out["f1"].is_null());
    CHECK(out["steps"] == 0);
  }
  // Nothing expected, one call: exact and subset fail, in_order and any_order pass; precision 0.
  CHECK(judge(json::array(), kCalls, "exact")["passed"] == false);
  CHECK(judge(json::array(), kCalls, "subset")["passed"] == false);
  json out = judge(json::array(), kCalls, "in_order");
  CHECK(out["passed"] == true);
  CHECK(out["precision"] == 0.0);
  CHECK(out["recall"].is_null());
  // Calls expected, none done (null tool_calls is none): recall 0, precision null.
  out = judge(json::array({tool("search")}), nullptr, "in_order");
  CHECK(out["passed"] == false);
  CHECK(out["recall"] == 0.0);
  CHECK(out["precision"].is_null());
  CHECK(out["steps"] == 0);
}

TEST_CASE("malformed input is refused with its place") {
  using trajectory::parse_tool_calls;
  CHECK_THROWS_WITH(
      parse_tool_calls("[{\"name\": \"x\"}]", 64, "tool_calls"),
      Catch::Contains("tool_calls must be a JSON array of calls") && Catch::Contains("options.json_columns"));
  CHECK_THROWS_WITH(parse_tool_calls(json{{"name", "x"}}, 64, "tool_calls"), Catch::Contains("got object"));
  CHECK_THROWS_WITH(parse_tool_calls(json::array({tool("a"), 5}), 64, "tool_calls"),
                    Catch::Contains("tool_calls.1: a call is an object"));
  CHECK_THROWS_WITH(parse_tool_calls(json::array({json{{"arguments", json::object()}}}), 64, "tool_calls"),
                    Catch::Contains("tool_calls.0: a call needs a non-empty text 'name'"));
  CHECK_THROWS_WITH(parse_tool_calls(json::array({json{{"name", 3}}}), 64, "tool_calls"), Catch::Contains("'name'"));

  auto expected = [](const char *text) {
    return trajectory::parse_expected(json::parse(text), trajectory::ArgMatch::Equal, "expected", 64, false);
  };
  CHECK_THROWS_WITH(expected(R"({"name": "x"})"),
                    Catch::Contains("expected: expected calls are a list") && Catch::Contains("got object"));
  CHECK_THROWS_WITH(expected(R"([{"name": "x"}, [{"name": "y"}]])"),
                    Catch::Contains("expected.1: the list mixes calls and lists"));
  CHECK_THROWS_WITH(expected(R"([{"nmae": "x"}])"), Catch::Contains("unknown parameter 'expected.0.nmae'"));
  CHECK_THROWS_WITH(expected(R"([{"arguments": {}}])"),
                    Catch::Contains("missing required parameter 'expected.0.name'"));
  CHECK_THROWS_WITH(expected(R"([{"name": "x", "match": "fuzzy"}])"), Catch::Contains("expected.0.match"));
  CHECK_THROWS_WITH(expected(R"([{"name": "x", "arguments": [1]}])"),
                    Catch::Contains("expected.0.arguments: the expected arguments are an object, got array"));
  CHECK_THROWS_WITH(
      expected(R"([[{"name": "x", "arguments": {"c": {"$regex": "("}}}]])"),
      Catch::Contains("expected.0.0.arguments.c: invalid regex \"(\": missing closing parenthesis at offset 1"));
  CHECK_THROWS_WITH(expected(R"([{"name": "x", "arguments": {"c": {"$regex": "a", "flags": "i"}}}])"),
                    Catch::Contains("expected.0.arguments.c: {\"$regex\": \"pattern\"} takes one text pattern"));
  CHECK_THROWS_WITH(expected(R"([{"name": "x", "match": "regex", "arguments": {"c": ["ok", "[z-a]"]}}])"),
                    Catch::Contains("expected.0.arguments.c.1: invalid regex"));
  CHECK_THROWS_WITH(expected(R"([5])"), Catch::Contains("expected.0: an expected call is an object"));
}

TEST_CASE("large lists are compared in bounded time, too large ones refused") {
  // 500 expected calls to one tool against 500 actual ones: every pair matches; all are assigned in either mode.
  json calls = json::array();
  for (int i = 0; i < 500; ++i) calls.push_back(tool("t", {{"i", i % 7}}));
  json expected = json::array();
  for (int i = 0; i < 500; ++i)
    expected.push_back(json::parse(R"({"name": "t", "arguments": {"i": {"$regex": "."}}})"));
  json out = judge(expected, calls, "any_order");
  CHECK(out["passed"] == true);
  CHECK(out["matched"] == 500);
  CHECK(out["redundant_calls"]["count"] == 493);  // 7 distinct calls
  CHECK(out["redundant_calls"]["calls"].size() == trajectory::kMaxListed);
  CHECK(judge(expected, calls, "in_order")["matched"] == 500);

  // 2,001 x 2,000 pairs is more than the 4,000,000 a comparison may take: the record is refused, saying so.
  const json two_thousand(std::vector<json>(2000, tool("t")));
  json too_many = two_thousand;
  too_many.push_back(tool("t"));
  CHECK_THROWS_WITH(judge(too_many, two_thousand),
                    Catch::Contains("too many calls to compare: 2001 expected x 2000 actual calls"));
  CHECK(judge(json::array({tool("t")}), json(std::vector<json>(4001, tool("t"))))["matched"] == 1);
}
