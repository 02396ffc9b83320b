// The executor's raw record path: the JSON checker must accept exactly what nlohmann::json accepts (records
// pass through it unparsed), object splitting and string escaping must round-trip, and RawRecord must keep
// its fields in order, replace repeated keys and survive copies.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>
#include <random>

#include "evalgraph/json_writer.hpp"
#include "io/raw_record.h"
#include "util/json_build.h"
#include "util/raw_json.h"

using namespace evalgraph;
using nlohmann::json;

namespace {
bool nlohmann_accepts(const std::string &s) { return !json::parse(s, nullptr, false).is_discarded(); }

// Equal values of equal types all the way down (json's == calls 1 and 1u and 1.0 equal).
bool same(const json &a, const json &b) {
  if (a.type() != b.type() || a != b) return false;
  if (a.is_array())
    for (std::size_t i = 0; i < a.size(); ++i)
      if (!same(a[i], b[i])) return false;
  if (a.is_object())
    for (auto it = a.begin(); it != a.end(); ++it)
      if (!same(it.value(), b.at(it.key()))) return false;
  return true;
}

// rawjson::parse must give what json::parse gives: the same value with the same types, or discarded for both.
void check_parse(const std::string &s) {
  const json ours = rawjson::parse(s), theirs = json::parse(s, nullptr, false);
  INFO("input: " << s);
  REQUIRE(ours.is_discarded() == theirs.is_discarded());
  if (!ours.is_discarded()) {
    REQUIRE(same(ours, theirs));
    REQUIRE(evalgraph::dump_json(theirs) == theirs.dump());  // the SDK's dump of chat requests
  }
}
}  // namespace

TEST_CASE("the raw JSON checker and parser agree with nlohmann on hand-picked edge cases", "[raw_json]") {
  const std::vector<std::string> cases = {
      "{}", "[]", " {} ", "{\"a\":1}", "{\"a\":1,}", "{,}", "[1,]", "[1 2]", "{\"a\" 1}", "{\"a\":}", "{a:1}",
      "\"x\"", "1", "-0", "-", "01", "1.", ".5", "1.5e", "1.5e+3", "1E-2", "-12.5E+07", "+1", "0x10", "1e999",
      "true", "tru", "null", "nul", "false", "True", "NaN", "Infinity",
      "\"a\\u00e9b\"", "\"\\u12\"", "\"\\ud83d\\ude00\"", "\"\\ud83d\"", "\"\\ude00\"", "\"\\ud83dx\"",
      "\"\\ud83d\\u0041\"", "\"\\q\"", "\"\\/\"", "\"tab\there\"", "\"nl\nhere\"", "\"\x01\"", "\"\x7f\"",
      "\"ä ß 😀\"", "\"\xC3\"", "\"\xC0\xAF\"", "\"\xE0\x80\xAF\"", "\"\xED\xA0\x80\"", "\"\xF4\x90\x80\x80\"",
      "\"\xF0\x9F\x98\"", "\"\xFF\"", "\"\x80\"", "{\"a\":[1,{\"b\":[true,false,null]}],\"c\":\"d\"}",
      "{\"a\":1}{", "{\"a\":1} x", "", "   ", "\"unterminated", "[", "{\"a\":[}]}", "\"\\", "{\"\\u0000\":1}",
      "{\"k\":\"v\",\"k\":\"w\"}", "[\"\xE2\x82\xAC\"]", "\t\r\n{\"a\"\t:\r\n1}\n"};
  for (const auto &c : cases) {
    INFO("input: " << c);
    CHECK(rawjson::valid(c) == nlohmann_accepts(c));
    check_parse(c);
  }
  // numbers of every kind, repeated keys, escapes of every kind, deep nesting
  for (const auto &c : std::vector<std::string>{"[0,-0,1,-1,18446744073709551615,18446744073709551616,-9223372036854775808,-9223372036854775809,1.0,1e2,-1.5E-3,0.1]",
                              "{\"b\":1,\"a\":{\"x\":[]},\"b\":[2,{\"b\":3,\"b\":{}}]}",
                              "\"\\\" \\\\ \\/ \\b \\f \\n \\r \\t \\u0041\\u00e9\\u20ac\\ud83d\\ude00 \\u0000 end\"",
                              "{\"messages\":[{\"role\":\"system\",\"content\":\"Du pr\u00fcfst \\\"x\\\"\\n\"}],\"temperature\":0,\"max_tokens\":200}",
                              std::string(511, '[') + std::string(511, ']')})
    check_parse(c);
  // dump_json: control characters, every escape, numbers of every type, and a string that is not UTF-8 throws
  // as dump() throws
  json odd = {{"c", std::string("a\x01\x1f\x7f\"\\/\b\f\n\r\t\xc3\xa4\xf0\x9f\x98\x80")}, {"n", {1, -2, 3.5, 1e300, 18446744073709551615ULL}},
              {"e", json::object()}, {"a", json::array()}, {"\x02k\"", nullptr}, {"b", false}};
  CHECK(evalgraph::dump_json(odd) == odd.dump());
  CHECK(evalgraph::dump_json(json("x")) == "\"x\"");
  CHECK_THROWS_AS(evalgraph::dump_json(json{{"m", std::string("ok \xff")}}), json::type_error);
  // deeper than rawjson::kMaxDepth: refused as valid() refuses it (nlohmann would take it)
  CHECK(rawjson::parse(std::string(513, '[') + std::string(513, ']')).is_discarded());
}

TEST_CASE("the raw JSON checker and parser agree with nlohmann on 20,000 mutated documents", "[raw_json]") {
  const std::vector<std::string> seeds = {
      R"({"id":"u1","text":"Kündigung z. B. per Brief","docs":[{"id":"d1","text":"ä\u00df \"q\""}],"n":-1.5e3,"ok":true,"x":null})",
      R"([1,2.5,{"a":[]},"\ud83d\ude00",false])",
      // long runs, so mutations land inside the checker's eight-bytes-at-a-time path too
      R"({"long":"abcdefghijklmnopqrstuvwxyz0123456789 \"quoted\" ABCDEFGHIJKLMNOP \\ tail of the text ok",)"
      R"("mixed":"ASCII first, then Größe und Maß, then ASCII again for a while"})",
      "{\"emoji\":\"😀\",\"euro\":\"€\",\"nested\":{\"deep\":[[[{\"k\":0}]]]}}"};
  std::mt19937 rng(7);
  const std::string alphabet = "{}[]\",:\\/ 0123456789.eE+-tfnaul\x01\x7f\xC3\xA4\xED\xA0\xF0\x9F\xFF";
  int accepted = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string s = seeds[static_cast<std::size_t>(i) % seeds.size()];
    int edits = 1 + static_cast<int>(rng() % 3);
    for (int k = 0; k < edits; ++k) {
      std::size_t at = rng() % s.size();
      switch (rng() % 3) {
        case 0: s[at] = alphabet[rng() % alphabet.size()]; break;
        case 1: s.insert(at, 1, alphabet[rng() % alphabet.size()]); break;
        default: s.erase(at, 1);
      }
    }
    bool ours = rawjson::valid(s);
    accepted += ours ? 1 : 0;
    INFO("input: " << s);
    REQUIRE(ours == nlohmann_accepts(s));
    check_parse(s);
  }
  CHECK(accepted > 100);  // the mutations must leave some valid documents, or the test shows nothing
}

TEST_CASE("object members are split with unescaped keys and exact value spans", "[raw_json]") {
  std::string text = R"( { "a" : 1 , "b\"q\u00e9" :{"x":[1, 2]}, "c":"s" } )";
  std::vector<rawjson::Member> m;
  REQUIRE(rawjson::object_members(text, m));
  REQUIRE(m.size() == 3);
  CHECK(m[0].key == "a");
  CHECK(text.substr(m[0].value.off, m[0].value.len) == "1");
  CHECK(m[1].key == "b\"qé");
  CHECK(text.substr(m[1].value.off, m[1].value.len) == R"({"x":[1, 2]})");
  CHECK(text.substr(m[2].value.off, m[2].value.len) == "\"s\"");
  CHECK_FALSE(rawjson::object_members("[1]", m));
  CHECK_FALSE(rawjson::object_members("{\"a\":1", m));

  std::vector<rawjson::Span> items;
  std::string arr = R"([{"a":1}, 2 ,"x"])";
  REQUIRE(rawjson::array_elements(arr, items));
  REQUIRE(items.size() == 3);
  CHECK(arr.substr(items[0].off, items[0].len) == R"({"a":1})");
  CHECK(arr.substr(items[1].off, items[1].len) == "2");
}

TEST_CASE("strings are escaped as nlohmann escapes them, and bytes that are not UTF-8 become U+FFFD", "[raw_json]") {
  for (std::string s : {std::string("plain"), std::string("quote \" backslash \\ slash /"),
                        std::string("ctl \b\f\n\r\t \x01\x1f end"), std::string("ä ß € 😀")}) {
    std::string out;
    rawjson::append_string(out, s);
    CHECK(out == json(s).dump());
    CHECK(json::parse(out).get<std::string>() == s);
  }
  std::string out;
  rawjson::append_string(out, "a\xFF" "b\xC3");
  CHECK(out == "\"a\xEF\xBF\xBD" "b\xEF\xBF\xBD\"");
}

TEST_CASE("a raw record keeps field order, replaces repeated keys and stays valid when copied", "[raw_json]") {
  RawRecord r;
  REQUIRE(r.assign(R"({"b": [1, 2], "a":"x", "b":3})"));
  CHECK(r.get("b").value() == "3");  // the last of a repeated key wins, as in a JSON parser
  CHECK(r.get("a").value() == "\"x\"");
  CHECK_FALSE(r.get("zz").has_value());
  r.set("node", R"({"score":0.5})");
  r.set("a", "null");
  RawRecord copy = r;  // offsets, not pointers: the copy reads its own text
  r.set("node", "{}");
  std::string out;
  copy.write(out);
  CHECK(out == R"({"b":3,"a":null,"node":{"score":0.5}})");
  CHECK(json::parse(out) == json::parse(R"({"a":null,"b":3,"node":{"score":0.5}})"));
  CHECK_FALSE(r.assign("[1]"));
  CHECK_FALSE(r.get("b").has_value());

  CHECK(member_of(R"({"x":{"y":1},"z":2})", "z").value() == "2");
  CHECK(member_of(R"({"x":{"y":1}})", "x").value() == R"({"y":1})");
  CHECK_FALSE(member_of("[1]", "x").has_value());
  CHECK_FALSE(member_of(R"({"x":1})", "y").has_value());
}
