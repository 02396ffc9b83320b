// The SDK's input reader (evalgraph/input.hpp), which every KSODI operator reads its input with: it reads
// exactly what a full JSON parse reads (escapes of every kind, \u with surrogate pairs as Python's json.dumps
// writes them, a repeated member: the last one), refuses what a full parse refuses, in its words, and names the
// node and the port when a member is missing or of the wrong type.
#include <catch2/catch.hpp>

#include <functional>

#include <nlohmann/json.hpp>

#include "evalgraph/input.hpp"

using nlohmann::json;

namespace {
std::string refusal(const std::function<void()> &f) {
  try {
    f();
  } catch (const evalgraph::InputError &e) {
    return e.what();
  }
  return "";
}
std::vector<evalgraph::Doc> docs_of(const json &in, int max_depth = evalgraph::kDefaultNestingDepth) {
  return evalgraph::Record(in.dump(), "test.node", {"retrieved_docs"}).docs(0, "doc_", max_depth);
}
}  // namespace

TEST_CASE("input: strings decode exactly as a full parse decodes them", "[input]") {
  const std::vector<std::string> inputs = {
      R"({"answer":"plain text","x":1})",
      R"({ "answer" : "K\u00fcndigung \u00fcber das Portal, Stra\u00dfe", "x" : [1, {"y": null}] })",
      R"({"answer":"emoji \ud83d\ude00 and \u20ac and \u0041"})",
      R"({"answer":"quote \" backslash \\ slash \/ nl \n tab \t cr \r bs \b ff \f"})",
      R"({"answer":"mixed ä raw and \u00e4 escaped, then ASCII long enough for the eight-byte path ..."})",
      R"({"other":"\u00e9","answer":"\u0000nul"})",
      R"({"answer":"first","answer":"the last one counts"})",
      R"({"\u0061nswer":"a key with an escape"})"};
  for (const auto &in : inputs) {
    INFO(in);
    const evalgraph::Record r(in, "test.node", {"answer"});
    REQUIRE(r[0].is_string());
    CHECK(std::string(r[0].str()) == json::parse(in)["answer"].get<std::string>());
  }
}

TEST_CASE("input: what a full parse refuses is refused, in its words, naming the node", "[input]") {
  const std::vector<std::string> refused = {
      R"({"answer":"lone high \ud83d end"})", R"({"answer":"lone low \ude00"})", R"({"answer":"\ud83d\u0041"})",
      R"({"answer":"bad \x escape"})",       R"({"answer":"short \u12"})",      "{\"answer\":\"bad utf8 \xC3\"}",
      R"({"answer":"unterminated)",          R"({"answer":"a","x":1e999999})",   R"({"answer":"a"} trailing)"};
  for (const auto &in : refused) {
    INFO(in);
    CHECK_THAT(refusal([&] { evalgraph::Record(in, "test.node", {"answer"}); }),
               Catch::StartsWith("test.node: the input is ") && !Catch::Contains("json.exception"));
  }
  CHECK_THAT(refusal([] { evalgraph::Record(R"({"answer": tru})", "test.node", {"answer"}); }),
             Catch::Contains("the input is not valid JSON at byte"));
  CHECK_THAT(refusal([] { evalgraph::Record(R"({"answer": 1e999999})", "test.node", {"answer"}); }),
             Catch::Contains("the input is a number beyond the range of a double"));
  CHECK_THAT(refusal([] { evalgraph::Record("{\"answer\":" + std::string(5000, '[') + std::string(5000, ']') + "}", "n", {"answer"}); }),
             Catch::Contains("the input is nested deeper than 1024 levels"));
  CHECK(refusal([] { evalgraph::Record(R"(["an array"])", "test.node", {"answer"}); }) ==
        "test.node: the input is not an object but array");
  // Numbers up to a double's range are read; a tiny one is 0, as a full parse has it.
  CHECK(refusal([] { evalgraph::Record(R"({"answer":"a","x":1e300,"y":1e-999999})", "test.node", {"answer"}); }).empty());
}

TEST_CASE("input: a missing or mistyped port names the node and the port", "[input]") {
  const evalgraph::Record r(R"({"answer":42,"verification":"high","docs":{"id":"a"}})", "test.node",
                            {"answer", "verification", "docs", "user_text"});
  CHECK(refusal([&] { (void)r.required_text(0, "the assistant text"); }) ==
        "test.node: port 'answer' must be a string (the assistant text)");
  CHECK(refusal([&] { (void)r.required_text(3, "the user's text"); }) ==
        "test.node: port 'user_text' must be a string (the user's text)");
  CHECK(refusal([&] { (void)r.number(1, "a number in [0,1] or null"); }) ==
        "test.node: port 'verification' must be a number in [0,1] or null");
  CHECK(refusal([&] { (void)r.docs(2, "doc_"); }) ==
        "test.node: docs: expected an array of {\"id\",\"text\"} objects or of strings, got object");
  CHECK(r.text(0) == "42");  // a text port that holds another value: its JSON
  CHECK(r.text(3).empty());  // absent
  CHECK_FALSE(r.number(3, "a number").has_value());
  CHECK(r.json(3).is_null());
}

TEST_CASE("input: docs in every shape our datasets hold", "[input]") {
  auto d = docs_of({{"retrieved_docs", json::array({{{"id", "a"}, {"text", "x"}}, {{"content", "y"}}})}});
  REQUIRE(d.size() == 2);
  CHECK(d[0].id == "a");
  CHECK(d[1].id == "doc_2");
  CHECK(d[1].text == "y");
  CHECK(docs_of({{"retrieved_docs", json::array({"eins", "zwei"})}})[1].text == "zwei");
  CHECK(docs_of({{"retrieved_docs", "[{\"id\":\"k\",\"text\":\"t\"}]"}})[0].id == "k");  // CSV: JSON in a string
  CHECK(docs_of({{"retrieved_docs", " \t"}}).empty());
  CHECK(docs_of(json::object()).empty());
  CHECK(docs_of({{"retrieved_docs", nullptr}}).empty());
  // Non-string ids and texts are their JSON, as a full parse dumps them.
  d = docs_of({{"retrieved_docs", json::array({{{"doc_id", 7}, {"text", nullptr}, {"output", {{"b", 1.50}, {"a", true}}}}})}});
  CHECK(d.at(0).id == "7");
  CHECK(d.at(0).text == R"({"a":true,"b":1.5})");
}

TEST_CASE("input: docs of the wrong shape are refused with the port and the element", "[input]") {
  auto why = [](const json &in, int depth = evalgraph::kDefaultNestingDepth) { return refusal([&] { docs_of(in, depth); }); };
  CHECK(why({{"retrieved_docs", "just text"}}) ==
        "test.node: retrieved_docs: expected an array of {\"id\",\"text\"} objects or of strings (or a string holding "
        "such a JSON array), got a plain string");
  CHECK(why({{"retrieved_docs", 42}}) ==
        "test.node: retrieved_docs: expected an array of {\"id\",\"text\"} objects or of strings, got number");
  CHECK(why({{"retrieved_docs", json::array({{{"id", "a"}}})}}) ==
        "test.node: retrieved_docs[0]: object has no \"text\" (or content/page_content/output/result) member");
  CHECK(why({{"retrieved_docs", json::array({"a", 3})}}) ==
        "test.node: retrieved_docs[1]: expected an object or a string, got number");
  // Malformed JSON held in a CSV string: the string's problem first, even where an element is also wrong.
  CHECK_THAT(why({{"retrieved_docs", R"([{"id":"a","text":"x"}, tru])"}}),
             Catch::StartsWith("test.node: retrieved_docs: the string looks like a JSON array but is not valid JSON at byte") &&
                 Catch::EndsWith("(limits.nesting_depth = 64)"));
  CHECK_THAT(why({{"retrieved_docs", R"([{"id":"a"}, tru])"}}), Catch::Contains("looks like a JSON array but is not valid JSON"));
  CHECK_THAT(why({{"retrieved_docs", R"([{"id":"a"}])"}}), Catch::Contains("retrieved_docs[0]: object has no \"text\""));
  CHECK_THAT(why({{"retrieved_docs", R"([{"id":"a","text":"x"}])"}}, 1), Catch::Contains("nested deeper than 1 levels"));
  CHECK(why({{"retrieved_docs", R"([{"id":"a","text":"x"}])"}}, 2).empty());
}

TEST_CASE("input: a sequence node's group is an array of records", "[input]") {
  bool group = false;
  auto r = evalgraph::sequence_records(R"([{"a":1}, {"a":[2]}])", "test.node", &group);
  CHECK(group);
  REQUIRE(r.size() == 2);
  CHECK(r[1] == R"({"a":[2]})");
  r = evalgraph::sequence_records(R"({"a":1})", "test.node", &group);
  CHECK_FALSE(group);
  CHECK(r.size() == 1);
  CHECK_THAT(refusal([] {
               bool g = false;
               evalgraph::sequence_records("[{}, ]", "test.node", &g);
             }),
             Catch::StartsWith("test.node: the input is not valid JSON"));
  CHECK(evalgraph::for_each_record(R"([{"a":1},{"a":2}])", "test.node", [](std::string_view t) { return std::string(t); }) ==
        R"([{"a":1},{"a":2}])");
}
