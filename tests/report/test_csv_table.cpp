// sink.csv's table writer on its own (csv_sink::TableWriter, plugins/sinks/sink_csv/table.hpp): the columns,
// the padding of rows written before later columns appeared, and the .partial files.
#include <catch2/catch.hpp>

#include "evalgraph/plugin.hpp"
#include "table.hpp"
#include "test_support.h"

using namespace testsupport;

TEST_CASE("csv table: columns in first-seen order, earlier rows padded, a lone empty field quoted") {
  TempDir t;
  const fs::path file = t.path / "r.csv";
  csv_sink::TableWriter table(file, {});
  table.add(R"({"a":1})");
  table.add(R"({"a":"x,y","n":{"s":2,"deep":{"k":[1]}},"b":null})");
  CHECK(fs::exists(t.path / "r.csv.partial.body"));
  CHECK_THROWS_AS(table.add("{not json"), evalgraph::InputError);
  CHECK(table.records() == 2);
  table.finish();
  CHECK(table.columns() == 4);
  CHECK(!fs::exists(t.path / "r.csv.partial"));
  CHECK(!fs::exists(t.path / "r.csv.partial.body"));
  CHECK(read_file(file) == "a,n.s,n.deep,b\n1,,,\n\"x,y\",2,\"{\"\"k\"\":[1]}\",\n");
  CHECK_THROWS(table.finish());

  csv_sink::TableWriter one(t.path / "one.csv", {});
  one.add(R"({"only":""})");
  one.finish();
  CHECK(read_file(t.path / "one.csv") == "only\n\"\"\n");
}

TEST_CASE("csv table: explicit columns in their order, a separator of its own and a byte order mark") {
  TempDir t;
  csv_sink::TableWriter table(t.path / "s.csv", {'\t', true, std::vector<std::string>{"b", "a"}});
  CHECK(!fs::exists(t.path / "s.csv.partial.body"));  // rows go straight into the file
  table.add(R"({"a":"1\t2","b":3,"c":4})");
  table.finish();
  CHECK(read_file(t.path / "s.csv") == "\xEF\xBB\xBF" "b\ta\n3\t\"1\t2\"\n");
  CHECK_THROWS_AS(csv_sink::TableWriter(t.path / "d.csv", {',', false, std::vector<std::string>{"a", "a"}}), std::invalid_argument);
}
