#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "io/dataset.h"
#include "test_util.h"

using evalgraph::io::DataError;
using evalgraph::io::open_dataset;
using nlohmann::json;

namespace {

using iotest::Read;

Read read_jsonl(const std::string &content, const std::string &name = "data.jsonl",
                const evalgraph::io::RecordLimits &limits = {}) {
  iotest::TempDir dir;
  return iotest::read_all(iotest::write_file(dir / name, content), json::object(), "", limits);
}

DataError jsonl_error(const std::string &content, const std::string &name = "data.jsonl") {
  return iotest::data_error([&] { read_jsonl(content, name); });
}

}  // namespace

TEST_CASE("jsonl: one object per line, blank lines, CRLF and BOM", "[io][jsonl]") {
  auto r = read_jsonl("\xEF\xBB\xBF{\"q\":\"a\",\"id\":1}\r\n\n   \n{\"id\":2,\"q\":\"b\",\"turns\":[1,2]}\n{\"id\":3}");
  REQUIRE(r.records.size() == 3);
  CHECK(r.records[0] == json{{"q", "a"}, {"id", 1}});
  CHECK(r.records[1]["turns"] == json::array({1, 2}));
  CHECK(r.records[2] == json{{"id", 3}});
  CHECK(r.lines == std::vector<std::size_t>{1, 4, 5});
  // The first record's keys in file order, not sorted.
  CHECK(r.columns == std::vector<std::string>{"q", "id"});
}

TEST_CASE("jsonl: .ndjson and .json extensions read as JSON lines", "[io][jsonl]") {
  CHECK(read_jsonl("{\"a\":1}\n", "d.ndjson").records.size() == 1);
  CHECK(read_jsonl("{\"a\":1}\n{\"a\":2}\n", "d.json").records.size() == 2);
}

TEST_CASE("jsonl: an empty file has no records", "[io][jsonl]") {
  auto r = read_jsonl("");
  CHECK(r.records.empty());
  CHECK(r.columns.empty());
  CHECK(read_jsonl("\n\n").records.empty());
}

TEST_CASE("jsonl: a parse error names the line and shows the text", "[io][jsonl]") {
  auto e = jsonl_error("{\"a\":1}\n\n{\"a\":2}\n{\"a\": oops}\n{\"a\":4}\n");
  CHECK(e.line() == 4);
  CHECK(e.column() == 7);
  CHECK_THAT(e.what(), Catch::Contains("data.jsonl:4:7: invalid JSON: expected a value") &&
                           Catch::Contains("at: oops}") && Catch::Contains("{\"a\": oops}") && Catch::Contains(" — "));
  CHECK_THAT(e.what(), !Catch::Contains("json.exception"));
}

TEST_CASE("jsonl: a line that is not an object is an error", "[io][jsonl]") {
  auto e = jsonl_error("{\"a\":1}\n[1,2]\n");
  CHECK(e.line() == 2);
  CHECK_THAT(e.what(), Catch::Contains("expected a JSON object, got an array") && Catch::Contains("[1,2]"));
  CHECK(jsonl_error("{\"a\":1}\n\"text\"\n").line() == 2);
  // A long line is cut short in the message.
  auto long_line = jsonl_error("{\"a\":\"" + std::string(500, 'y') + "\"");
  CHECK(std::string(long_line.what()).size() < 400);
}

TEST_CASE("jsonl: a pretty-printed JSON array gets a conversion hint", "[io][jsonl]") {
  auto e = jsonl_error("[\n  {\"a\": 1},\n  {\"a\": 2}\n]\n", "data.json");
  CHECK(e.line() == 1);
  CHECK_THAT(e.what(), Catch::Contains("one JSON array") && Catch::Contains("jq -c"));
}

TEST_CASE("jsonl: lines longer than the read buffer and many lines", "[io][jsonl]") {
  const std::string big(3 * 1024 * 1024 + 5, 'z');
  std::string content = "{\"text\":\"" + big + "\"}\n";
  const int n = 100000;
  for (int i = 0; i < n; ++i) content += "{\"i\":" + std::to_string(i) + ",\"s\":\"row " + std::to_string(i) + "\"}\n";
  evalgraph::io::RecordLimits roomy;  // the default limits would stop the 3 MiB field (tested in test_limits.cpp)
  roomy.field_bytes = roomy.record_bytes = 64u << 20;
  auto r = read_jsonl(content, "data.jsonl", roomy);
  REQUIRE(r.records.size() == n + 1);
  CHECK(r.records[0]["text"].get_ref<const std::string &>() == big);
  for (int i = 0; i < n; ++i) {
    REQUIRE(r.records[static_cast<std::size_t>(i) + 1]["i"] == i);
    REQUIRE(r.records[static_cast<std::size_t>(i) + 1]["s"] == "row " + std::to_string(i));
  }
  CHECK(r.lines.back() == static_cast<std::size_t>(n + 1));
}

TEST_CASE("jsonl: options are rejected", "[io][jsonl]") {
  iotest::TempDir dir;
  auto file = iotest::write_file(dir / "d.jsonl", "{}\n");
  CHECK_THROWS_WITH(open_dataset(file, "jsonl", {{"separator", ","}}), Catch::Contains("unknown JSONL option"));
}

TEST_CASE("jsonl: next_text hands over each line as written, and refuses what next() refuses", "[io][jsonl]") {
  iotest::TempDir dir;
  auto path = iotest::write_file(dir / "data.jsonl",
                                 "\xEF\xBB\xBF{\"b\": 1, \"a\" : [1, 2]}\r\n\n  {\"x\":\"\\u00e9\"}\n{\"c\":1,\r\"d\":2}\n"
                                 "{\"bad\": tru}\n");
  auto reader = open_dataset(path, "", json::object());
  std::string text;
  REQUIRE(reader->next_text(text));
  CHECK(text == "{\"b\": 1, \"a\" : [1, 2]}");  // the line itself: key order and spacing kept, CRLF and BOM not
  CHECK(reader->columns() == std::vector<std::string>{"b", "a"});
  REQUIRE(reader->next_text(text));
  CHECK(text == "  {\"x\":\"\\u00e9\"}");
  CHECK(reader->line() == 3);
  REQUIRE(reader->next_text(text));
  CHECK(text == "{\"c\":1,\"d\":2}");  // a CR between tokens is not passed on: it is dropped
  try {
    reader->next_text(text);
    FAIL("no DataError was thrown");
  } catch (const DataError &e) {
    CHECK(e.line() == 5);
    CHECK_THAT(e.problem(), Catch::Contains("invalid JSON"));
  }
}

TEST_CASE("csv: next_text writes each record as a JSON object in column order", "[io][csv]") {
  iotest::TempDir dir;
  auto reader = open_dataset(iotest::write_file(dir / "d.csv", "z,a\n\"x, y\",\"say \"\"hi\"\"\"\n"), "", json::object());
  std::string text;
  REQUIRE(reader->next_text(text));
  CHECK(text == R"({"z":"x, y","a":"say \"hi\""})");
  CHECK_FALSE(reader->next_text(text));
}
