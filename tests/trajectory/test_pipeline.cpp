// agent.trajectory through the evalgraph binary: a JSONL data set whose records carry tool_calls (as the trace
// reader writes them), one record per case; and pipelines that misconfigure the node, refused with exit 2 and
// the place in the pipeline file.
#include <catch2/catch.hpp>
#include <map>
#include <string>

#include "test_support.h"

namespace {

using nlohmann::json;
using testsupport::TempDir;

// One record per line: what the agent did (tool_calls) and, for one record, what was expected of it.
const char *kCallsJsonl =
    R"({"id": "a", "tool_calls": [{"name": "search", "arguments": "{\"q\": \"weather in Berlin\"}", "result": "12 C", "error": null, "start": "2026-01-01T10:00:00Z", "duration_ms": 120}, {"name": "fetch", "arguments": {"url": "https://example.org"}}, {"name": "answer", "arguments": {}}]}
{"id": "b", "tool_calls": [{"name": "lookup", "arguments": {"id": 1}}, {"name": "answer", "arguments": {}}]}
{"id": "c", "tool_calls": [{"name": "search", "arguments": {"q": "weather"}}, {"name": "delete_user", "arguments": {"id": 7}}, {"name": "answer"}]}
{"id": "d", "tool_calls": "search, answer"}
{"id": "e", "tool_calls": [{"name": "translate", "arguments": {"to": "de"}}], "expected": [{"name": "translate", "arguments": "{\"to\": \"de\"}"}]}
{"id": "f", "tool_calls": [{"name": "search", "arguments": {"q": "weather"}}, {"name": "search", "arguments": {"q": "weather"}}, {"name": "lookup"}, {"name": "lookup"}, {"name": "answer"}]}
)";

// The pipeline with `with` as the node's parameters (YAML lines, indented by six spaces).
std::string pipeline(const std::string &with) {
  return "name: trajectory-test\n"
         "dataset: {path: calls.jsonl, format: jsonl}\n"
         "nodes:\n"
         "  - id: traj\n"
         "    uses: agent.trajectory\n"
         "    inputs: {tool_calls: tool_calls}\n"
         "    with:\n" +
         with +
         "sinks:\n"
         "  - uses: sink.jsonl\n"
         "    with: {file: records.jsonl}\n"
         "output: {dir: out}\n";
}

const char *kWith =
    "      order: in_order\n"
    "      expected:\n"
    "        - [{name: search, arguments: {q: {$regex: weather}}}, {name: answer}]\n"
    "        - [{name: lookup}, {name: answer}]\n"
    "      forbidden: [delete_user]\n"
    "      max_steps: 4\n";

std::map<std::string, json> records_by_id(const testsupport::fs::path &dir) {
  std::map<std::string, json> out;
  for (const auto &r : testsupport::read_jsonl(dir / "records.jsonl")) out[r["id"].get<std::string>()] = r;
  return out;
}

}  // namespace

TEST_CASE("end to end: a JSONL data set with tool_calls through agent.trajectory") {
  TempDir d;
  d.write("calls.jsonl", kCallsJsonl);
  d.write("p.yaml", pipeline(kWith));
  const auto run = testsupport::run_pipeline(d, "p.yaml", "--no-report");
  INFO(run.output);
  CHECK(run.exit_code == 1);  // record d failed: its tool_calls are no list
  REQUIRE(!run.dir.empty());
  auto recs = records_by_id(run.dir);
  REQUIRE(recs.size() == 6);

  // a: search (arguments as JSON text), fetch, answer: the first alternative holds in order; 2 of 3 calls expected.
  const json &a = recs["a"]["traj"];
  CHECK(a["passed"] == true);
  CHECK(a["matched_alternative"] == 0);
  CHECK(a["precision"].get<double>() == Approx(2.0 / 3));
  CHECK(a["recall"] == 1.0);
  CHECK(a["steps"] == 3);
  CHECK(a["parameters"] == json::parse(R"({"order": "in_order", "match": "equal", "forbidden": ["delete_user"],
      "max_steps": 4, "allow_repeats": true, "expected_source": "parameter", "alternatives": 2})"));

  // b: lookup, answer: the second alternative.
  CHECK(recs["b"]["traj"]["passed"] == true);
  CHECK(recs["b"]["traj"]["matched_alternative"] == 1);

  // c: the order holds, but delete_user is forbidden.
  const json &c = recs["c"]["traj"];
  CHECK(c["passed"] == false);
  CHECK(c["first_mismatch"].is_null());
  CHECK(c["failures"] ==
        json::parse(R"([{"check": "forbidden", "message": "call 1 'delete_user' is a forbidden tool"}])"));

  // d: a text where the calls should be: this record fails, with the reason, and the others run.
  CHECK_FALSE(recs["d"].contains("traj"));
  CHECK_THAT(recs["d"]["_errors"]["traj"].get<std::string>(),
             Catch::Contains("agent.trajectory: port tool_calls must be a JSON array of calls") &&
                 Catch::Contains("got string"));

  // e: the record's own expected calls (port expected, the dataset's same-named field) win over the parameter.
  const json &e = recs["e"]["traj"];
  CHECK(e["passed"] == true);
  CHECK(e["parameters"]["expected_source"] == "port");
  CHECK(e["parameters"]["alternatives"] == 1);

  // f: five calls, max_steps 4; the repeated search is reported (allow_repeats is true), not failed.
  const json &f = recs["f"]["traj"];
  CHECK(f["passed"] == false);
  CHECK(f["failures"].size() == 1);
  CHECK(f["failures"][0]["check"] == "max_steps");
  CHECK(f["redundant_calls"]["count"] == 2);
  CHECK(f["redundant_calls"]["calls"][0] == json::parse(R"({"index": 1, "name": "search", "same_as": 0})"));
}

TEST_CASE("end to end: a misconfigured node is refused before any record moves, with its place") {
  TempDir d;
  d.write("calls.jsonl", kCallsJsonl);
  // Line 8 is the first line of `with:`'s body.
  d.write("order.yaml", pipeline("      order: sideways\n"));
  testsupport::check_refused(d, "order.yaml", {"order.yaml:8:14: error:", "sideways", "in_order"});
  d.write("list.yaml", pipeline("      expected: {name: search}\n"));
  testsupport::check_refused(d, "list.yaml", {"list.yaml:8:17: error:", "expected array or null, got object"});
  d.write("call.yaml", pipeline("      expected: [{nmae: search}]\n"));
  testsupport::check_refused(d, "call.yaml", {"call.yaml:8:", "nmae"});
  d.write("key.yaml", pipeline("      orde: exact\n"));
  testsupport::check_refused(d, "key.yaml", {"key.yaml:8:7: error:", "unknown parameter 'orde'"});
  d.write("steps.yaml", pipeline("      max_steps: -1\n"));
  testsupport::check_refused(d, "steps.yaml", {"steps.yaml:8:18: error:", "below the minimum 0"});

  // What a schema cannot say (a regex that does not compile) stops the run when the node is set up: exit 2, at
  // the node's `uses:`.
  d.write("regex.yaml", pipeline("      expected: [{name: search, arguments: {q: {$regex: \"(\"}}}]\n"));
  testsupport::check_run(d, "regex.yaml", 2,
                         {"regex.yaml:5:11", "could not be set up", "expected.0.arguments.q: invalid regex \"(\""},
                         "--no-report");
}
