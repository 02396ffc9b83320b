// The streaming executor: order, parallelism, errors stored per record, skipped dependents, retries,
// sequence nodes, replications, and the sinks' files.
#include <catch2/catch.hpp>
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>

#include "exec/executor.h"
#include "test_registry.h"
#include "test_support.h"

using namespace evalgraph;
using nlohmann::json;
using testsupport::TempDir;
namespace fs = std::filesystem;

namespace {

using testsupport::registry;

struct Run {
  TempDir dir;
  RunResult result;
  std::vector<json> records;
};

// Writes data + pipeline, runs it with `jobs` workers, and reads back the JSONL sink's records.
void run_pipeline(Run &r, const std::string &data, const std::string &nodes, int jobs = 2, int replications = 1,
                  std::size_t chunk = 256) {
  r.dir.write("data.jsonl", data);
  auto file = r.dir.write("p.yaml", "name: t\ndataset: {path: data.jsonl}\nreplications: " + std::to_string(replications) +
                                        "\nnodes:\n" + nodes + "sinks:\n  - uses: sink.jsonl\n    with: {file: out.jsonl}\n");
  Pipeline p = load_pipeline(file);
  Plan plan = build_plan(p, registry(), read_dataset_columns(p));
  HostServices host(nullptr, "", "");
  host.set_min_stderr_level(EG_LOG_ERROR);
  RunOptions opt;
  opt.jobs = jobs;
  opt.chunk_size = chunk;
  opt.run_dir = r.dir.path / "run";
  opt.retry_backoff_s = 0.001;
  r.result = run_plan(p, plan, host, opt);
  r.records = testsupport::read_jsonl(opt.run_dir / "out.jsonl");
}

std::string numbered(int n, const std::string &word = "w") {
  std::string s;
  for (int i = 0; i < n; ++i) s += json{{"i", i}, {"text", word + std::to_string(i)}}.dump() + "\n";
  return s;
}

}  // namespace

TEST_CASE("records come out in input order with several workers and small chunks", "[executor]") {
  Run r;
  run_pipeline(r, numbered(5000), "  - id: up\n    uses: test.upper\n  - id: pt\n    uses: test.passthrough\n", 4, 1, 7);
  REQUIRE(r.records.size() == 5000);
  for (int i = 0; i < 5000; ++i) {
    REQUIRE(r.records[i]["i"] == i);
    REQUIRE(r.records[i]["up"]["upper"] == "W" + std::to_string(i));
    REQUIRE(r.records[i]["pt"]["text"] == "w" + std::to_string(i));
  }
  CHECK(r.result.failed_records == 0);
  CHECK(r.result.nodes["up"].ok == 5000);
  // Finished files carry their final names; no partial file is left behind.
  CHECK(std::filesystem::exists(r.dir.path / "run" / "run.json"));
  CHECK(std::filesystem::exists(r.dir.path / "run" / "pipeline.yaml"));
  for (auto &e : std::filesystem::directory_iterator(r.dir.path / "run"))
    CHECK(e.path().extension() != ".partial");
}

TEST_CASE("a failing or throwing plugin fails that record's node, dependents are skipped with the reason", "[executor]") {
  Run r;
  std::string data = R"({"text":"ok one"}
{"text":"please fail"}
{"text":"throw now"}
{"text":"garbage out"}
{"text":"invalid in"}
{"text":"ok two"}
)";
  run_pipeline(r, data,
               "  - id: f\n    uses: test.flaky\n"
               "  - id: c\n    uses: test.concat\n    inputs: {a: f.text}\n");
  REQUIRE(r.records.size() == 6);
  CHECK(r.records[0]["c"]["joined"] == "OK ONE|-");
  CHECK(r.records[1]["_errors"]["f"] == "error: flaky failed on 'please fail'");
  CHECK(r.records[1]["_skipped"]["c"] == "skipped: it depends on 'f', which failed");
  CHECK(r.records[2]["_errors"]["f"] == "error: flaky threw on 'throw now'");
  CHECK_THAT(r.records[3]["_errors"]["f"].get<std::string>(),
             Catch::StartsWith("plugin test.flaky returned output that is not a JSON object"));
  CHECK(r.records[4]["_errors"]["f"] == "invalid input: flaky: input marked invalid");
  CHECK(r.records[5]["c"]["joined"] == "OK TWO|-");
  CHECK(r.result.failed_records == 4);
  CHECK(r.result.nodes["f"].failed == 4);
  CHECK(r.result.nodes["c"].skipped == 4);
  CHECK(r.result.nodes["c"].ok == 2);
  CHECK(r.result.summary["nodes"]["f"]["first_error"] == "record 2: error: flaky failed on 'please fail'");
}

TEST_CASE("a node reads several ports, from the dataset and from upstream nodes", "[executor]") {
  Run r;
  run_pipeline(r, "{\"text\":\"a\",\"other\":\"b\"}\n{\"text\":\"c\",\"other\":null}\n",
               "  - id: up\n    uses: test.upper\n"
               "  - id: j\n    uses: test.concat\n    inputs: {a: up.upper, b: other}\n    with: {separator: \"+\"}\n");
  REQUIRE(r.records.size() == 2);
  CHECK(r.records[0]["j"]["joined"] == "A+b");
  CHECK(r.records[1]["_errors"]["j"].get<std::string>().find("type must be string") != std::string::npos);
}

TEST_CASE("EG_RETRY is retried by the host with backoff, up to the limit", "[executor]") {
  Run r;
  run_pipeline(r, "{\"text\":\"retry:2 a\"}\n{\"text\":\"retry:9 b\"}\n", "  - id: f\n    uses: test.flaky\n", 1);
  REQUIRE(r.records.size() == 2);
  CHECK(r.records[0]["f"]["attempts"] == 3);
  CHECK(r.records[1]["_errors"]["f"] == "gave up after retries: flaky: try again");
}

TEST_CASE("a missing required field fails the node for that record only", "[executor]") {
  Run r;
  run_pipeline(r, "{\"text\":\"a\"}\n{\"other\":\"no text here\"}\n{\"text\":null}\n", "  - id: up\n    uses: test.upper\n");
  REQUIRE(r.records.size() == 3);
  CHECK(r.records[0]["up"]["upper"] == "A");
  CHECK(r.records[1]["_errors"]["up"] == "record 2 (line 2) has no value for field 'text' (port 'text')");
  CHECK(r.records[2]["_errors"]["up"] == "record 3 (line 3) has no value for field 'text' (port 'text')");
  // run.json's first error names the record once, not "record 2: record 2 (line 2) ..."
  CHECK(r.result.summary["nodes"]["up"]["first_error"] == "record 2 (line 2) has no value for field 'text' (port 'text')");
}

TEST_CASE("sequence nodes get each group's records ordered by the order field", "[executor]") {
  Run r;
  std::string data = R"({"conv":"a","turn":2,"text":"a2"}
{"conv":"a","turn":1,"text":"a1"}
{"conv":"a","turn":10,"text":"a10"}
{"conv":"b","turn":1,"text":"b1"}
{"conv":"c","turn":"2","text":"c2"}
{ "conv" : "\u0063", "turn":"1","text":"c1"}
)";
  run_pipeline(r, data, "  - id: s\n    uses: test.seq\n    group_by: conv\n    order_by: turn\n", 2, 1, 1);
  REQUIRE(r.records.size() == 6);
  // Output keeps input order; each record carries its place in its group.
  CHECK(r.records[0]["s"]["position"] == 1);
  CHECK(r.records[1]["s"]["position"] == 0);
  CHECK(r.records[2]["s"]["running"] == "a1+a2+a10");
  CHECK(r.records[2]["s"]["group_size"] == 3);
  CHECK(r.records[3]["s"]["running"] == "b1");
  CHECK(r.records[4]["s"]["running"] == "c1+c2");  // "\u0063" is "c": the same group however it is spelled
}

TEST_CASE("a group that reappears after it ended is a data error naming the line", "[executor]") {
  Run r;
  std::string data = "{\"conv\":\"a\",\"turn\":1,\"text\":\"x\"}\n{\"conv\":\"b\",\"turn\":1,\"text\":\"y\"}\n"
                     "{\"conv\":\"a\",\"turn\":2,\"text\":\"z\"}\n";
  REQUIRE_THROWS_WITH(run_pipeline(r, data, "  - id: s\n    uses: test.seq\n    group_by: conv\n    order_by: turn\n"),
                      Catch::Contains(":3: record of group conv=\"a\" appears after that group ended") &&
                          Catch::Contains("sort the dataset by 'conv'"));
}

TEST_CASE("replications repeat every record with its replication index", "[executor]") {
  Run r;
  run_pipeline(r, numbered(3), "  - id: up\n    uses: test.upper\n", 2, 3);
  REQUIRE(r.records.size() == 9);
  CHECK(r.records[0]["_replication"] == 0);
  CHECK(r.records[2]["_replication"] == 2);
  CHECK(r.records[3]["i"] == 1);
  CHECK(r.result.records == 9);
}

TEST_CASE("a node that cannot be created stops the run before any record moves", "[executor]") {
  Run r;
  REQUIRE_THROWS_WITH(run_pipeline(r, numbered(2), "  - id: p\n    uses: test.params\n    with: {mode: refuse}\n"),
                      Catch::Contains("node 'p' (test.params) could not be set up: mode 'refuse' refuses to start"));
}

TEST_CASE("an LLM node without providers fails per record with a clear reason", "[executor]") {
  Run r;
  run_pipeline(r, numbered(1), "  - id: j\n    uses: test.needs_llm\n");
  CHECK_THAT(r.records[0]["_errors"]["j"].get<std::string>(),
             Catch::Contains("no LLM provider is configured: declare one under 'providers:'"));
}

TEST_CASE("a record nested deeper than limits.nesting_depth fails alone, the others run", "[executor][limits]") {
  Run r;
  std::string deep = std::string(600, '[') + std::string(600, ']');
  std::string data = "{\"text\":\"a\"}\n{\"text\":\"b\",\"deep\":" + deep + "}\n{\"text\":\"c\"}\n";
  run_pipeline(r, data, "  - id: pt\n    uses: test.passthrough\n");
  REQUIRE(r.records.size() == 3);
  CHECK(r.records[0]["pt"]["text"] == "a");
  CHECK(r.records[2]["pt"]["text"] == "c");
  CHECK(r.records[1]["deep"].is_null());  // the value over the limit is not passed on
  CHECK_THAT(r.records[1]["_errors"]["pt"].get<std::string>(),
             Catch::Contains("data.jsonl:2:") && Catch::Contains("field 'deep' nests objects and arrays deeper than the "
                                                                 "limit limits.nesting_depth = 64"));
  CHECK(r.result.failed_records == 1);
  CHECK(r.result.nodes["pt"].failed == 1);
}

namespace {
// The progress line's expected total ("/~N records") of a run over `data` saved as `file`, read from stderr.
std::string progress_total(const std::string &file, const std::string &data, const std::string &format = "") {
  TempDir d;
  d.write(file, data);
  auto p_file = d.write("p.yaml", "name: t\ndataset: {path: " + file + (format.empty() ? "" : ", format: " + format) +
                                      "}\nnodes:\n  - id: pt\n    uses: test.passthrough\n"
                                      "sinks:\n  - uses: sink.jsonl\n    with: {file: out.jsonl}\n");
  Pipeline p = load_pipeline(p_file);
  Plan plan = build_plan(p, registry(), read_dataset_columns(p));
  HostServices host(nullptr, "", "");
  host.set_min_stderr_level(EG_LOG_ERROR);
  RunOptions opt;
  opt.run_dir = d.path / "run";
  opt.progress = true;
  const fs::path err = d.path / "stderr.txt";
  std::fflush(stderr);
  int saved = dup(STDERR_FILENO);
  int fd = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  dup2(fd, STDERR_FILENO);
  ::close(fd);
  RunResult r = run_plan(p, plan, host, opt);
  std::fflush(stderr);
  dup2(saved, STDERR_FILENO);
  ::close(saved);
  REQUIRE(r.records == 3);
  std::string text = testsupport::read_file(err);
  auto at = text.find("/~");
  REQUIRE(at != std::string::npos);
  return text.substr(at + 2, text.find(' ', at) - at - 2);
}
}  // namespace

// The progress total counts a data file's records the way its reader reads it: an .ndjson or .json file is JSON
// lines (no header line), a .csv or .tsv file has one.
TEST_CASE("the progress total reads a data file like its reader does: .ndjson and .json have no header line", "[executor]") {
  const std::string lines = numbered(3);
  CHECK(progress_total("data.jsonl", lines) == "3");
  CHECK(progress_total("data.ndjson", lines) == "3");
  CHECK(progress_total("data.json", lines) == "3");
  CHECK(progress_total("data.csv", "i,text\n0,a\n1,b\n2,c\n") == "3");
  CHECK(progress_total("data.tsv", "i\ttext\n0\ta\n1\tb\n2\tc\n") == "3");
  CHECK(progress_total("data.txt", "i,text\n0,a\n1,b\n2,c\n", "csv") == "3");
  CHECK(progress_total("data.txt", lines, "jsonl") == "3");
}
