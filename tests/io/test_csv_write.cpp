#include <catch2/catch.hpp>
#include <string>
#include <utility>
#include <vector>

#include <evalgraph/csv.hpp>

// The SDK's CSV helpers (sink.csv writes with them).
using evalgraph::csv::flatten;
constexpr auto csv_escape = [](std::string_view f, char sep = ',') { return evalgraph::csv::escape(f, sep); };
using nlohmann::json;
using Pairs = std::vector<std::pair<std::string, std::string>>;

TEST_CASE("csv_escape quotes only what needs it", "[io][csvwrite]") {
  CHECK(csv_escape("plain") == "plain");
  CHECK(csv_escape("") == "");
  CHECK(csv_escape("a,b") == "\"a,b\"");
  CHECK(csv_escape("a;b") == "a;b");
  CHECK(csv_escape("a;b", ';') == "\"a;b\"");
  CHECK(csv_escape("tab\there", '\t') == "\"tab\there\"");
  CHECK(csv_escape("say \"hi\"") == "\"say \"\"hi\"\"\"");
  CHECK(csv_escape("two\nlines") == "\"two\nlines\"");
  CHECK(csv_escape("cr\rlf") == "\"cr\rlf\"");
}

TEST_CASE("flatten: scalars, node outputs one level deep, deeper values as JSON", "[io][csvwrite]") {
  json record = {{"id", 7},
                 {"question", "What is \"x\"?"},
                 {"ok", true},
                 {"missing", nullptr},
                 {"score", 0.25},
                 {"turns", {"hi", "there"}},
                 {"judge", {{"score", 4}, {"reason", "fine"}, {"detail", {{"a", 1}}}, {"list", {1, 2}}, {"none", nullptr}}}};
  Pairs out{{"stale", "x"}};
  flatten(record, out);
  Pairs expected{{"id", "7"},
                 {"judge.detail", "{\"a\":1}"},
                 {"judge.list", "[1,2]"},
                 {"judge.none", ""},
                 {"judge.reason", "fine"},
                 {"judge.score", "4"},
                 {"missing", ""},
                 {"ok", "true"},
                 {"question", "What is \"x\"?"},
                 {"score", "0.25"},
                 {"turns", "[\"hi\",\"there\"]"}};
  CHECK(out == expected);
}

TEST_CASE("flatten: ordered_json keeps the record's order, non-objects give one column", "[io][csvwrite]") {
  auto record = nlohmann::ordered_json::parse(R"({"z":1,"node":{"b":"x","a":"y"},"a":"s"})");
  Pairs out;
  flatten(record, out);
  CHECK(out == Pairs{{"z", "1"}, {"node.b", "x"}, {"node.a", "y"}, {"a", "s"}});
  flatten(json("text"), out);
  CHECK(out == Pairs{{"value", "text"}});
  flatten(json::object(), out);
  CHECK(out.empty());
}
