// The command line as a user meets it: exit codes, messages, DOT, the plugin list.
#include <catch2/catch.hpp>

#include <algorithm>
#include <functional>
#include <sstream>

#include <chrono>
#include <thread>

#include "test_plugin_pipelines.h"
#include "test_support.h"

using namespace testsupport;
using nlohmann::json;

TEST_CASE("validate: a broken pipeline exits 2 with file:line:column and no crash", "[cli]") {
  TempDir d;
  d.write("data.csv", "text,n\nhello,1\n");
  d.write("broken.yaml", "name: t\ndataset: {path: data.csv}\nnodes:\n  - id: a\n    uses: test.uper\n"
                         "  - id: b\n    uses: test.upper\n    inputs: {text: nope}\n");
  check_refused(d, "broken.yaml", {"broken.yaml:5:11: error: unknown node type 'test.uper'",
                                   "broken.yaml:8:14: error: port 'text' of node 'b' reads field 'nope'",
                                   "2 problems found; nothing was run"});
}

TEST_CASE("run: exit 0 on success, 1 when records failed, outputs in a timestamped folder", "[cli]") {
  TempDir d;
  d.write("data.csv", "text,n\nhello,1\n\"quoted, with comma\",2\n");
  d.write("ok.yaml", "name: demo\ndataset: {path: data.csv}\nnodes:\n  - id: up\n    uses: test.upper\n"
                     "sinks:\n  - uses: sink.jsonl\n    with: {file: records.jsonl}\n  - uses: sink.csv\n    with: {file: records.csv}\n"
                     "output: {dir: out}\n");
  const std::filesystem::path run_dir = last_line(check_run(d, "ok.yaml", 0, {}, "-j 2").output);
  REQUIRE(std::filesystem::is_directory(run_dir));
  CHECK(run_dir.parent_path() == d.path / "out");
  CHECK_THAT(run_dir.filename().string(), Catch::StartsWith("demo__"));
  auto recs = read_jsonl(run_dir / "records.jsonl");
  REQUIRE(recs.size() == 2);
  CHECK(recs[1]["up"]["upper"] == "QUOTED, WITH COMMA");
  CHECK_THAT(read_file(run_dir / "records.csv"), Catch::Contains("up.upper"));
  auto summary = read_run_json(run_dir);
  CHECK(summary["records"] == 2);
  CHECK(summary["nodes"]["up"]["plugin"] == "test-behaviours");

  d.write("bad.yaml", "name: demo\ndataset: {path: data.csv}\nnodes:\n  - id: f\n    uses: test.flaky\n"
                      "    inputs: {text: n}\noutput: {dir: out}\n");
  d.write("data.csv", "text,n\nhello,fail me\nworld,fine\n");
  check_run(d, "bad.yaml", 1,
            {"node f: 1 ok, 1 failed, 0 skipped; first error: record 1: error: flaky failed on 'fail me'"});
}

TEST_CASE("run: a broken CSV row is reported with its line", "[cli]") {
  TempDir d;
  d.write("data.csv", "text,n\nfine,1\n\"open quote,2\n");
  d.write("p.yaml", "name: demo\ndataset: {path: data.csv}\nnodes:\n  - id: up\n    uses: test.upper\noutput: {dir: out}\n");
  check_run(d, "p.yaml", 3, {"data.csv:3:"});
}

TEST_CASE("graph prints Graphviz DOT with the field edges", "[cli]") {
  TempDir d;
  d.write("data.jsonl", "{\"text\":\"a\",\"other\":\"b\"}\n");
  d.write("p.yaml", "name: g\ndataset: {path: data.jsonl}\nnodes:\n  - id: up\n    uses: test.upper\n"
                    "  - id: j\n    uses: test.concat\n    inputs: {a: up.upper, b: other}\n    needs: [up]\n"
                    "sinks:\n  - uses: sink.jsonl\n");
  auto r = run_cmd(evalgraph_cmd("graph " + (d.path / "p.yaml").string()));
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.output, Catch::StartsWith("digraph \"g\" {"));
  CHECK_THAT(r.output, Catch::Contains("\"up\" -> \"j\" [label=\"needs, upper\"];"));
  CHECK_THAT(r.output, Catch::Contains("\"dataset\" -> \"j\" [label=\"other\"];"));
  CHECK_THAT(r.output, Catch::Contains("\"j\" -> \"sink:sink.jsonl\";"));
}

TEST_CASE("plugins lists node types as a table and as JSON, --version, unknown commands", "[cli]") {
  auto t = run_cmd(evalgraph_cmd("plugins"));
  CHECK(t.exit_code == 0);
  CHECK_THAT(t.output, Catch::Contains("test.passthrough"));
  auto j = run_cmd(evalgraph_cmd("plugins --json"));
  REQUIRE(j.exit_code == 0);
  auto doc = json::parse(j.output);
  bool found = false;
  for (const auto &p : doc["plugins"])
    for (const auto &nt : p["node_types"])
      if (nt["name"] == "test.params") {
        found = true;
        CHECK(nt["kind"] == "operator");
        CHECK(p["abi"] == "1.3");
        CHECK(nt["params_schema"]["properties"]["mode"]["enum"][0] == "fast");
      }
  CHECK(found);
  auto v = run_cmd(std::string(EVALGRAPH_EXE) + " --version");
  CHECK(v.exit_code == 0);
  CHECK_THAT(v.output, Catch::StartsWith("evalgraph 0.1.0 (plugin ABI 1.3)"));
  auto u = run_cmd(std::string(EVALGRAPH_EXE) + " rn x.yaml");
  CHECK(u.exit_code == 2);
  CHECK_THAT(u.output, Catch::Contains("unknown command 'rn' (did you mean 'run'?)"));
}

TEST_CASE("a usage error shows the usage of its command, not every command", "[cli]") {
  // An option without its value: the error, then compare's usage lines and where the rest is.
  auto g = run_cmd(std::string(EVALGRAPH_EXE) + " compare a b --fail-if-worse");
  CHECK(g.exit_code == 2);
  CHECK_THAT(g.output, Catch::Contains("the required argument for option '--fail-if-worse' is missing"));
  CHECK_THAT(g.output, Catch::Contains("evalgraph compare RUN_A RUN_B --fail-if-worse NODE.FIELD"));
  CHECK_THAT(g.output, Catch::Contains("evalgraph --help: every command and option"));
  CHECK_THAT(g.output, !Catch::Contains("evalgraph merge SHARD_FOLDER"));
  // A pipeline command without its file: run's three forms.
  auto r = run_cmd(std::string(EVALGRAPH_EXE) + " validate");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Catch::Contains("evalgraph validate: give exactly one pipeline file"));
  CHECK_THAT(r.output, Catch::Contains("evalgraph validate PIPELINE.yaml"));
  CHECK_THAT(r.output, !Catch::Contains("evalgraph estimate PIPELINE.yaml"));
  // An unknown option before any command: the whole usage, as before.
  auto w = run_cmd(std::string(EVALGRAPH_EXE) + " --no-such-option");
  CHECK(w.exit_code == 2);
  CHECK_THAT(w.output, Catch::Contains("evalgraph merge SHARD_FOLDER"));
}

TEST_CASE("plugins: broken libraries on the search path are named, the rest still work", "[cli]") {
  auto r = run_cmd(std::string("CI=true EVALGRAPH_PLUGIN_PATH=") + BROKEN_DIR + " " + evalgraph_cmd("plugins"));
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.output, Catch::Contains("wrong_magic.so: wrong magic number"));
  CHECK_THAT(r.output, Catch::Contains("test.passthrough"));
}

TEST_CASE("a run killed with SIGKILL resumes to the same outputs as an uninterrupted run", "[cli][resume]") {
  TempDir d;
  std::string data = "text,n\n";
  for (int i = 0; i < 300; ++i) data += "row " + std::to_string(i) + "," + std::to_string(i) + "\n";
  d.write("data.csv", data);
  write_clean_and_killed(d, [](const std::string &dir) {
    return "name: r\ndataset: {path: data.csv}\nnodes:\n  - id: s\n    uses: test.slow\n    with: {ms: 10}\n"
           "  - id: f\n    uses: test.flaky\n    inputs: {text: n}\n"
           "sinks:\n  - uses: sink.jsonl\n    with: {file: out.jsonl}\n  - uses: sink.csv\n    with: {file: out.csv}\n"
           "output: {dir: " + dir + "}\n";
  });
  auto clean = run_cmd(evalgraph_cmd("run -q -j 2 --chunk-size 10 " + (d.path / "clean.yaml").string()));
  REQUIRE(clean.exit_code == 0);
  std::filesystem::path clean_dir = clean.output.substr(0, clean.output.size() - 1);

  // Start the same run in the background and kill it hard part-way.
  std::filesystem::path run_dir = start_and_kill(d, "run -q -j 2 --chunk-size 10 " + (d.path / "killed.yaml").string(), d.path / "killed");
  REQUIRE(std::filesystem::exists(run_dir / "progress" / "journal.jsonl"));
  CHECK_FALSE(std::filesystem::exists(run_dir / "out.jsonl"));  // never half-written under its final name

  auto resumed = run_cmd(evalgraph_cmd("run --resume " + run_dir.string()));
  INFO(resumed.output);
  REQUIRE(resumed.exit_code == 0);
  CHECK(read_file(run_dir / "out.jsonl") == read_file(clean_dir / "out.jsonl"));
  CHECK(read_file(run_dir / "out.csv") == read_file(clean_dir / "out.csv"));
  auto summary = read_run_json(run_dir);
  CHECK(summary["records"] == 300);
  CHECK(summary["resumed_records"].get<int>() > 0);
  CHECK(summary["resumed_records"].get<int>() < 300);
  CHECK(summary["nodes"] == read_run_json(clean_dir)["nodes"]);
  CHECK_FALSE(std::filesystem::exists(run_dir / "progress"));  // finished: nothing left to resume

  auto again = run_cmd(evalgraph_cmd("run --resume " + run_dir.string()));
  CHECK(again.exit_code == 2);
  CHECK_THAT(again.output, Catch::Contains("cannot resume: this run already finished"));
}

TEST_CASE("resume rebuilds records from the dataset: JSONL as written, replications, sequences, replaced fields",
          "[cli][resume]") {
  // The journal stores only what a run added to each dataset record; a record whose dataset field a node
  // replaced (node id == column name) is stored whole. Both must come back byte for byte.
  TempDir d;
  std::string data;
  for (int i = 0; i < 120; ++i)
    data += "{ \"conv\": \"c" + std::to_string(i / 4) + "\", \"turn\": " + std::to_string(3 - i % 4) + ", \"text\":\"t\\u00e9 " +
            std::to_string(i) + "\"" + (i % 3 == 0 ? ", \"s\": {\"was\": \"here\"}" : "") + " }\n";
  d.write("data.jsonl", data);
  write_clean_and_killed(d, [](const std::string &dir) {
    return "name: r\ndataset: {path: data.jsonl}\nreplications: 2\nnodes:\n"
           "  - id: s\n    uses: test.slow\n    with: {ms: 5}\n"
           "  - id: q\n    uses: test.seq\n    group_by: conv\n    order_by: turn\n"
           "sinks:\n  - uses: sink.jsonl\n    with: {file: out.jsonl}\n"
           "output: {dir: " + dir + "}\n";
  });
  auto clean = run_cmd(evalgraph_cmd("run -q -j 2 --chunk-size 8 " + (d.path / "clean.yaml").string()));
  INFO(clean.output);
  REQUIRE(clean.exit_code == 0);
  std::filesystem::path clean_dir = clean.output.substr(0, clean.output.size() - 1);
  std::filesystem::path run_dir = start_and_kill(d, "run -q -j 2 --chunk-size 8 " + (d.path / "killed.yaml").string(), d.path / "killed");
  std::string journal = read_file(run_dir / "progress" / "journal.jsonl");
  CHECK_THAT(journal, Catch::Contains("\nD") || Catch::StartsWith("D"));  // records kept as their additions
  CHECK_THAT(journal, Catch::Contains("\nF") || Catch::StartsWith("F"));  // and whole where 's' was replaced

  auto resumed = run_cmd(evalgraph_cmd("run --resume " + run_dir.string()));
  INFO(resumed.output);
  REQUIRE(resumed.exit_code == 0);
  CHECK(read_file(run_dir / "out.jsonl") == read_file(clean_dir / "out.jsonl"));
  auto summary = read_run_json(run_dir);
  CHECK(summary["records"] == 240);
  CHECK(summary["resumed_records"].get<int>() > 0);
}

TEST_CASE("a journal of whole records (its format before the delta journal) still resumes", "[cli][resume]") {
  TempDir d;
  std::vector<std::string> lines;
  std::string data;
  for (int i = 0; i < 200; ++i) {
    lines.push_back("{\"text\":\"row " + std::to_string(i) + "\"}");
    data += lines.back() + "\n";
  }
  d.write("data.jsonl", data);
  write_clean_and_killed(d, [](const std::string &dir) { return slow_pipeline(5, dir); });
  auto clean = run_cmd(evalgraph_cmd("run -q -j 2 --chunk-size 10 " + (d.path / "clean.yaml").string()));
  REQUIRE(clean.exit_code == 0);
  std::filesystem::path clean_dir = clean.output.substr(0, clean.output.size() - 1);
  std::filesystem::path run_dir = start_and_kill(d, "run -q -j 2 --chunk-size 10 " + (d.path / "killed.yaml").string(), d.path / "killed");
  // Rewrite each "D<index>\t{added}" line as the whole record, the older format.
  std::istringstream in(read_file(run_dir / "progress" / "journal.jsonl"));
  std::string line, old_format;
  int rewritten = 0;
  while (std::getline(in, line)) {
    if (line.rfind('D', 0) == 0) {
      std::size_t tab = line.find('\t');
      const std::string &base = lines.at(std::stoul(line.substr(1, tab - 1)));
      line = base.substr(0, base.size() - 1) + "," + line.substr(tab + 2);
      ++rewritten;
    }
    old_format += line + "\n";
  }
  REQUIRE(rewritten > 0);
  d.write("killed/" + run_dir.filename().string() + "/progress/journal.jsonl", old_format);
  std::string journal = read_file(run_dir / "progress" / "journal.jsonl");
  REQUIRE(journal == old_format);
  REQUIRE(journal.find("\nD") == std::string::npos);
  auto resumed = run_cmd(evalgraph_cmd("run --resume " + run_dir.string()));
  INFO(resumed.output);
  REQUIRE(resumed.exit_code == 0);
  CHECK(read_file(run_dir / "out.jsonl") == read_file(clean_dir / "out.jsonl"));
}

TEST_CASE("Ctrl-C stops gracefully, says how to resume, and the resumed run is complete", "[cli][resume]") {
  TempDir d;
  d.write("data.csv", text_csv(400, [](int i) { return "row " + std::to_string(i); }));
  d.write("p.yaml", "name: c\ndataset: {path: data.csv}\nnodes:\n  - id: s\n    uses: test.slow\n    with: {ms: 10}\n"
                    "sinks:\n  - uses: sink.jsonl\n    with: {file: out.jsonl}\noutput: {dir: out}\n");
  // One shell: start the run, wait until it has journaled a chunk, send SIGINT, report its exit code.
  std::string script = evalgraph_cmd("run -j 2 --chunk-size 10 " + (d.path / "p.yaml").string()) + " > " +
                       (d.path / "log").string() + " 2>&1 & pid=$!; for i in $(seq 1 1000); do "
                       "grep -qs _chunk_end " + (d.path / "out").string() + "/*/progress/journal.jsonl && break; sleep 0.01; done; "
                       "kill -INT $pid; wait $pid; echo rc=$?";
  auto r = run_cmd("bash -c '" + script + "'");
  CHECK_THAT(r.output, Catch::Contains("rc=130"));
  std::string log = read_file(d.path / "log");
  CHECK_THAT(log, Catch::Contains("stopping after the records in flight"));
  CHECK_THAT(log, Catch::Contains("finish the run with:\n  evalgraph run --resume "));
  std::filesystem::path run_dir;
  for (auto &e : std::filesystem::directory_iterator(d.path / "out")) run_dir = e.path();
  CHECK_FALSE(std::filesystem::exists(run_dir / "out.jsonl"));  // still .partial: the run is not complete
  auto resumed = run_cmd(evalgraph_cmd("run -q --resume " + run_dir.string()));
  REQUIRE(resumed.exit_code == 0);
  auto recs = read_jsonl(run_dir / "out.jsonl");
  REQUIRE(recs.size() == 400);
  for (int i = 0; i < 400; ++i) REQUIRE(recs[i]["s"]["text"] == "ROW " + std::to_string(i));
}

TEST_CASE("plugins --json: every parameter of the bundled plugins has a description and a default or is required", "[cli]") {
  auto j = run_cmd(std::string("CI=true ") + EVALGRAPH_EXE + " plugins --json");
  REQUIRE(j.exit_code == 0);
  auto doc = json::parse(j.output);
  std::size_t types = 0;
  std::function<void(const json &, const std::string &)> check = [&](const json &schema, const std::string &where) {
    if (!schema.is_object()) return;
    const json req = schema.value("required", json::array());
    const json props = schema.value("properties", json::object());
    for (const auto &[k, p] : props.items()) {
      INFO(where << "." << k);
      CHECK(p.contains("description"));
      CHECK((p.contains("default") || std::find(req.begin(), req.end(), k) != req.end()));
      check(p, where + "." + k);
      if (p.contains("items")) check(p["items"], where + "." + k + "[]");
    }
  };
  for (const auto &p : doc["plugins"])
    for (const auto &nt : p["node_types"]) {
      ++types;
      check(nt["params_schema"], nt["name"].get<std::string>());
    }
  CHECK(types >= 25);
}
