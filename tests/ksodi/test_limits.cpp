// Hostile inputs as the KSODI operators meet them (issue #15): the sentence limit, JSON held in a string
// field nested too deep, numbers beyond a double, the _limits parameter, and the input reader's refusals.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "evalgraph/input.hpp"
#include "ksodi/plugin_util.hpp"

using nlohmann::json;

namespace {
std::string sentences(int n) {
  std::string s;
  for (int i = 0; i < n; ++i) s += "Satz " + std::to_string(i) + ". ";
  return s;
}
std::string refusal(std::string_view answer, std::size_t limit) {
  try {
    ksodi::check_sentences(answer, limit, "ksodi.test");
  } catch (const evalgraph::InputError &e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST_CASE("limits: an answer over sentences_per_answer is refused, counted exactly near the limit", "[limits]") {
  CHECK(refusal(sentences(100), 100).empty());
  CHECK(refusal("Ein Satz. Noch einer! Und? Ende.", 4).empty());
  // Near the limit: split and counted exactly.
  CHECK(refusal(sentences(150), 100) ==
        "ksodi.test: the answer has 150 sentences, over the limit limits.sentences_per_answer = 100; shorten the "
        "answer, or raise limits.sentences_per_answer in the pipeline");
  // Far over it: a prefix tells, the rest is not split.
  std::string huge;
  while (huge.size() < (4u << 20)) huge += "Hi. ";
  CHECK_THAT(refusal(huge, 10000), Catch::StartsWith("ksodi.test: the answer has more than 10000 sentences"));
  // Many periods that end no sentence (3.5, z. B.) are split and found to be few.
  std::string numbers;
  for (int i = 0; i < 300; ++i) numbers += "3.5 ";
  CHECK(refusal(numbers, 100).empty());
}

TEST_CASE("limits: _limits reaches the operators, with defaults for a host that passes none", "[limits]") {
  auto d = ksodi::input_limits(json::object());
  CHECK(d.sentences_per_answer == 10000);
  CHECK(d.nesting_depth == 64);
  auto l = ksodi::input_limits(json{{"_limits", {{"sentences_per_answer", 7}, {"nesting_depth", 3}}}});
  CHECK(l.sentences_per_answer == 7);
  CHECK(l.nesting_depth == 3);
}

TEST_CASE("limits: docs held as JSON text in a string parse within the nesting limit", "[limits]") {
  auto docs = [](const json &in, int depth = evalgraph::kDefaultNestingDepth) {
    return evalgraph::Record(in.dump(), "ksodi.test", {"retrieved_docs"}).docs(0, "doc_", depth);
  };
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  try {
    docs({{"retrieved_docs", deep}});
    FAIL("no error");
  } catch (const evalgraph::InputError &e) {
    CHECK_THAT(e.what(), Catch::Contains("ksodi.test: retrieved_docs: the string looks like a JSON array but is nested "
                                         "deeper than 64 levels (limits.nesting_depth = 64)"));
  }
  json ok = {{"retrieved_docs", R"([{"id":"a","text":"Der Tarif."}])"}};
  CHECK(docs(ok).at(0).text == "Der Tarif.");
  CHECK_THROWS_WITH(docs(ok, 1), Catch::Contains("nested deeper than 1 levels"));
  json big = {{"retrieved_docs", "[1e999999]"}};
  CHECK_THROWS_WITH(docs(big), Catch::Contains("a number beyond the range of a double") && !Catch::Contains("json.exception"));
}

TEST_CASE("limits: the input reader words the problem and bounds the nesting", "[limits]") {
  auto call = [](std::string_view input) {
    return evalgraph::for_each_record(input, "ksodi.test", [](std::string_view text) {
      (void)evalgraph::Record(text, "ksodi.test", {"answer"});
      return std::string("{}");
    });
  };
  CHECK(call(R"({"answer":"a"})") == "{}");
  CHECK(call(R"([{"answer":"a"},{"answer":"b"}])") == "[{},{}]");
  CHECK_THROWS_WITH(call("{\"answer\":" + std::string(5000, '[') + std::string(5000, ']') + "}"),
                    Catch::Contains("the input is nested deeper than 1024 levels"));
  CHECK_THROWS_WITH(call(R"({"answer": 1e999999})"), Catch::Contains("the input is a number beyond the range of a double"));
  CHECK_THROWS_WITH(call(R"({"answer": tru})"), Catch::Contains("the input is not valid JSON at byte") &&
                                                    !Catch::Contains("json.exception"));
  CHECK_THROWS_WITH(call(R"([{"answer": tru}])"), Catch::Contains("the input is not valid JSON at byte"));
}
