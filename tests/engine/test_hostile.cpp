// Hostile inputs through the real binary (issue #15): every one ends with exit code 0-3 and a message that
// says file:line (and column where known), what is wrong and what to do, never with a signal and never with a
// library's exception text. A record over a limit fails alone (exit 1) and the others are computed.
#include <catch2/catch.hpp>
#include <chrono>
#include <set>

#include "chatbot_config/experiment.h"
#include "config/yaml_guard.h"
#include "evalgraph/input.hpp"
#include "evalgraph/json_bounded.hpp"
#include "llm_fixture.h"
#include "test_plugin_pipelines.h"
#include "test_support.h"
#include "util/raw_json.h"

using namespace testsupport;
using nlohmann::json;

namespace {

std::string nested(std::size_t depth) { return std::string(depth, '[') + std::string(depth, ']'); }

// A KSODI unit as one JSONL line.
std::string unit(const std::string &id, const std::string &answer, const std::string &docs_json = "[\"Der Tarif kostet 10 Euro.\"]") {
  return "{\"id\":" + json(id).dump() + ",\"assistant_text\":" + json(answer).dump() +
         ",\"user_text\":\"Was kostet der Tarif?\",\"retrieved_docs\":" + docs_json + "}\n";
}

std::string ksodi_pipeline(const std::string &data, const std::string &extra = "", const std::string &options = "") {
  return "name: hostile\ndataset: {path: " + data + options + "}\n" + extra +
         "nodes:\n  - id: s0\n    uses: ksodi.s0\n    inputs: {answer: assistant_text}\n"
         "  - id: o0\n    uses: ksodi.o0\n    inputs: {answer: assistant_text}\n"
         "sinks:\n  - uses: sink.jsonl\n    with: {file: out.jsonl}\noutput: {dir: out}\n";
}

struct Outcome {
  CmdResult cmd;
  std::filesystem::path dir;  // the results folder
  std::vector<json> records;  // its out.jsonl
  json run;                   // run.json
};

// `evalgraph run -q <flags> <d>/<pipeline>` and what it wrote.
Outcome run_outcome(const TempDir &d, const std::string &pipeline, const std::string &flags = "") {
  auto r = run_pipeline(d, pipeline, flags);
  Outcome o{{r.exit_code, r.output}, r.dir, {}, {}};
  std::error_code ec;
  if (std::filesystem::exists(o.dir / "out.jsonl", ec)) o.records = read_jsonl(o.dir / "out.jsonl");
  if (std::filesystem::exists(o.dir / "run.json", ec)) o.run = read_run_json(o.dir);
  return o;
}

Outcome run_ksodi(TempDir &d, const std::string &data_name, const std::string &data, const std::string &extra = "",
                  const std::string &options = "") {
  d.write(data_name, data);
  d.write("p.yaml", ksodi_pipeline(data_name, extra, options));
  return run_outcome(d, "p.yaml");
}

// A run in which exactly the records at `failed` failed, alone: exit code 1, `n` records, an error on each of
// those and on no other; with `node` (a ksodi node, o0 or s0), its score (O0, S0) a number on every other record.
// What the errors say is the caller's to check.
void check_failed_alone(const Outcome &o, std::size_t n, const std::set<std::size_t> &failed,
                        const std::string &node = "") {
  INFO(o.cmd.output.substr(0, 2000));
  REQUIRE(o.cmd.exit_code == 1);
  REQUIRE(o.records.size() == n);
  for (std::size_t i = 0; i < n; ++i) {
    INFO("record " << i);
    const bool ok = failed.count(i) == 0;
    CHECK(o.records[i].contains("_errors") == !ok);
    if (ok && !node.empty()) CHECK(o.records[i][node][node == "o0" ? "O0" : "S0"].is_number());
  }
}

void no_library_words(const std::string &s) {
  CHECK_THAT(s, !Catch::Contains("json.exception") && !Catch::Contains("yaml-cpp") && !Catch::Contains("bad file"));
}

std::string error_of(const json &rec, const char *node) {
  auto e = rec.find("_errors");
  if (e == rec.end() || !e->contains(node)) return "";
  return (*e)[node].get<std::string>();
}

}  // namespace

TEST_CASE("hostile: a JSONL record nested 100,000 deep fails alone (was SIGSEGV)", "[hostile][cli]") {
  TempDir d;
  auto o = run_ksodi(d, "data.jsonl",
                     unit("a", "Der Tarif kostet 10 Euro.") + unit("deep", "Hi.", nested(100000)) +
                         unit("b", "Der Tarif kostet 10 Euro."));
  check_failed_alone(o, 3, {1}, "o0");
  CHECK_THAT(error_of(o.records[1], "o0"), Catch::Contains("data.jsonl:2:") &&
                                               Catch::Contains("field 'retrieved_docs' nests objects and arrays deeper "
                                                               "than the limit limits.nesting_depth = 64"));
  CHECK(error_of(o.records[1], "s0") == error_of(o.records[1], "o0"));
  CHECK(o.run["failed_records"] == 1);
  no_library_words(o.cmd.output);
}

TEST_CASE("hostile: JSON nested 100,000 deep in a CSV cell, as json_columns and as a string", "[hostile][cli]") {
  TempDir d;
  const std::string csv = "id,assistant_text,user_text,retrieved_docs\n"
                          "a,Der Tarif kostet 10 Euro.,Was kostet der Tarif?,\"[\"\"Der Tarif kostet 10 Euro.\"\"]\"\n"
                          "deep,Hi.,Was?," + nested(100000) + "\n";
  // json_columns: the reader checks the cell.
  auto o = run_ksodi(d, "data.csv", csv, "", ", options: {json_columns: [retrieved_docs]}");
  check_failed_alone(o, 2, {1}, "o0");
  CHECK_THAT(error_of(o.records[1], "o0"), Catch::Contains("data.csv:3: column 'retrieved_docs' nests objects and arrays "
                                                           "deeper than the limit limits.nesting_depth = 64"));
  // A plain text cell that holds JSON: the operator parses it, bounded by the same limit.
  auto s = run_ksodi(d, "data.csv", csv);
  check_failed_alone(s, 2, {1}, "o0");
  CHECK_THAT(error_of(s.records[1], "o0"),
             Catch::Contains("retrieved_docs: the string looks like a JSON array but is nested deeper than 64 levels"));
  no_library_words(o.cmd.output + s.cmd.output);
}

TEST_CASE("hostile: a pipeline YAML nested 100,000 deep is refused with line, column and the limit", "[hostile][cli]") {
  TempDir d;
  d.write("data.jsonl", unit("a", "x"));
  const std::string head = "name: y\ndataset: {path: data.jsonl}\nnodes:\n  - id: s0\n    uses: ksodi.s0\n"
                           "    inputs: {answer: assistant_text}\n    with:\n      x: ";
  // flow sequences, compact block sequences, mappings by indentation
  std::string block_maps = "name: y\ndataset: {path: data.jsonl}\nnodes: []\nx:\n";
  for (int i = 1; i < 200; ++i) block_maps += std::string(static_cast<std::size_t>(i), ' ') + "k:\n";
  std::string dashes;
  for (int i = 0; i < 100000; ++i) dashes += "- ";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {head + nested(100000) + "\n", "p.yaml:8:"},
      {head + "{a: " + std::string(100000, '{') + "}\n", "p.yaml:8:"},
      {head + "\n        " + dashes + "x\n", "p.yaml:9:"},
      {block_maps, "p.yaml:"}};
  for (const auto &[yaml, where] : cases) {
    d.write("p.yaml", yaml);
    auto r = validate(d, "p.yaml");
    INFO(r.output.substr(0, 400));
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.output, Catch::Contains(where) && Catch::Contains("nests lists and mappings deeper than 64 levels"));
    no_library_words(r.output);
  }
}

TEST_CASE("hostile: YAML aliases that expand to a billion values are refused quickly", "[hostile][cli]") {
  TempDir d;
  d.write("data.jsonl", unit("a", "x"));
  std::string yaml = "name: bl\ndataset: {path: data.jsonl}\nnodes:\n  - id: s0\n    uses: ksodi.s0\n"
                     "    inputs: {answer: assistant_text}\n    with:\n      lol0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n";
  for (int i = 1; i < 10; ++i) {
    yaml += "      lol" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
    for (int k = 0; k < 9; ++k) yaml += std::string(k ? ", " : "") + "*a" + std::to_string(i - 1);
    yaml += "]\n";
  }
  d.write("p.yaml", yaml);
  auto t0 = std::chrono::steady_clock::now();
  auto r = validate(d, "p.yaml");
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  INFO(r.output);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Catch::Contains("p.yaml:3:1: error: 'nodes' stands for more than 100000 values once its aliases"));
  CHECK(secs < 10);  // was 12 GB and a minute before the check
}

TEST_CASE("hostile: a YAML alias inside its own anchor is refused, not followed until the stack is gone", "[hostile][yaml][cli]") {
  // yaml-cpp builds `&x {a: *x}` as a cycle; walking it recursively was a stack overflow (found by fuzz_pipeline
  // and fuzz_config_dir; both reproducers stay in their corpora).
  TempDir d;
  d.write("data.jsonl", unit("a", "x"));
  d.write("p.yaml", "name: cyc\ndataset: {path: data.jsonl}\nnodes:\n  - id: s0\n    uses: ksodi.s0\n"
                    "    inputs: {answer: assistant_text}\n    with: &x {alpha: *x}\n");
  auto r = check_refused(d, "p.yaml", {"p.yaml:3:1: error: 'nodes' nests deeper than 256 levels once its aliases"});
  no_library_words(r.output);
  // A wide cycle runs into the value count or the depth, whichever comes first; either way a refusal.
  d.write("p.yaml", "name: cyc\ndataset: {path: data.jsonl}\nnodes: &n [{id: s0, uses: ksodi.s0, with: [*n, *n, *n]}]\n");
  check_refused(d, "p.yaml", {"p.yaml:3:1: error: 'nodes'"});
  // The --config-dir reader and create_dataset.yaml go through the same guard.
  std::filesystem::copy(std::string(REPO_DIR) + "/pipelines/chatbot", d.path / "project",
                        std::filesystem::copy_options::recursive);
  const auto cfg = d.path / "project" / "config";
  d.write("project/config/llm_tasks.yaml", "t: &t {x: [1, *t]}\n");
  auto c = run_cmd(evalgraph_cmd("run --config-dir " + cfg.string()));
  INFO(c.output.substr(0, 1000));
  CHECK(c.exit_code == 2);
  CHECK_THAT(c.output, Catch::Contains("llm_tasks.yaml:1:1: error: 't' nests deeper than 256 levels"));
  d.write("project/config/create_dataset.yaml", "dataset_name: &t [x, *t]\n");
  auto k = run_cmd(evalgraph_cmd("create-dataset --config-dir " + cfg.string()));
  INFO(k.output.substr(0, 1000));
  CHECK(k.exit_code == 2);
  CHECK_THAT(k.output, Catch::Contains("create_dataset.yaml:1:1: error: 'dataset_name' nests deeper"));
}

TEST_CASE("hostile: a pipeline of more than 100,000 values without aliases says so, not 'aliases'", "[hostile][yaml][cli]") {
  TempDir d;
  d.write("data.jsonl", unit("a", "x"));
  std::string yaml = "name: big\ndataset: {path: data.jsonl}\nnodes:\n";
  for (int i = 0; i < 20000; ++i)
    yaml += "  - {id: n" + std::to_string(i) + ", uses: ksodi.s0, inputs: {answer: assistant_text}}\n";
  d.write("p.yaml", yaml);
  auto r = validate(d, "p.yaml");
  INFO(r.output.substr(0, 600));
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Catch::Contains("p.yaml:3:1: error: 'nodes' holds more than 100000 values; no configuration "
                                       "needs that many"));
  CHECK_THAT(r.output, !Catch::Contains("aliases"));
}

TEST_CASE("hostile: /dev/zero as a data set is refused, not read for ever", "[hostile][cli]") {
  // JSONL: a NUL byte is never JSON text, so the first line is refused at once. CSV (where a NUL byte is a
  // character like any other): a row that runs on past 64 x limits.record_bytes is no row.
  TempDir d;
  for (const std::string fmt : {"jsonl", "csv"}) {
    d.write("p.yaml", "name: z\ndataset: {path: /dev/zero, format: " + fmt +
                          "}\nlimits: {record_bytes: 4 KB, field_bytes: 1 KB}\nnodes:\n"
                          "  - {id: s0, uses: ksodi.s0, inputs: {answer: assistant_text}}\n"
                          "sinks:\n  - {uses: sink.jsonl, with: {file: out.jsonl}}\noutput: {dir: out}\n");
    auto r = run_cmd(evalgraph_cmd("run -q " + (d.path / "p.yaml").string()));
    INFO(fmt << ": " << r.output.substr(0, 600));
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.output, Catch::Contains(fmt == "jsonl" ? "/dev/zero:1:1: invalid JSON" : "/dev/zero:1: the row that "
                                                                                              "starts on line 1 runs on"));
    no_library_words(r.output);
  }
  // A line without an end in a regular file: the same refusal once it runs past the bound.
  d.write("long.jsonl", "{\"assistant_text\": \"" + std::string(300 * 1024, 'a'));
  d.write("p.yaml", "name: z\ndataset: {path: long.jsonl}\nlimits: {record_bytes: 4 KB, field_bytes: 1 KB}\nnodes:\n"
                    "  - {id: s0, uses: ksodi.s0, inputs: {answer: assistant_text}}\n"
                    "sinks:\n  - {uses: sink.jsonl, with: {file: out.jsonl}}\noutput: {dir: out}\n");
  auto l = run_cmd(evalgraph_cmd("run -q " + (d.path / "p.yaml").string()));
  INFO(l.output.substr(0, 600));
  CHECK(l.exit_code == 2);
  CHECK_THAT(l.output, Catch::Contains("long.jsonl:1: line 1 runs on for more than"));
}

TEST_CASE("hostile: a number beyond a double (1e999999) fails its record alone and names the field", "[hostile][cli]") {
  TempDir d;
  auto o = run_ksodi(d, "data.jsonl",
                     unit("a", "Der Tarif kostet 10 Euro.") +
                         "{\"id\":\"n\",\"assistant_text\":\"Hi.\",\"score\":1e999999}\n" + unit("b", "Gut."));
  check_failed_alone(o, 3, {1}, "s0");
  CHECK_THAT(error_of(o.records[1], "s0"), Catch::Contains("data.jsonl:2:42: the number 1e999999 is beyond the range of "
                                                           "a double (about ±1.8e308) (in field 'score')") &&
                                               Catch::Contains("write it as a string"));
  no_library_words(o.cmd.output);
}

TEST_CASE("hostile: a field over limits.field_bytes and a record over limits.record_bytes fail alone", "[hostile][cli]") {
  TempDir d;
  const std::string limits = "limits: {field_bytes: 1 KB, record_bytes: 4 KB}\n";
  auto o = run_ksodi(d, "data.jsonl",
                     unit("a", "Der Tarif kostet 10 Euro.") + unit("field", std::string(2000, 'x') + ".") +
                         unit("record", "Gut.", "[" + json(std::string(900, 'd')).dump() + "," +
                                                    json(std::string(900, 'e')).dump() + "]") +
                         "{\"id\":\"r\",\"a\":" + json(std::string(1000, 'a')).dump() + ",\"b\":" +
                         json(std::string(1000, 'b')).dump() + ",\"c\":" + json(std::string(1000, 'c')).dump() +
                         ",\"d\":" + json(std::string(1000, 'd')).dump() + ",\"e\":" + json(std::string(1000, 'e')).dump() +
                         ",\"assistant_text\":\"Gut.\"}\n",
                     limits);
  check_failed_alone(o, 4, {1, 2, 3}, "s0");
  CHECK_THAT(error_of(o.records[1], "s0"), Catch::Contains("data.jsonl:2:32: field 'assistant_text' is 2,003 bytes, over "
                                                           "the limit limits.field_bytes = 1,024 (1 KiB)"));
  CHECK(o.records[1]["assistant_text"].is_null());
  CHECK_THAT(error_of(o.records[2], "o0"), Catch::Contains("data.jsonl:3:93: field 'retrieved_docs' is 1,807 bytes, over the limit "
                                                           "limits.field_bytes"));
  CHECK_THAT(error_of(o.records[3], "s0"), Catch::Contains("data.jsonl:4: the record is 5,069 bytes") &&
                                               Catch::Contains("over the limit limits.record_bytes = 4,096 (4 KiB)"));
  CHECK(o.run["failed_records"] == 3);
}

TEST_CASE("hostile: an answer of more than limits.sentences_per_answer sentences fails alone", "[hostile][cli]") {
  TempDir d;
  std::string many;
  for (int i = 0; i < 150; ++i) many += "Satz " + std::to_string(i) + ". ";
  auto o = run_ksodi(d, "data.jsonl", unit("a", "Der Tarif kostet 10 Euro. Er gilt ab Mai.") + unit("many", many),
                     "limits: {sentences_per_answer: 100}\n");
  check_failed_alone(o, 2, {1}, "o0");
  CHECK_THAT(error_of(o.records[1], "o0"), Catch::Contains("ksodi.o0: the answer has 150 sentences, over the limit "
                                                           "limits.sentences_per_answer = 100"));
  CHECK_THAT(error_of(o.records[1], "s0"), Catch::Contains("ksodi.s0: the answer has 150 sentences"));
}

TEST_CASE("hostile: an array over limits.array_items fails its record alone", "[hostile][cli]") {
  TempDir d;
  std::string docs = "[";
  for (int i = 0; i < 10001; ++i) docs += (i ? ",\"d\"" : "\"d\"");
  docs += "]";
  auto o = run_ksodi(d, "data.jsonl", unit("a", "Der Tarif kostet 10 Euro.") + unit("many", "Gut.", docs));
  check_failed_alone(o, 2, {1}, "o0");
  CHECK_THAT(error_of(o.records[1], "o0"), Catch::Contains("data.jsonl:2:") &&
                                               Catch::Contains("field 'retrieved_docs' holds an array of more than the "
                                                               "limit limits.array_items = 10,000 items"));
}

TEST_CASE("hostile: a repeated key fails its record alone", "[hostile][cli]") {
  TempDir d;
  auto o = run_ksodi(d, "data.jsonl",
                     unit("a", "Der Tarif kostet 10 Euro.") +
                         "{\"id\":\"dup\",\"assistant_text\":\"Ja.\",\"assistant_text\":\"Nein.\"}\n");
  check_failed_alone(o, 2, {1}, "s0");
  CHECK_THAT(error_of(o.records[1], "s0"), Catch::Contains("data.jsonl:2:36: field 'assistant_text' appears twice in the "
                                                           "record") && Catch::Contains("keep one of them"));
}

TEST_CASE("hostile: bytes that are not UTF-8 and NUL bytes refuse the data set with line and column", "[hostile][cli]") {
  TempDir d;
  auto latin1 = run_ksodi(d, "data.jsonl", unit("a", "ok") + "{\"id\":\"b\",\"assistant_text\":\"Gr\xF6\xDF" "e\"}\n");
  CHECK(latin1.cmd.exit_code == 2);  // found while planning (the columns are read first): nothing was run
  CHECK_THAT(latin1.cmd.output, Catch::Contains("data.jsonl:2:31: invalid JSON: bytes that are not UTF-8 (byte 0xF6)") &&
                                    Catch::Contains("iconv"));
  auto nul = run_ksodi(d, "data.jsonl", unit("a", "ok") + std::string("{\"id\":\"b\",\"assistant_text\":\"a\0b\"}\n", 33));
  CHECK(nul.cmd.exit_code == 2);
  CHECK_THAT(nul.cmd.output, Catch::Contains("data.jsonl:2:30: invalid JSON: a NUL byte inside a string"));
  // Past the records the plan reads (the first 1,000), the run finds it: exit 3.
  std::string data;
  for (int i = 0; i < 1001; ++i) data += unit("u" + std::to_string(i), "ok");
  auto late = run_ksodi(d, "data.jsonl", data + "{\"id\":\"b\",\"assistant_text\":\"Gr\xF6\xDF" "e\"}\n");
  CHECK(late.cmd.exit_code == 3);
  CHECK_THAT(late.cmd.output, Catch::Contains("data.jsonl:1002:31: invalid JSON: bytes that are not UTF-8"));
  no_library_words(latin1.cmd.output + nul.cmd.output + late.cmd.output);
}

TEST_CASE("hostile: the limits section is checked with file:line:column", "[hostile][cli]") {
  TempDir d;
  d.write("data.jsonl", unit("a", "x"));
  d.write("p.yaml", "name: l\ndataset: {path: data.jsonl}\nlimits:\n  field_bytes: 2 XB\n  nesting_depth: 9999\n"
                    "  array_itmes: 5\nnodes:\n  - id: s0\n    uses: ksodi.s0\n    inputs: {answer: assistant_text}\n");
  check_refused(d, "p.yaml", {"p.yaml:4:16: error: limits.field_bytes must be a size in bytes above 0",
                              "p.yaml:5:18: error: limits.nesting_depth must be a whole number from 1 to 512",
                              "p.yaml:6:3: error: unknown key 'array_itmes' in 'limits' (did you mean 'array_items'?)"});
}

TEST_CASE("hostile: a 20 MB answer of short sentences fails alone and memory stays bounded", "[hostile][cli]") {
  TempDir d;
  std::string data;
  for (int i = 0; i < 20; ++i) data += unit("u" + std::to_string(i), "Der Tarif kostet 10 Euro. Er gilt ab Mai.");
  std::string huge;
  huge.reserve(20u << 20);
  while (huge.size() < (20u << 20)) huge += "Hi. ";
  data += unit("huge", huge);
  for (int i = 20; i < 40; ++i) data += unit("u" + std::to_string(i), "Der Tarif kostet 10 Euro.");
  auto o = run_ksodi(d, "data.jsonl", data);
  check_failed_alone(o, 41, {20}, "o0");
  CHECK_THAT(error_of(o.records[20], "o0"), Catch::Contains("data.jsonl:21: the record is 20,971,") &&
                                                Catch::Contains("over the limit limits.record_bytes = 8,388,608 (8 MiB)"));
  CHECK(o.run["failed_records"] == 1);
  CHECK(o.run["peak_rss_mb"].get<double>() < 200);  // far below 2 GB (was ~5 GB)
}

TEST_CASE("hostile: an LLM response nested 100,000 deep fails the record, not the engine", "[hostile][llm]") {
  TestLlmServer srv;
  Rule deep;
  deep.match = "deep";
  deep.fault = Fault::deep_json;
  srv.add_rule(deep);
  Rule deep_answer;  // the judge's answer (content) itself nested 100,000 deep
  deep_answer.match = "nested";
  deep_answer.reply = "{\"verdict\": " + nested(100000) + "}";
  srv.add_rule(deep_answer);
  Rule ok;
  ok.reply = "True";
  srv.add_rule(ok);
  TempDir d;
  d.write("data.csv", "text,orig\nfine,o\ndeep please,o\nnested please,o\n");
  d.write("p.yaml", "name: llm\ndataset: {path: data.csv}\n"
                    "providers:\n  judge:\n    base_url: " + srv.base_url() + "\n    model: m\n"
                    "    max_attempts: 2\n    max_malformed_attempts: 2\n    backoff_initial_s: 0.01\n"
                    "nodes:\n  - id: j\n    uses: test.needs_llm\n"
                    "  - id: v\n    uses: judge.task_comparison\n    inputs: {original: orig, transformed: text}\n"
                    "    with: {criterion: c}\n"
                    "sinks:\n  - uses: sink.jsonl\n    with: {file: out.jsonl}\noutput: {dir: out}\n");
  auto o = run_outcome(d, "p.yaml", "--no-cache");
  check_failed_alone(o, 3, {1});  // record 2: an invalid verdict, not an error
  const auto &recs = o.records;
  CHECK(recs[0]["j"]["answer"] == "True");
  CHECK(recs[0]["v"]["value"] == 1);
  CHECK_THAT(error_of(recs[1], "j"), Catch::Contains("malformed response (HTTP 200): response cannot be taken: the value "
                                                     "is nested deeper than 64 levels"));
  // The judge's answer is text: nested that deep, it is an invalid verdict, kept with its raw text.
  CHECK(recs[2]["v"]["valid"] == false);
  CHECK(recs[2]["v"]["value"].is_null());
  no_library_words(o.cmd.output);
}

// ---- the pieces behind the messages ----

TEST_CASE("hostile: compare and merge read a results folder's run.json without recursing on it", "[hostile][cli]") {
  // Our own files, but a damaged or hand-edited one must end in a message, not a stack overflow.
  TempDir d;
  auto o = run_ksodi(d, "data.jsonl", unit("a", "Der Tarif kostet 10 Euro.") + unit("b", "Er kostet 12 Euro."));
  REQUIRE(o.cmd.exit_code == 0);
  const std::filesystem::path good = last_line(o.cmd.output);
  const std::filesystem::path bad = d.path / "bad";
  std::filesystem::copy(good, bad, std::filesystem::copy_options::recursive);
  d.write("bad/run.json", "{\"x\":" + nested(1000000) + "}");
  auto c = run_cmd(evalgraph_cmd("compare " + good.string() + " " + bad.string()));
  INFO(c.output.substr(0, 600));
  CHECK(c.exit_code == 3);
  CHECK_THAT(c.output, Catch::Contains("run.json: not valid JSON (nested deeper than 64 levels)"));
  no_library_words(c.output);
  // A merge reads each shard's run.json the same way.
  for (int i = 1; i <= 2; ++i) {
    auto sh = run_cmd(evalgraph_cmd("run -q " + (d.path / "p.yaml").string() + " --shard " + std::to_string(i) +
                                    "/2 -o " + (d.path / "shards").string()));
    REQUIRE(sh.exit_code == 0);
  }
  std::filesystem::path first;
  for (const auto &e : std::filesystem::directory_iterator(d.path / "shards"))
    if (e.path().filename().string().find("shard-1") != std::string::npos) first = e.path();
  REQUIRE_FALSE(first.empty());
  d.write(std::filesystem::relative(first / "run.json", d.path).string(), nested(1000000));
  auto m = run_cmd(evalgraph_cmd("merge " + (d.path / "shards").string() + "/* -o " + (d.path / "merged").string()));
  INFO(m.output.substr(0, 600));
  CHECK((m.exit_code == 2 || m.exit_code == 3));
  CHECK_THAT(m.output, Catch::Contains("run.json"));
  no_library_words(m.output);
}

TEST_CASE("yaml guard: depth is measured through flow, block and compact collections, not through text",
          "[hostile][yaml]") {
  using evalgraph::yaml_too_deep;
  // Brackets in quoted strings, block scalars, plain scalars and comments are text, not nesting.
  std::string text = "a: \"" + std::string(500, '[') + "\"\nb: '" + std::string(500, '{') + "'\nc: |\n  " +
                     std::string(500, '[') + "\n  more [[[[\nd: plain [[[ text\ne: 1 # [[[[[[[[\n";
  CHECK_FALSE(yaml_too_deep(text, "t.yaml").has_value());
  CHECK_FALSE(yaml_too_deep("x: " + std::string(60, '[') + std::string(60, ']') + "\n", "t.yaml").has_value());
  auto flow = yaml_too_deep("a: 1\nx: " + std::string(70, '[') + std::string(70, ']') + "\n", "t.yaml");
  REQUIRE(flow.has_value());
  CHECK(flow->line == 2);
  CHECK(flow->column == 67);  // x at level 1, 'x: ' then the 64th '['
  std::string dashes;
  for (int i = 0; i < 70; ++i) dashes += "- ";
  CHECK(yaml_too_deep(dashes + "x\n", "t.yaml").has_value());
  std::string maps;
  for (int i = 0; i < 70; ++i) maps += std::string(static_cast<std::size_t>(i), ' ') + "k:\n";
  auto m = yaml_too_deep(maps, "t.yaml");
  REQUIRE(m.has_value());
  CHECK(m->line == 65);
  // A flow collection over several lines keeps counting.
  CHECK(yaml_too_deep("x: [\n" + std::string(70, '[') + "\n" + std::string(71, ']') + "\n", "t.yaml").has_value());
}

TEST_CASE("yaml guard: the --config-dir reader refuses deep YAML and aliases that expand too far", "[hostile][yaml][cli]") {
  TempDir d;
  std::filesystem::copy(std::string(REPO_DIR) + "/pipelines/chatbot", d.path / "project",
                        std::filesystem::copy_options::recursive);
  const auto cfg = d.path / "project" / "config";
  d.write("project/config/llm_tasks.yaml", "deep: " + nested(100000) + "\n");
  auto r = run_cmd(evalgraph_cmd("run --config-dir " + cfg.string()));
  INFO(r.output.substr(0, 1000));
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Catch::Contains("llm_tasks.yaml:1:") && Catch::Contains("nests lists and mappings deeper than 64 "
                                                                                "levels"));
  std::string bl = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i < 8; ++i)
    bl += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [*a" + std::to_string(i - 1) + ", *a" +
          std::to_string(i - 1) + ", *a" + std::to_string(i - 1) + ", *a" + std::to_string(i - 1) + ", *a" +
          std::to_string(i - 1) + ", *a" + std::to_string(i - 1) + ", *a" + std::to_string(i - 1) + ", *a" +
          std::to_string(i - 1) + ", *a" + std::to_string(i - 1) + ", *a" + std::to_string(i - 1) + "]\n";
  d.write("project/config/llm_tasks.yaml", bl);
  auto b = run_cmd(evalgraph_cmd("run --config-dir " + cfg.string()));
  INFO(b.output.substr(0, 1000));
  CHECK(b.exit_code == 2);
  CHECK_THAT(b.output, Catch::Contains("llm_tasks.yaml:") && Catch::Contains("stands for more than 100000 values"));
}

TEST_CASE("parse_bounded: nesting, numbers and syntax in its own words, never a throw", "[hostile][sdk]") {
  nlohmann::json j;
  std::string why;
  CHECK(evalgraph::parse_bounded(R"({"a":[1,{"b":null}]})", j, 3, &why));
  CHECK(j["a"][1].contains("b"));
  CHECK_FALSE(evalgraph::parse_bounded(R"({"a":[1,{"b":null}]})", j, 2, &why));
  CHECK(why == "nested deeper than 2 levels");
  CHECK(j.is_null());
  CHECK_FALSE(evalgraph::parse_bounded(nested(1000000), j, 64, &why));
  CHECK(why == "nested deeper than 64 levels");
  CHECK_FALSE(evalgraph::parse_bounded("[1e999999]", j, 64, &why));
  CHECK_THAT(why, Catch::StartsWith("a number beyond the range of a double (1e999999)"));
  CHECK_FALSE(evalgraph::parse_bounded("{\"a\" 1}", j, 64, &why));
  CHECK_THAT(why, Catch::StartsWith("not valid JSON at byte"));
  CHECK_FALSE(evalgraph::parse_bounded("[1,", j, 64, &why));
  CHECK_THAT(why, !Catch::Contains("json.exception"));
  using namespace std::string_literals;
  using namespace std::string_view_literals;
  // nlohmann stops at a NUL byte as if the input ended there; what follows must not be ignored (fuzz_sdk_input)
  CHECK_FALSE(evalgraph::parse_bounded("{\"a\": 1}\0 {\"b\": 2}"s, j, 64, &why));
  CHECK(why == "not valid JSON at byte 8: a NUL byte after the value");
  CHECK(j.is_null());
  CHECK_FALSE(evalgraph::parse_bounded("{\"a\": \"x\0y\"}"s, j, 64, &why));
  CHECK_THAT(why, Catch::StartsWith("not valid JSON at byte 8"));
  // the SDK's record reader refuses it too
  CHECK_THROWS_AS(evalgraph::Record("{\"answer\": \"p\"}\0 junk"sv, "n", {"answer"}), evalgraph::InputError);
}

TEST_CASE("raw checker: a million levels are scanned without recursion, refused or reported", "[hostile][raw_json]") {
  const std::string deep = nested(1000000);
  CHECK_FALSE(evalgraph::rawjson::valid(deep));  // beyond kMaxDepth
  CHECK(evalgraph::rawjson::valid(nested(512)));
  CHECK_FALSE(evalgraph::rawjson::valid(nested(513)));
  evalgraph::rawjson::CheckResult res;
  evalgraph::rawjson::CheckOptions opt;
  opt.max_depth = 64;
  evalgraph::rawjson::check(deep, opt, res, nullptr);
  CHECK(res.error.fault == evalgraph::rawjson::Fault::none);  // well-formed ...
  REQUIRE(res.limit_faults == 1);                           // ... and over the limit once
  CHECK(res.limits[0].fault == evalgraph::rawjson::Fault::depth);
  CHECK(res.limits[0].offset == 64);
  evalgraph::rawjson::check(deep.substr(0, deep.size() - 1), opt, res, nullptr);
  CHECK(res.error.fault == evalgraph::rawjson::Fault::end_of_text);
  CHECK(res.error.what == "the text ends inside an array (a ']' is missing)");
}

TEST_CASE("create-dataset: an answer of 100,000 brackets is read in bounded time", "[hostile][chatbot]") {
  auto t0 = std::chrono::steady_clock::now();
  auto items = evalgraph::chatbot::parse_example_list(nested(100000));
  auto mixed = evalgraph::chatbot::parse_example_list(std::string(20000, '[') + "\"a\", x" + std::string(20000, ']'));
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  CHECK(items.empty());
  CHECK(secs < 5);  // every '[' against every ']' was hours
  CHECK(evalgraph::chatbot::parse_example_list("Here: [\"one\", \"two\"] done") ==
        std::vector<std::string>{"one", "two"});
  (void)mixed;
}

TEST_CASE("hostile: records over limits resume like any record", "[hostile][cli][resume]") {
  TempDir d;
  std::string data;
  for (int i = 0; i < 200; ++i) {
    if (i % 50 == 7) data += "{\"text\":\"deep " + std::to_string(i) + "\",\"x\":" + nested(1000) + "}\n";
    else if (i % 50 == 19) data += "{\"text\":\"big " + std::to_string(i) + "\",\"x\":1e999999}\n";
    else if (i % 50 == 33) data += "{\"text\":\"dup\",\"text\":\"dup " + std::to_string(i) + "\"}\n";
    else data += "{\"text\":\"row " + std::to_string(i) + "\"}\n";
  }
  d.write("data.jsonl", data);
  write_clean_and_killed(d, [](const std::string &dir) { return slow_pipeline(10, dir); });
  auto clean = run_outcome(d, "clean.yaml", "-j 2 --chunk-size 10");
  std::set<std::size_t> failed;
  for (std::size_t i = 0; i < 200; ++i)
    if (i % 50 == 7 || i % 50 == 19 || i % 50 == 33) failed.insert(i);
  check_failed_alone(clean, 200, failed);
  const auto &recs = clean.records;
  const std::filesystem::path clean_dir = clean.dir;
  CHECK_THAT(error_of(recs[7], "s"), Catch::Contains("data.jsonl:8:"));
  CHECK_THAT(error_of(recs[19], "s"), Catch::Contains("1e999999"));
  CHECK_THAT(error_of(recs[33], "s"), Catch::Contains("field 'text' appears twice"));
  CHECK(recs[8]["s"]["text"] == "ROW 8");

  std::filesystem::path run_dir = start_and_kill(d, "run -q -j 2 --chunk-size 10 " + (d.path / "killed.yaml").string(),
                                                 d.path / "killed");
  auto resumed = run_cmd(evalgraph_cmd("run -q --resume " + run_dir.string()));
  INFO(resumed.output);
  CHECK(resumed.exit_code == 1);
  CHECK(read_file(run_dir / "out.jsonl") == read_file(clean_dir / "out.jsonl"));
  CHECK(read_run_json(run_dir)["failed_records"] == 12);
}
