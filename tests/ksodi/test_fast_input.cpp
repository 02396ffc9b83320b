// The KSODI operators' fast input reader must read exactly what a full JSON parse reads, or step aside (return
// false) so the plugin takes the full parse: escapes of every kind, \u with surrogate pairs (Python's
// json.dumps writes all non-ASCII text so), whitespace as datasets write it, and refusals where nlohmann refuses.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "ksodi/fast_input.hpp"

using nlohmann::json;

TEST_CASE("fast input: strings decode exactly as a full parse decodes them", "[fast_input]") {
  const std::vector<std::string> inputs = {
      R"({"answer":"plain text","x":1})",
      R"({ "answer" : "K\u00fcndigung \u00fcber das Portal, Stra\u00dfe", "x" : [1, {"y": null}] })",
      R"({"answer":"emoji \ud83d\ude00 and \u20ac and \u0041"})",
      R"({"answer":"quote \" backslash \\ slash \/ nl \n tab \t cr \r bs \b ff \f"})",
      R"({"answer":"mixed ä raw and \u00e4 escaped, then ASCII long enough for the eight-byte path ..."})",
      R"({"other":"\u00e9","answer":"\u0000nul"})"};
  for (const auto &in : inputs) {
    INFO(in);
    std::vector<ksodi::fast::Value> v;
    REQUIRE(ksodi::fast::read_members(in, {"answer"}, v));
    REQUIRE(v[0].is_string());
    CHECK(std::string(v[0].str()) == json::parse(in)["answer"].get<std::string>());
  }
}

TEST_CASE("fast input: what it cannot read exactly is left to the full parse", "[fast_input]") {
  const std::vector<std::string> refused = {
      R"({"answer":"lone high \ud83d end"})", R"({"answer":"lone low \ude00"})", R"({"answer":"\ud83d\u0041"})",
      R"({"answer":"bad \x escape"})",       R"({"answer":"short \u12"})",      R"({"answer":"a","answer":"b"})",
      "{\"answer\":\"bad utf8 \xC3\"}",      R"({"answer":"unterminated)"};
  for (const auto &in : refused) {
    INFO(in);
    std::vector<ksodi::fast::Value> v;
    CHECK_FALSE(ksodi::fast::read_members(in, {"answer"}, v));
  }
}
