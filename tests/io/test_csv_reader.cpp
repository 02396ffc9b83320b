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
using iotest::read_all;

Read read_csv(const std::string &content, const json &options = json::object(), const std::string &name = "data.csv") {
  iotest::TempDir dir;
  return read_all(iotest::write_file(dir / name, content), options);
}

// The DataError that reading the content throws.
DataError csv_error(const std::string &content, const json &options = json::object()) {
  return iotest::data_error([&] { read_csv(content, options); });
}

}  // namespace

TEST_CASE("csv: header and rows become string records", "[io][csv]") {
  auto r = read_csv("id,question,answer\n1,What?,42\n2,Why?,\n");
  REQUIRE(r.columns == std::vector<std::string>{"id", "question", "answer"});
  REQUIRE(r.records.size() == 2);
  CHECK(r.records[0] == json{{"id", "1"}, {"question", "What?"}, {"answer", "42"}});
  CHECK(r.records[1] == json{{"id", "2"}, {"question", "Why?"}, {"answer", ""}});
  CHECK(r.lines == std::vector<std::size_t>{2, 3});
}

TEST_CASE("csv: the last line may lack its line break", "[io][csv]") {
  auto r = read_csv("a,b\n1,2\n3,4");
  REQUIRE(r.records.size() == 2);
  CHECK(r.records[1] == json{{"a", "3"}, {"b", "4"}});
}

TEST_CASE("csv: separator option", "[io][csv]") {
  SECTION("semicolon") {
    auto r = read_csv("a;b\n1,5;x\n", {{"separator", ";"}});
    CHECK(r.records.at(0) == json{{"a", "1,5"}, {"b", "x"}});
  }
  SECTION("tab as a character and by name") {
    for (const char *sep : {"\t", "tab", "\\t"}) {
      auto r = read_csv("a\tb\n1,2\tx y\n", {{"separator", sep}});
      CHECK(r.records.at(0) == json{{"a", "1,2"}, {"b", "x y"}});
    }
  }
  SECTION(".tsv files default to tab") {
    auto r = read_csv("a\tb\n1,2\t3\n", json::object(), "data.tsv");
    CHECK(r.records.at(0) == json{{"a", "1,2"}, {"b", "3"}});
  }
  SECTION("a separator of several characters is an error") {
    auto e = csv_error("a,b\n", {{"separator", ";;"}});
    CHECK_THAT(e.what(), Catch::Contains("separator") && Catch::Contains("one character"));
  }
}

TEST_CASE("csv: separator auto-detection from the header", "[io][csv]") {
  CHECK(read_csv("a;b;c\n1;2,5;3\n", {{"separator", "auto"}}).records.at(0) ==
        json{{"a", "1"}, {"b", "2,5"}, {"c", "3"}});
  CHECK(read_csv("a\tb\n1;2\t3\n", {{"separator", "auto"}}).records.at(0) == json{{"a", "1;2"}, {"b", "3"}});
  CHECK(read_csv("a|b\n1|2\n", {{"separator", "auto"}}).records.at(0) == json{{"a", "1"}, {"b", "2"}});
  CHECK(read_csv("a,b\n1;2,3\n", {{"separator", "auto"}}).records.at(0) == json{{"a", "1;2"}, {"b", "3"}});
  // Separators inside a quoted header name do not count.
  CHECK(read_csv("\"x;y;z\",b\n1,2\n", {{"separator", "auto"}}).columns == std::vector<std::string>{"x;y;z", "b"});
  // One column: comma.
  CHECK(read_csv("only\nv\n", {{"separator", "auto"}}).records.at(0) == json{{"only", "v"}});
}

TEST_CASE("csv: quoted fields", "[io][csv]") {
  SECTION("separators and doubled quotes") {
    auto r = read_csv("a,b\n\"x, y\",\"say \"\"hi\"\"\"\n\"\",plain\n");
    CHECK(r.records.at(0) == json{{"a", "x, y"}, {"b", "say \"hi\""}});
    CHECK(r.records.at(1) == json{{"a", ""}, {"b", "plain"}});
  }
  SECTION("line breaks inside quotes, LF and CRLF; line numbers follow") {
    auto r = read_csv("a,b\n\"line1\nline2\",x\n\"p\r\nq\r\nr\",y\nlast,z\n");
    REQUIRE(r.records.size() == 3);
    CHECK(r.records[0]["a"] == "line1\nline2");
    CHECK(r.records[1]["a"] == "p\r\nq\r\nr");
    CHECK(r.lines == std::vector<std::size_t>{2, 4, 7});
  }
  SECTION("a custom quote character") {
    auto r = read_csv("a,b\n'x,y',z\n", {{"quote", "'"}});
    CHECK(r.records.at(0) == json{{"a", "x,y"}, {"b", "z"}});
  }
  SECTION("quoting off") {
    auto r = read_csv("a,b\n\"x,y\"\n", {{"quote", ""}});
    CHECK(r.records.at(0) == json{{"a", "\"x"}, {"b", "y\""}});
  }
  SECTION("a quote inside an unquoted field is kept") {
    CHECK(read_csv("a,b\n5\" pipe,x\n").records.at(0) == json{{"a", "5\" pipe"}, {"b", "x"}});
  }
}

TEST_CASE("csv: BOM, CRLF, CR and empty lines", "[io][csv]") {
  SECTION("UTF-8 BOM is skipped") {
    auto r = read_csv("\xEF\xBB\xBFid,text\n1,h\xC3\xA9llo\n");
    CHECK(r.columns == std::vector<std::string>{"id", "text"});
    CHECK(r.records.at(0)["text"] == "h\xC3\xA9llo");
  }
  SECTION("CRLF line ends") {
    auto r = read_csv("a,b\r\n1,2\r\n3,4\r\n");
    REQUIRE(r.records.size() == 2);
    CHECK(r.records[1] == json{{"a", "3"}, {"b", "4"}});
    CHECK(r.lines == std::vector<std::size_t>{2, 3});
  }
  SECTION("lone CR line ends") {
    auto r = read_csv("a,b\r1,2\r3,4\r");
    REQUIRE(r.records.size() == 2);
    CHECK(r.records[0] == json{{"a", "1"}, {"b", "2"}});
  }
  SECTION("empty lines are skipped, before the header too") {
    auto r = read_csv("\n\na,b\n\n1,2\r\n\r\n\n3,4\n\n");
    CHECK(r.columns == std::vector<std::string>{"a", "b"});
    REQUIRE(r.records.size() == 2);
    CHECK(r.lines == std::vector<std::size_t>{5, 8});
  }
  SECTION("a quoted empty value on its own line is a record") {
    auto r = read_csv("a\n\"\"\n\nx\n");
    REQUIRE(r.records.size() == 2);
    CHECK(r.records[0] == json{{"a", ""}});
  }
}

TEST_CASE("csv: a row with the wrong number of fields names its line and both counts", "[io][csv]") {
  auto e = csv_error("a,b,c\n1,2,3\n\"x\ny\",2,3\n4,5\n6,7,8\n");
  CHECK(e.line() == 5);
  CHECK_THAT(e.what(), Catch::Contains("data.csv:5: ") &&
                           Catch::Contains("2 fields") && Catch::Contains("3 columns") && Catch::Contains(" — "));
  auto more = csv_error("a,b\n1,2,3\n");
  CHECK(more.line() == 2);
  CHECK_THAT(more.what(), Catch::Contains("3 fields") && Catch::Contains("2 columns"));
}

TEST_CASE("csv: an unterminated quote names the line where the field started", "[io][csv]") {
  auto e = csv_error("a,b\n1,2\n3,\"never closed\nmore\nlines\n");
  CHECK(e.line() == 3);
  CHECK_THAT(e.what(), Catch::Contains("data.csv:3: ") && Catch::Contains("never closed"));
}

TEST_CASE("csv: other malformed input", "[io][csv]") {
  CHECK_THAT(csv_error("a,b\n\"x\"y,2\n").what(), Catch::Contains(":2: ") && Catch::Contains("closing quote"));
  auto dup = csv_error("id,text,id\n1,2,3\n");
  CHECK(dup.line() == 1);
  CHECK_THAT(dup.what(), Catch::Contains("'id' twice"));
  CHECK_THAT(csv_error("").what(), Catch::Contains("no header"));
  CHECK_THAT(csv_error("\n\n").what(), Catch::Contains("no header"));
  CHECK_THAT(csv_error("a\n1\n", {{"delimiter", ";"}}).what(), Catch::Contains("unknown CSV option 'delimiter'"));
  CHECK_THAT(csv_error("a\n1\n", {{"separator", ","}, {"quote", ","}}).what(), Catch::Contains("quote"));
}

TEST_CASE("csv: json_columns parses those cells as JSON", "[io][csv]") {
  auto r = read_csv("id,turns,meta\n1,\"[\"\"hi\"\",\"\"there\"\"]\",\"{\"\"k\"\":1}\"\n2,,{}\n",
                    {{"json_columns", {"turns", "meta"}}});
  REQUIRE(r.records.size() == 2);
  CHECK(r.records[0]["turns"] == json::array({"hi", "there"}));
  CHECK(r.records[0]["meta"] == json{{"k", 1}});
  CHECK(r.records[0]["id"] == "1");
  CHECK(r.records[1]["turns"].is_null());
  CHECK(r.records[1]["meta"] == json::object());

  auto bad = csv_error("id,turns\n1,[1]\n2,[oops\n", {{"json_columns", {"turns"}}});
  CHECK(bad.line() == 3);
  CHECK_THAT(bad.what(), Catch::Contains("'turns'") && Catch::Contains("not valid JSON"));
  CHECK_THAT(csv_error("id\n1\n", {{"json_columns", {"nope"}}}).what(), Catch::Contains("\"nope\""));
}

TEST_CASE("csv: a reused record object is refilled correctly", "[io][csv]") {
  iotest::TempDir dir;
  auto reader = open_dataset(iotest::write_file(dir / "d.csv", "b,a\n1,2\n3,4\n5,6\n"), "", json::object());
  json rec;
  REQUIRE(reader->next(rec));
  CHECK(rec == json{{"a", "2"}, {"b", "1"}});
  REQUIRE(reader->next(rec));
  CHECK(rec == json{{"a", "4"}, {"b", "3"}});
  rec["extra"] = 1;  // the caller changed the record: it must not leak into the next one
  REQUIRE(reader->next(rec));
  CHECK(rec == json{{"a", "6"}, {"b", "5"}});
  CHECK_FALSE(reader->next(rec));
  CHECK(reader->columns() == std::vector<std::string>{"b", "a"});
}

TEST_CASE("csv: records across buffer boundaries and very long fields", "[io][csv]") {
  iotest::TempDir dir;
  std::string content = "id,text,n\n";
  const int rows = 60000;  // ~2.5 MB: several 1 MiB chunks
  for (int i = 0; i < rows; ++i) {
    content += std::to_string(i) + ",\"a, \"\"quoted\"\"\nmulti-line text " + std::to_string(i) + "\"," +
               std::to_string(i * 2) + "\r\n";
  }
  const std::string huge(3 * 1024 * 1024 + 17, 'x');  // longer than the read buffer
  content += "big,\"" + huge + "\",\"" + huge + "\"\n";
  evalgraph::io::RecordLimits roomy;  // the default limits would stop the 3 MiB fields (tested in test_limits.cpp)
  roomy.field_bytes = roomy.record_bytes = 64u << 20;
  auto r = read_all(iotest::write_file(dir / "big.csv", content), json::object(), "", roomy);
  REQUIRE(r.records.size() == rows + 1);
  for (int i = 0; i < rows; ++i) {
    const json &rec = r.records[static_cast<std::size_t>(i)];
    REQUIRE(rec["id"] == std::to_string(i));
    REQUIRE(rec["text"] == "a, \"quoted\"\nmulti-line text " + std::to_string(i));
    REQUIRE(rec["n"] == std::to_string(i * 2));
    REQUIRE(r.lines[static_cast<std::size_t>(i)] == static_cast<std::size_t>(2 + 2 * i));
  }
  CHECK(r.records.back()["text"].get_ref<const std::string &>() == huge);
  CHECK(r.records.back()["n"].get_ref<const std::string &>() == huge);
}

TEST_CASE("open_dataset: format selection and file errors", "[io]") {
  iotest::TempDir dir;
  SECTION("a missing file") {
    try {
      open_dataset(dir / "missing.csv", "", json::object());
      FAIL("no error");
    } catch (const DataError &e) {
      CHECK(e.line() == 0);
      CHECK_THAT(e.what(), Catch::Contains("missing.csv: cannot open") && Catch::Contains(" — "));
    }
  }
  SECTION("an unknown extension, then the format given explicitly") {
    auto file = iotest::write_file(dir / "data.txt", "a,b\n1,2\n");
    CHECK_THROWS_WITH(open_dataset(file, "", json::object()), Catch::Contains("extension '.txt'"));
    CHECK(read_all(file, json::object(), "csv").records.size() == 1);
    CHECK_THROWS_WITH(open_dataset(file, "xlsx", json::object()), Catch::Contains("unknown dataset format 'xlsx'"));
  }
  SECTION("null options are no options; options must be a mapping") {
    auto file = iotest::write_file(dir / "data.csv", "a\n1\n");
    CHECK(read_all(file, json()).records.size() == 1);
    CHECK_THROWS_AS(open_dataset(file, "", json::array({1})), DataError);
  }
}
