// Hostile records (issue #15): nesting, sizes, item counts, numbers out of range, repeated keys, bad bytes.
// A record over a limit is handed out with a problem and fails alone; text that is not JSON refuses the data
// set; either way the message says file:line[:column], what is wrong and what to do, in our words.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "io/dataset.h"
#include "test_util.h"

using evalgraph::io::DataError;
using evalgraph::io::open_dataset;
using evalgraph::io::RecordLimits;
using nlohmann::json;

namespace {

struct Got {
  std::string text;
  std::string problem;
  std::size_t line = 0;
};

// Every record's text and problem, as the executor reads them.
std::vector<Got> read_texts(const std::string &name, const std::string &content, const RecordLimits &limits = {},
                            const json &options = json::object()) {
  iotest::TempDir dir;
  auto reader = open_dataset(iotest::write_file(dir / name, content), "", options, limits);
  std::vector<Got> out;
  std::string text;
  std::vector<evalgraph::rawjson::Member> members;
  while (reader->next_text(text, &members)) {
    out.push_back({text, reader->record_problem(), reader->line()});
    // Whatever is handed out parses, and its members are what the reader said.
    json j = json::parse(text);
    REQUIRE(j.is_object());
    REQUIRE(members.size() == j.size());
  }
  return out;
}

DataError data_error(const std::string &name, const std::string &content, const json &options = json::object()) {
  return iotest::data_error([&] { read_texts(name, content, {}, options); });
}

std::string nested(std::size_t depth) { return std::string(depth, '[') + std::string(depth, ']'); }

}  // namespace

TEST_CASE("limits: a JSONL record nested 100,000 deep fails alone with file:line:column and the limit", "[io][limits]") {
  const std::string deep = "{\"id\":\"x\",\"assistant_text\":\"Hi.\",\"retrieved_docs\":" + nested(100000) + "}\n";
  auto got = read_texts("deep.jsonl", "{\"id\":\"a\"}\n" + deep + "{\"id\":\"b\"}\n");
  REQUIRE(got.size() == 3);
  CHECK(got[0].problem.empty());
  CHECK(got[2].problem.empty());
  CHECK(got[2].line == 3);
  CHECK_THAT(got[1].problem, Catch::Contains("deep.jsonl:2:114: field 'retrieved_docs' nests objects and arrays deeper "
                                             "than the limit limits.nesting_depth = 64") &&
                                 Catch::Contains("raise limits.nesting_depth"));
  CHECK(json::parse(got[1].text) == json{{"id", "x"}, {"assistant_text", "Hi."}, {"retrieved_docs", nullptr}});

  // A raised limit lets a deep (but not that deep) record through; next() parses it.
  RecordLimits deeper;
  deeper.nesting_depth = 300;
  auto ok = read_texts("d.jsonl", "{\"v\":" + nested(250) + "}\n", deeper);
  CHECK(ok[0].problem.empty());
}

TEST_CASE("limits: next() refuses a record over a limit with the same message", "[io][limits]") {
  iotest::TempDir dir;
  auto reader = open_dataset(iotest::write_file(dir / "d.jsonl", "{\"a\":" + nested(70) + "}\n"), "", json::object());
  json rec;
  try {
    reader->next(rec);
    FAIL("no DataError");
  } catch (const DataError &e) {
    CHECK(e.line() == 1);
    CHECK(e.column() == 69);
    CHECK_THAT(e.what(), Catch::Contains("d.jsonl:1:69: field 'a' nests objects and arrays deeper than the limit"));
  }
}

TEST_CASE("limits: a number beyond a double fails its record alone and names the field", "[io][limits]") {
  auto got = read_texts("n.jsonl", "{\"id\":1,\"x\":1e999999,\"y\":2}\n{\"id\":2,\"x\":-1E400}\n{\"id\":3,\"x\":1e-999999}\n");
  REQUIRE(got.size() == 3);
  CHECK_THAT(got[0].problem, Catch::Contains("n.jsonl:1:13: the number 1e999999 is beyond the range of a double") &&
                                 Catch::Contains("(in field 'x')") && Catch::Contains("write it as a string"));
  CHECK(json::parse(got[0].text) == json{{"id", 1}, {"x", nullptr}, {"y", 2}});
  CHECK_THAT(got[1].problem, Catch::Contains("-1E400"));
  CHECK(got[2].problem.empty());  // underflow is 0, as every JSON reader reads it
  CHECK_THAT(got[0].problem, !Catch::Contains("json.exception"));
}

TEST_CASE("limits: a field over field_bytes, a record over record_bytes", "[io][limits]") {
  RecordLimits small;
  small.field_bytes = 100;
  small.record_bytes = 1000;
  const std::string big(150, 'x');
  auto got = read_texts("f.jsonl",
                        "{\"id\":1,\"answer\":\"" + big + "\"}\n"                               // field over
                            "{\"id\":2,\"a\":\"" + std::string(90, 'a') + "\"}\n"               // fine
                            "{\"id\":3,\"t\":\"" + std::string(5000, 'z') + "\"}\n"             // record over
                            "{\"id\":4}\n",
                        small);
  REQUIRE(got.size() == 4);
  CHECK_THAT(got[0].problem, Catch::Contains("f.jsonl:1:18: field 'answer' is 152 bytes, over the limit "
                                             "limits.field_bytes = 100") &&
                                 Catch::Contains("raise limits.field_bytes"));
  CHECK(json::parse(got[0].text) == json{{"id", 1}, {"answer", nullptr}});
  CHECK(got[1].problem.empty());
  CHECK_THAT(got[2].problem, Catch::Contains("f.jsonl:3: the record is 5,015 bytes, over the limit limits.record_bytes "
                                             "= 1,000; it was not read"));
  CHECK(got[2].text == "{}");
  CHECK(got[3].problem.empty());
  CHECK(got[3].line == 4);

  // The CSV reader keeps at most the limits of a cell and of a row.
  auto csv = read_texts("f.csv", "id,answer\n1," + big + "\n2,short\n3,\"" + std::string(3000, 'q') + "\"\n", small);
  REQUIRE(csv.size() == 3);
  CHECK_THAT(csv[0].problem, Catch::Contains("f.csv:2: field 'answer' is 150 bytes, over the limit limits.field_bytes"));
  CHECK(json::parse(csv[0].text) == json{{"id", "1"}, {"answer", nullptr}});
  CHECK(csv[1].problem.empty());
  CHECK_THAT(csv[2].problem, Catch::Contains("f.csv:4: the record is 3,001 bytes, over the limit limits.record_bytes"));
}

TEST_CASE("limits: a 64 MiB JSONL line is passed over without being held", "[io][limits]") {
  // The reader's buffer stays near record_bytes: the line goes by in 1 MiB chunks.
  std::string content = "{\"id\":1}\n{\"id\":2,\"answer\":\"";
  content.append(std::size_t{64} << 20, 'a');
  content += "\"}\n{\"id\":3}\n";
  auto got = read_texts("long.jsonl", content);
  REQUIRE(got.size() == 3);
  CHECK_THAT(got[1].problem, Catch::Contains("long.jsonl:2: the record is 67,108,88") &&
                                 Catch::Contains("limits.record_bytes = 8,388,608 (8 MiB)"));
  CHECK(got[2].line == 3);
  // A shard passing over it does not hold it either.
  iotest::TempDir dir;
  auto reader = open_dataset(iotest::write_file(dir / "l.jsonl", content), "", json::object());
  std::string text;
  REQUIRE(reader->next_text(text));
  REQUIRE(reader->skip());
  REQUIRE(reader->next_text(text));
  CHECK(text == "{\"id\":3}");
  CHECK(reader->line() == 3);
}

TEST_CASE("limits: an array over array_items, at any depth", "[io][limits]") {
  RecordLimits l;
  l.array_items = 5;
  auto got = read_texts("a.jsonl", "{\"docs\":[1,2,3,4,5]}\n{\"docs\":[1,2,3,4,5,6]}\n{\"m\":{\"x\":[[1,2,3,4,5,6,7]]}}\n", l);
  CHECK(got[0].problem.empty());
  CHECK_THAT(got[1].problem, Catch::Contains("a.jsonl:2:") && Catch::Contains("field 'docs' holds an array of more than "
                                                                               "the limit limits.array_items = 5 items"));
  CHECK_THAT(got[2].problem, Catch::Contains("field 'm' holds an array of more than"));
  // The default (10,000 items)
  std::string many = "{\"docs\":[";
  for (int i = 0; i < 10001; ++i) many += (i ? ",0" : "0");
  many += "]}\n";
  CHECK_THAT(read_texts("b.jsonl", many)[0].problem, Catch::Contains("limits.array_items = 10,000 items"));
}

TEST_CASE("limits: a repeated key fails the record alone, at the top and inside values", "[io][limits]") {
  auto got = read_texts("k.jsonl",
                        "{\"id\":1,\"answer\":\"a\",\"answer\":\"b\"}\n"
                        "{\"id\":2,\"docs\":[{\"text\":\"x\",\"t\\u0065xt\":\"y\"}]}\n"
                        "{\"id\":3,\"docs\":[{\"text\":\"x\"},{\"text\":\"y\"}]}\n");
  REQUIRE(got.size() == 3);
  CHECK_THAT(got[0].problem, Catch::Contains("k.jsonl:1:22: field 'answer' appears twice in the record") &&
                                 Catch::Contains("keep one of them"));
  CHECK(json::parse(got[0].text) == json{{"id", 1}, {"answer", "a"}});  // the first stays, the record fails
  CHECK_THAT(got[1].problem, Catch::Contains("the key \"text\" appears twice in one object (in field 'docs')"));
  CHECK(got[2].problem.empty());  // the same key in two objects is fine
  // Many keys in one object (the checker switches to a hash set)
  std::string wide = "{";
  for (int i = 0; i < 100; ++i) wide += "\"k" + std::to_string(i) + "\":" + std::to_string(i) + ",";
  CHECK(read_texts("w.jsonl", wide + "\"k99\":0}\n")[0].problem.find("'k99' appears twice") != std::string::npos);
  CHECK(read_texts("w.jsonl", wide + "\"k100\":0}\n")[0].problem.empty());
}

TEST_CASE("limits: text that is not JSON refuses the data set, in our words with line and column", "[io][limits]") {
  auto bad_utf8 = data_error("u.jsonl", "{\"a\":\"ok\"}\n{\"a\":\"Gr\xF6\xDF" "e\"}\n");
  CHECK(bad_utf8.line() == 2);
  CHECK(bad_utf8.column() == 9);
  CHECK_THAT(bad_utf8.what(), Catch::Contains("u.jsonl:2:9: invalid JSON: bytes that are not UTF-8 (byte 0xF6)") &&
                                  Catch::Contains("iconv -f WINDOWS-1252 -t UTF-8"));
  auto nul = data_error("z.jsonl", std::string("{\"a\":\"x\0y\"}\n", 12));
  CHECK_THAT(nul.what(), Catch::Contains("z.jsonl:1:8: invalid JSON: a NUL byte inside a string") &&
                             Catch::Contains("UTF-16"));
  auto open = data_error("o.jsonl", "{\"a\":[1,2\n");
  CHECK_THAT(open.what(), Catch::Contains("o.jsonl:1:10: invalid JSON: the text ends inside an array"));
  auto single = data_error("s.jsonl", "{'a': 1}\n");
  CHECK_THAT(single.what(), Catch::Contains("expected a key in double quotes, found '''"));
  for (const auto *e : {&bad_utf8, &nul, &open, &single}) CHECK_THAT(e->what(), !Catch::Contains("json.exception"));
  // An escaped NUL is a character like any other.
  CHECK(read_texts("e.jsonl", "{\"a\":\"x\\u0000y\"}\n")[0].problem.empty());
}

TEST_CASE("limits: a CSV cell of JSON nested 100,000 deep fails its record alone", "[io][limits][csv]") {
  const json opts = {{"json_columns", {"retrieved_docs"}}};
  auto got = read_texts("c.csv", "id,retrieved_docs\n1,\"[\"\"a\"\"]\"\n2," + nested(100000) + "\n3,[]\n", {}, opts);
  REQUIRE(got.size() == 3);
  CHECK(got[0].problem.empty());
  CHECK(json::parse(got[0].text)["retrieved_docs"] == json::array({"a"}));
  CHECK_THAT(got[1].problem, Catch::Contains("c.csv:3: column 'retrieved_docs' nests objects and arrays deeper than the "
                                             "limit limits.nesting_depth = 64"));
  CHECK(json::parse(got[1].text)["retrieved_docs"].is_null());
  CHECK(got[2].problem.empty());
  // A cell that is not JSON refuses the data set, with the character in the cell.
  auto e = data_error("c.csv", "id,retrieved_docs\n1,[1 2]\n", opts);
  CHECK_THAT(e.what(), Catch::Contains("c.csv:2: column 'retrieved_docs' is listed in json_columns but its text is not "
                                       "valid JSON: expected ',' or ']' after an array item, found '2' (character 4"));
  CHECK_THAT(read_texts("n.csv", "id,v\n1,1e999999\n", {}, {{"json_columns", {"v"}}})[0].problem,
             Catch::Contains("column 'v': the number 1e999999 is beyond the range of a double"));
}

TEST_CASE("limits: a CSV row of a million separators costs no million strings", "[io][limits][csv]") {
  std::string row(1000000, ',');
  auto e = data_error("r.csv", "a,b\n" + row + "\n");
  CHECK_THAT(e.what(), Catch::Contains("r.csv:2: the row has 1000001 fields but the header has 2 columns"));
}

TEST_CASE("limits: a CSV cell or header that is not UTF-8 refuses the data set with an iconv hint", "[io][limits][csv]") {
  auto cell = data_error("w.csv", "id,text\n1,ok\n2,Gr\xF6\xDF" "e\n");
  CHECK(cell.line() == 3);
  CHECK_THAT(cell.what(), Catch::Contains("w.csv:3: column 'text' holds bytes that are not UTF-8 (byte 0xF6 at "
                                          "character 3 of the cell)") &&
                              Catch::Contains("iconv -f WINDOWS-1252 -t UTF-8"));
  auto header = data_error("h.csv", "id,Gr\xF6\xDF" "e\n1,2\n");
  CHECK_THAT(header.what(), Catch::Contains("h.csv:1: the header holds bytes that are not UTF-8 (byte 0xF6 in column "
                                            "name 'Gr\xEF\xBF\xBD\xEF\xBF\xBD" "e')"));
  // A NUL byte in a CSV cell is a character like any other (JSON writes it \u0000).
  auto nul = read_texts("n.csv", std::string("id,text\n1,a\0b\n", 14));
  CHECK(json::parse(nul[0].text)["text"] == std::string("a\0b", 3));
}

TEST_CASE("limits: an object over array_items members, a record of a million fields", "[io][limits]") {
  RecordLimits l;
  l.array_items = 3;
  auto got = read_texts("o.jsonl", "{\"a\":1,\"b\":2,\"c\":3}\n{\"a\":1,\"b\":2,\"c\":3,\"d\":4,\"e\":5}\n"
                                   "{\"m\":{\"w\":1,\"x\":2,\"y\":3,\"z\":4}}\n", l);
  CHECK(got[0].problem.empty());
  CHECK_THAT(got[1].problem, Catch::Contains("o.jsonl:2:20: the record has more fields than the limit "
                                             "limits.array_items = 3"));
  CHECK(json::parse(got[1].text) == json{{"a", 1}, {"b", 2}, {"c", 3}});  // the fields within the limit
  CHECK_THAT(got[2].problem, Catch::Contains("field 'm' holds an object of more members than the limit"));
  // 600,000 fields in one 7 MB record: refused at the 10,001st, quickly, and its keys are no columns.
  std::string wide = "{\"id\":1";
  for (int i = 0; i < 600000; ++i) wide += ",\"k" + std::to_string(i) + "\":0";
  iotest::TempDir dir;
  auto reader = open_dataset(iotest::write_file(dir / "w.jsonl", wide + "}\n{\"id\":2,\"text\":\"t\"}\n"), "",
                             json::object());
  std::string text;
  REQUIRE(reader->next_text(text));
  CHECK_THAT(reader->record_problem(), Catch::Contains("the record has more fields than the limit limits.array_items "
                                                       "= 10,000"));
  CHECK(json::parse(text).size() == 10000);
  CHECK(reader->columns().empty());
  REQUIRE(reader->next_text(text));
  CHECK(reader->columns() == std::vector<std::string>{"id", "text"});
}

TEST_CASE("limits: a UTF-16 file is named as such", "[io][limits]") {
  for (const char *name : {"u.jsonl", "u.csv"}) {
    auto e = data_error(name, std::string("\xFF\xFE{\0\"\0a\0", 8));
    CHECK(e.line() == 1);
    CHECK_THAT(e.what(), Catch::Contains("the file is UTF-16 (it starts with a UTF-16 byte order mark), not UTF-8") &&
                             Catch::Contains("iconv -f UTF-16 -t UTF-8"));
  }
}
