// The python node through the CLI, as a user meets it: values both ways, parameters, errors that stay with
// their record, timeouts, print() in run.log, the pipeline checked against the script before any record moves,
// run.json's record of the script, the promptfoo interface, Ctrl-C, and the package from a plain python3.
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdlib>
#include <sstream>
#include <thread>

#include "graph/plan.h"
#include "util/sha256.h"
#include "python_fixture.h"
#include "test_registry.h"

using namespace testsupport;
using nlohmann::json;

namespace {

const char *kLength = R"(import evalgraph

@evalgraph.node(outputs={"ok": bool, "length": int})
def long_enough(answer: str, rid: str = "", *, min_len: int = 10):
    """Whether the answer has at least min_len characters."""
    return {"ok": len(answer) >= min_len, "length": len(answer)}
)";

std::string length_node(const std::string &with_extra = "", const std::string &inputs = "{answer: text}") {
  return "  - id: len\n    uses: python\n    inputs: " + inputs + "\n    with:\n      file: checks.py\n"
         "      function: long_enough\n" + with_extra;
}

}  // namespace

TEST_CASE("python: inputs arrive as Python values and outputs come back as JSON, every type, Unicode", "[python]") {
  TempDir d;
  // One record per JSON type, each value in the field v; the check echoes it and says what Python saw.
  d.write("data.jsonl",
          "{\"v\": \"Grüße, 世界 🌍 e\\u0301\"}\n{\"v\": 42}\n{\"v\": -7}\n{\"v\": 9007199254740993}\n"
          "{\"v\": 18446744073709551615}\n{\"v\": 2.5}\n{\"v\": 1e300}\n{\"v\": true}\n{\"v\": false}\n{\"v\": null}\n"
          "{\"v\": [1, \"zwei\", [3.5, null], {\"k\": false}]}\n{\"v\": {\"a\": {\"b\": [\"ü\"]}, \"\": 0}}\n"
          "{\"v\": \"\\u0000 nul and \\\"quotes\\\" and \\\\ and \\n\"}\n");
  d.write("checks.py", R"(import evalgraph, typing

@evalgraph.node(outputs={"echo": typing.Any, "type": str, "chars": int, "shout": typing.Optional[str]})
def echo(v=None):
    return {"echo": v, "type": type(v).__name__, "chars": len(v) if isinstance(v, str) else -1,
            "shout": v.upper() + " ✓" if isinstance(v, str) else None}
)");
  auto out = pytest::run_node_records(d, pytest::node("e", "echo"), 0);
  auto in = read_jsonl(d.path / "data.jsonl");
  REQUIRE(out.size() == in.size());
  const char *types[] = {"str", "int", "int", "int", "int", "float", "float", "bool", "bool", "NoneType", "list", "dict", "str"};
  for (size_t i = 0; i < in.size(); ++i) {
    INFO("record " << i);
    CHECK(out[i]["e"]["echo"] == in[i]["v"]);
    CHECK(out[i]["e"]["type"] == types[i]);
  }
  // Python counts code points: "Grüße, 世界 🌍 e" and a combining acute = 14.
  CHECK(out[0]["e"]["chars"] == 14);
  CHECK(out[0]["e"]["shout"] == "GRÜSSE, 世界 🌍 E\u0301 ✓");
  CHECK(out[12]["e"]["chars"] == 30);
  CHECK(out[1]["e"]["shout"].is_null());
}

TEST_CASE("python: a result's JSON text is what nlohmann writes, and escaped inputs arrive decoded", "[python]") {
  // The node writes its output straight from the Python values (no JSON tree): floats in their shortest form
  // with nlohmann's exponent style, integers past int64, control characters escaped, keys sorted as std::map
  // sorts them. Each record's line must be exactly what nlohmann's dump() makes of it.
  const char *values[] = {"1e20", "1e-7", "-0.0", "0.1", "5e-324", "1.7976931348623157e308", "123456789.0", "2**63",
                          "2**64 - 1", "-2**63", R"("\x00\x01\x1f\x7f\"\\/é𝄞\t\n\r\b\f")",
                          R"({"b": 1, "a": {"d": 2, "c": 3}, "é": 0, "Z": 0, "": [(1, 2.5), [], {}]})", "True", "None", "''"};
  std::string data, table = "VALUES = [";
  const size_t n = sizeof values / sizeof values[0];
  for (size_t i = 0; i < n; ++i) {
    data += "{\"i\":" + std::to_string(i) + "}\n";
    table += std::string(values[i]) + ",\n";
  }
  TempDir d;
  d.write("data.jsonl", data);
  d.write("v.py", table + "]\n\nimport evalgraph, typing\n\n@evalgraph.node(outputs={\"v\": typing.Any})\n"
                          "def value(i: int):\n    return {\"v\": VALUES[i]}\n");
  auto r = pytest::run_node(d, pytest::node("e", "value", "", "v.py"));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  std::istringstream lines(read_file(r.dir / "out.jsonl"));
  std::string line;
  size_t i = 0;
  for (; std::getline(lines, line); ++i) {
    INFO(line);
    json j = json::parse(line);
    CHECK(line == "{\"i\":" + std::to_string(i) + ",\"e\":" + j["e"].dump() + "}");
  }
  CHECK(i == n);
  auto out = read_jsonl(r.dir / "out.jsonl");
  CHECK(out[0]["e"]["v"] == 1e20);
  CHECK(out[7]["e"]["v"] == 9223372036854775808ULL);
  CHECK(out[10]["e"]["v"] == std::string("\x00\x01\x1f\x7f\"\\/é𝄞\t\n\r\b\f", 18));
  CHECK(out[11]["e"]["v"]["a"] == json({{"c", 3}, {"d", 2}}));

  // Escapes in the input: a surrogate pair, \/, \u00e9, a quote; keys of nested objects escaped too.
  d.write("data.jsonl", R"({"v": "\ud83c\udf0d \/ caf\u00e9 \"q\"", "w": {"k\u00e9y": [1, -0, 2.50, 1E2]}})" "\n");
  d.write("echo.py", "import evalgraph, typing\n\n@evalgraph.node(outputs={\"v\": str, \"w\": dict})\n"
                     "def echo(v: str, w: dict):\n    return {\"v\": v, \"w\": w}\n");
  d.write("q.yaml", "name: q\ndataset: {path: data.jsonl, format: jsonl}\nnodes:\n  - id: e\n    uses: python\n"
                    "    inputs: {v: v, w: w}\n    with: {file: echo.py, function: echo}\n"
                    "sinks:\n  - uses: sink.jsonl\n    with: {file: out.jsonl}\noutput: {dir: out2}\n");
  auto q = run_pipeline(d, "q.yaml");
  INFO(q.output);
  REQUIRE(q.exit_code == 0);
  auto e = read_jsonl(q.dir / "out.jsonl").at(0)["e"];
  CHECK(e["v"] == "🌍 / café \"q\"");
  CHECK(e["w"] == json::parse(R"({"kéy": [1, 0, 2.5, 100.0]})"));
}

TEST_CASE("python: `with` keys are keyword arguments, defaults apply, inputs are named as in `inputs:`", "[python]") {
  TempDir d;
  d.write("data.jsonl", "{\"text\": \"short\", \"id\": \"a\"}\n{\"text\": \"a rather longer answer\", \"id\": \"b\"}\n");
  d.write("checks.py", kLength);
  d.write("default.yaml", pytest::pipeline(length_node()));
  d.write("strict.yaml", pytest::pipeline(length_node("      min_len: 22\n", "{answer: text, rid: id}")));
  auto a = run_pipeline(d, "default.yaml");
  INFO(a.output);
  REQUIRE(a.exit_code == 0);
  auto ra = read_jsonl(a.dir / "out.jsonl");
  CHECK(ra[0]["len"] == json({{"ok", false}, {"length", 5}}));
  CHECK(ra[1]["len"] == json({{"ok", true}, {"length", 22}}));
  auto b = run_pipeline(d, "strict.yaml");
  REQUIRE(b.exit_code == 0);
  auto rb = read_jsonl(b.dir / "out.jsonl");
  CHECK(rb[1]["len"]["ok"] == true);
  std::filesystem::remove_all(d.path / "out");
  d.write("strict.yaml", pytest::pipeline(length_node("      min_len: 23\n", "{answer: text, rid: id}")));
  auto c = run_pipeline(d, "strict.yaml");
  CHECK(read_jsonl(c.dir / "out.jsonl")[1]["len"]["ok"] == false);

  // run.json records the script (path, SHA-256) and the function's signature, defaults, hints and docstring.
  auto info = read_run_json(c.dir);
  const json &desc = info["nodes"]["len"]["described"];
  INFO(desc.dump(2));
  CHECK(desc["script"] == "checks.py");
  CHECK(desc["sha256"] == evalgraph::sha256_hex(kLength));
  CHECK(desc["function"] == "long_enough");
  CHECK(desc["doc"] == "Whether the answer has at least min_len characters.");
  CHECK(desc["signature"] == "long_enough(answer: str, rid: str = '', *, min_len: int = 10)");
  CHECK(desc["outputs"] == json({{"ok", "bool"}, {"length", "int"}}));
  REQUIRE(desc["params"].size() == 3);
  CHECK(desc["params"][0] == json({{"name", "answer"}, {"annotation", "str"}, {"kind", "input"}, {"required", true}}));
  CHECK(desc["params"][2]["default"] == 10);
  CHECK(desc["params"][2]["kind"] == "parameter");
  CHECK(info["nodes"]["len"]["with"]["min_len"] == 23);
}

TEST_CASE("python: describe tells the engine each output's type and lower_is_better (ABI 1.3)", "[python][validate]") {
  TempDir d;
  d.write("data.jsonl", "{\"text\": \"an answer\"}\n");
  d.write("m.py", R"(import typing
from typing import Optional
import evalgraph

@evalgraph.node(outputs={"ok": bool, "length": int, "error_rate": float, "latency_s": Optional[float],
                         "size": int | float, "tags": list[str], "meta": dict, "note": str, "extra": typing.Any},
                lower_is_better=["error_rate", "latency_s"])
def measure(text: str):
    return {"ok": True, "length": len(text), "error_rate": 0.5, "latency_s": None, "size": 1, "tags": [],
            "meta": {}, "note": "", "extra": None}
)");
  d.write("p.yaml", pytest::pipeline(pytest::node("m", "measure", "", "m.py")));
  // Through the engine's own planning (what `evalgraph validate` and `run` do): the registry keeps what
  // describe() answered beside the node's type.
  auto p = evalgraph::load_pipeline(d.path / "p.yaml");
  evalgraph::Plan plan = evalgraph::build_plan(p, registry(), evalgraph::read_dataset_columns(p));
  REQUIRE(plan.nodes.size() == 1);
  const evalgraph::NodeTypeInfo &t = *plan.nodes[0].type;
  INFO(t.outputs.dump(2));
  CHECK(t.outputs == json::parse(R"({"ok": {"type": "boolean"}, "length": {"type": "integer"},
    "error_rate": {"type": "number", "better": "lower"}, "latency_s": {"type": "number", "better": "lower"},
    "size": {"type": "number"}, "tags": {"type": "array"}, "meta": {"type": "object"}, "note": {"type": "string"},
    "extra": {}})"));
  CHECK(t.lower_is_better("error_rate"));
  CHECK(t.lower_is_better("latency_s"));
  CHECK_FALSE(t.lower_is_better("ok"));
  CHECK(t.output_type("length") == "integer");
  CHECK(t.output_type("extra").empty());
  // run.json's record of the node names them too.
  auto r = run_pipeline(d, "p.yaml");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  auto desc = read_run_json(r.dir)["nodes"]["m"]["described"];
  CHECK(desc["lower_is_better"] == json({"error_rate", "latency_s"}));

  // The promptfoo interface's outputs: pass (boolean), score (number), reason (string); higher is better.
  d.write("a.py", "def get_assert(output, context):\n    return True\n");
  d.write("q.yaml", pytest::pipeline("  - id: a\n    uses: python\n    inputs: {output: text}\n"
                                     "    with: {file: a.py, function: get_assert, interface: promptfoo}\n"));
  auto q = evalgraph::load_pipeline(d.path / "q.yaml");
  evalgraph::Plan qplan = evalgraph::build_plan(q, registry(), evalgraph::read_dataset_columns(q));
  REQUIRE(qplan.nodes.size() == 1);
  CHECK(qplan.nodes[0].type->outputs ==
        json::parse(R"({"pass": {"type": "boolean"}, "score": {"type": "number"}, "reason": {"type": "string"}})"));

  // lower_is_better must name declared outputs, as a list: exit 2 at the script's line.
  for (const char *bad : {"[\"nope\"]", "\"length\""}) {
    d.write("m.py", std::string("import evalgraph\n\n@evalgraph.node(outputs={\"length\": int}, lower_is_better=") + bad +
                        ")\ndef measure(text: str):\n    return {\"length\": len(text)}\n");
    auto v = validate(d, "p.yaml");
    INFO(bad << ": " << v.output);
    CHECK(v.exit_code == 2);
    CHECK_THAT(v.output, Catch::Contains("m.py:3") && Catch::Contains("lower_is_better") &&
                             Catch::Contains("list of names declared in outputs"));
  }
}

TEST_CASE("python: an exception fails its record only, with type, message and the script's line", "[python][errors]") {
  TempDir d;
  d.write("data.jsonl", "{\"n\": 2}\n{\"n\": 0}\n{\"n\": 5}\n{\"n\": -1}\n");
  d.write("helper.py", "def invert(n):\n    return 1 / n\n");
  d.write("checks.py", R"(import evalgraph
from helper import invert

class Odd(Exception):
    pass

@evalgraph.node(outputs={"inv": float})
def check(n: int):
    if n < 0:
        raise Odd("negative: %d" % n)
    return {"inv": invert(n)}
)");
  auto out = pytest::run_node_records(d, pytest::node("c", "check"), 1);
  REQUIRE(out.size() == 4);
  CHECK(out[0]["c"]["inv"] == 0.5);
  CHECK(out[2]["c"]["inv"] == 0.2);
  // The deepest frame in the script (the call of invert), not helper.py's line.
  CHECK(out[1]["_errors"]["c"] == "error: ZeroDivisionError: division by zero (at checks.py:11 in check)");
  CHECK(out[3]["_errors"]["c"] == "error: Odd: negative: -1 (at checks.py:10 in check)");
}

TEST_CASE("python: what a function returns is checked against its declaration", "[python][errors]") {
  TempDir d;
  std::string data;
  for (const char *c : {"ok", "extra", "type", "missing", "list", "nan", "set", "bigint", "surrogate", "key", "int_as_float"})
    data += std::string("{\"case\": \"") + c + "\"}\n";
  d.write("data.jsonl", data);
  d.write("checks.py", R"(import evalgraph

@evalgraph.node(outputs={"ok": bool, "score": float})
def check(case):
    return {
        "ok": {"ok": True, "score": 0.5},
        "extra": {"ok": True, "score": 1.0, "oops": 1},
        "type": {"ok": "yes", "score": 1.0},
        "missing": {"ok": True},
        "list": [True, 1.0],
        "nan": {"ok": True, "score": float("nan")},
        "set": {"ok": True, "score": 1.0, "oops": {1}},
        "bigint": {"ok": True, "score": 2**70},
        "surrogate": {"ok": True, "score": 1.0, "oops": "\ud800"},
        "key": {"ok": True, "score": 1.0, 7: 1},
        "int_as_float": {"ok": False, "score": 3},
    }[case]
)");
  auto out = pytest::run_node_records(d, pytest::node("c", "check"), 1);
  REQUIRE(out.size() == 11);
  CHECK(out[0]["c"] == json({{"ok", true}, {"score", 0.5}}));
  auto err = [&](int i) { return out[i]["_errors"].value("c", std::string("(none)")); };
  CHECK(err(1) == "error: the function returned 'oops', which is not a declared output (ok: bool, score: float); add it "
                  "to @evalgraph.node(outputs=...)");
  CHECK(err(2) == "error: output 'ok' is declared bool but the function returned str");
  CHECK(err(3) == "error: the function did not return 'score' (declared outputs: ok: bool, score: float)");
  CHECK(err(4) == "error: the function returned list, not a dict of its declared outputs (ok: bool, score: float)");
  CHECK(err(5) == "error: score: float nan is not a JSON number (return None for \"no value\")");
  CHECK_THAT(err(6), Catch::Contains("not a declared output"));
  CHECK(err(7) == "error: score: the integer does not fit in 64 bits (return it as a float or a str)");
  CHECK_THAT(err(8), Catch::Contains("not a declared output"));
  CHECK(err(9) == "error: the function returned 7, which is not a declared output (ok: bool, score: float); add it to "
                  "@evalgraph.node(outputs=...)");
  CHECK(out[10]["c"] == json({{"ok", false}, {"score", 3}}));  // an int where float is declared is a number
}

TEST_CASE("python: values that are not JSON and lone surrogates are refused with the path", "[python][errors]") {
  TempDir d;
  d.write("data.jsonl", "{\"case\": \"set\"}\n{\"case\": \"surrogate\"}\n{\"case\": \"key\"}\n{\"case\": \"inf\"}\n");
  d.write("checks.py", R"(import evalgraph, typing

@evalgraph.node(outputs={"v": typing.Any})
def check(case):
    return {"v": {"set": {"a": [1, {2}]}, "surrogate": ["\ud800"], "key": {1: 2}, "inf": [float("-inf")]}[case]}
)");
  auto out = pytest::run_node_records(d, pytest::node("c", "check"), 1);
  REQUIRE(out.size() == 4);
  CHECK(out[0]["_errors"]["c"] == "error: v.a[1]: set is not a JSON type (return bool, int, float, str, list, dict or None)");
  CHECK(out[1]["_errors"]["c"] == "error: v[0]: the str is not valid UTF-8 (a lone surrogate such as '\\ud800')");
  CHECK(out[2]["_errors"]["c"] == "error: v: key 1 is not a str (JSON keys are strings)");
  CHECK(out[3]["_errors"]["c"] == "error: v[0]: float -inf is not a JSON number (return None for \"no value\")");
}

TEST_CASE("python: a call past timeout_s is interrupted, fails its record only, and cannot be swallowed", "[python][timeout]") {
  TempDir d;
  d.write("data.jsonl", "{\"n\": 1}\n{\"n\": -1}\n{\"n\": 2}\n{\"n\": -2}\n{\"n\": 3}\n");
  d.write("checks.py", R"(import evalgraph

@evalgraph.node(outputs={"n": int})
def check(n):
    if n < 0:
        while True:            # a runaway loop that also swallows ordinary exceptions
            try:
                sum(range(1000))
            except Exception:
                pass
    return {"n": n * 10}
)");
  d.write("p.yaml", pytest::pipeline(pytest::node("c", "check", ", timeout_s: 0.3")));
  auto t0 = std::chrono::steady_clock::now();
  auto r = run_pipeline(d, "p.yaml", "-j 2");
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  INFO(r.output);
  CHECK(r.exit_code == 1);
  CHECK(s < 60);  // the loops never end by themselves; (the interpreter's start can take seconds on a loaded machine)
  auto out = read_jsonl(r.dir / "out.jsonl");
  REQUIRE(out.size() == 5);
  for (int i : {0, 2, 4}) CHECK(out[i]["c"]["n"] == out[i]["n"].get<int>() * 10);
  for (int i : {1, 3}) {
    INFO(out[i].dump());
    CHECK_THAT(out[i]["_errors"]["c"].get<std::string>(),
               Catch::StartsWith("error: Timeout: the call ran past timeout_s = 0.3 s and was interrupted (at checks.py:"));
  }
}

TEST_CASE("python: many records on several threads, fields that come and go, both input paths", "[python][threads]") {
  // 4 workers take turns on the GIL over 3,000 records. The keyword names of a call are kept from one record
  // to the next and change whenever an optional field comes or goes (every third record has a tag), while
  // other threads are inside their calls; every fifth record has a 19-digit integer, which takes the
  // general input path. Under ThreadSanitizer (.ci/sanitize) this is the python node's threads test.
  std::string data;
  for (int i = 0; i < 3000; ++i) {
    data += "{\"text\": \"record " + std::to_string(i) + "\", \"n\": " + std::to_string(i);
    if (i % 3 == 0) data += ", \"tag\": \"t" + std::to_string(i) + "\"";
    if (i % 5 == 0) data += ", \"big\": 123456789012345678" + std::to_string(i % 10);
    data += "}\n";
  }
  TempDir d;
  d.write("data.jsonl", data);
  d.write("f.py", R"(import evalgraph

@evalgraph.node(outputs={"n": int, "len": int, "tag": str | None, "big": str | None})
def f(text: str, n: int, tag: str = None, big: int = None, *, scale: int = 1):
    if n % 1000 == 999:
        print("at", n)
    return {"n": n * scale, "len": len(text), "tag": tag, "big": None if big is None else str(big)}
)");
  d.write("p.yaml", pytest::pipeline("  - id: f\n    uses: python\n    inputs: {text: text, n: n, tag: tag, big: big}\n"
                                     "    with: {file: f.py, function: f, scale: 3}\n"));
  auto r = run_pipeline(d, "p.yaml", "-j 4 --chunk-size 7");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  auto out = read_jsonl(r.dir / "out.jsonl");
  REQUIRE(out.size() == 3000);
  int wrong = 0;
  for (int i = 0; i < 3000; ++i) {
    const json &o = out[static_cast<size_t>(i)]["f"];
    json want = {{"n", 3 * i}, {"len", ("record " + std::to_string(i)).size()},
                 {"tag", i % 3 == 0 ? json("t" + std::to_string(i)) : json(nullptr)},
                 {"big", i % 5 == 0 ? json("123456789012345678" + std::to_string(i % 10)) : json(nullptr)}};
    if (o != want && ++wrong <= 5) CHECK(o == want);
  }
  CHECK(wrong == 0);
  std::string log = read_file(r.dir / "run.log");
  for (int n : {999, 1999, 2999}) CHECK_THAT(log, Catch::Contains("info [f record " + std::to_string(n + 1) + "]: at " + std::to_string(n)));
}

TEST_CASE("python: print() goes to run.log with the node and the record, the terminal stays quiet", "[python]") {
  TempDir d;
  d.write("data.jsonl", "{\"n\": 1}\n{\"n\": 2}\n");
  d.write("checks.py", R"(import evalgraph, sys

print("imported")

@evalgraph.node(outputs={"n": int})
def check(n):
    print("looking at", n, "ünïcode")
    print("no newline at the end", end="")
    return {"n": n}
)");
  auto r = pytest::run_node(d, pytest::node("c", "check"));
  REQUIRE(r.exit_code == 0);
  CHECK(r.output.find("looking at") == std::string::npos);
  CHECK_THAT(r.output, Catch::Contains("python: imported"));  // at import (while the pipeline is checked): the terminal
  std::string log = read_file(r.dir / "run.log");
  INFO(log);
  CHECK_THAT(log, Catch::Contains("info [c record 1]: looking at 1 ünïcode"));
  CHECK_THAT(log, Catch::Contains("info [c record 2]: looking at 2 ünïcode"));
  CHECK_THAT(log, Catch::Contains("info [c record 2]: no newline at the end"));
}

TEST_CASE("python: validate checks the pipeline against the script, with the pipeline's file:line:col", "[python][validate]") {
  TempDir d;
  d.write("data.jsonl", "{\"text\": \"x\", \"id\": \"a\"}\n");
  d.write("checks.py", kLength);
  struct Case {
    std::string name, node, expect;
  };
  const std::vector<Case> cases = {
      {"unknown parameter", length_node("      min_lenn: 20\n"),
       "p.yaml:10:7: error: node 'len' (python): parameter at 'with/min_lenn' unknown parameter 'min_lenn' (did you mean 'min_len'?)"},
      {"wrong type", length_node("      min_len: twenty\n"),
       "p.yaml:10:16: error: node 'len' (python): parameter at 'with/min_len' expected integer, got string \"twenty\""},
      {"input the function does not take", length_node("", "{answer: text, reply: id}"),
       "p.yaml:6:28: error: node 'len' (python) has no input port 'reply'"},
      {"input and parameter at once", length_node("      rid: x\n", "{answer: text, rid: id}"),
       "p.yaml:10:12: error: node 'len' (python): 'rid' is both an input (inputs:) and a parameter (with:)"},
      {"missing input", "  - id: len\n    uses: python\n    with: {file: checks.py, function: long_enough}\n",
       "p.yaml:5:11: error: port 'answer' of node 'len' reads field 'answer', which neither the dataset nor an upstream node provides"},
      {"downstream binding to an undeclared output",
       length_node() + "  - id: next\n    uses: python\n    inputs: {answer: len.lenght}\n    with: {file: checks.py, function: long_enough}\n",
       "p.yaml:12:14: error: node 'len' (python) does not write 'lenght' (did you mean 'length'?); it writes: ok, length"},
      {"no such function", "  - id: len\n    uses: python\n    inputs: {answer: text}\n    with: {file: checks.py, function: long}\n",
       "p.yaml:7:39: error: node 'len' (python): checks.py has no function 'long'; its functions: long_enough"},
      {"no such file", "  - id: len\n    uses: python\n    with: {file: nope.py, function: f}\n",
       "p.yaml:6:18: error: node 'len' (python): cannot read the script nope.py: No such file or directory"},
      {"missing file key", "  - id: len\n    uses: python\n    with: {function: f}\n",
       "p.yaml:5:11: error: node 'len' (python): a python node needs `file: <script.py>`"},
      {"bad timeout", length_node("      timeout_s: 0\n"),
       "p.yaml:10:18: error: node 'len' (python): parameter at 'with/timeout_s' 0 must be greater than 0"},
  };
  for (const auto &c : cases) {
    DYNAMIC_SECTION(c.name) {
      d.write("p.yaml", pytest::pipeline(c.node));
      auto r = validate(d, "p.yaml");
      INFO(r.output);
      CHECK(r.exit_code == 2);
      CHECK_THAT(r.output, Catch::Contains(c.expect));
      CHECK_THAT(r.output, Catch::Contains("nothing was run"));
    }
  }
}

TEST_CASE("python: a missing keyword-only parameter and undeclared functions are configuration errors", "[python][validate]") {
  TempDir d;
  d.write("data.jsonl", "{\"text\": \"x\"}\n");
  d.write("checks.py", R"(import evalgraph

@evalgraph.node(outputs={"ok": bool})
def needs_limit(text, *, limit: int, mode: str = "fast"):
    return {"ok": len(text) < limit}

def plain(text):
    return {"ok": True}
)");
  d.write("p.yaml", pytest::pipeline(pytest::node("c", "needs_limit")));
  auto r = validate(d, "p.yaml");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Catch::Contains("p.yaml:6:11: error: node 'c' (python): parameter missing required parameter 'limit'"));
  d.write("p.yaml", pytest::pipeline(pytest::node("c", "plain")));
  r = validate(d, "p.yaml");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Catch::Contains("p.yaml:6:39: error: node 'c' (python): checks.py:7: 'plain' has no declaration: put "
                                       "@evalgraph.node(outputs={...}) above it"));
  d.write("p.yaml", pytest::pipeline(pytest::node("c", "needs_limit", ", limit: 3")));
  r = validate(d, "p.yaml");
  INFO(r.output);
  CHECK(r.exit_code == 0);
}

TEST_CASE("python: a syntax or import error in the script is exit 2 naming the script's file and line", "[python][validate]") {
  TempDir d;
  d.write("data.jsonl", "{\"text\": \"x\"}\n");
  d.write("syntax.py", "import evalgraph\n\n@evalgraph.node(outputs={'ok': bool})\ndef f(text):\n    return {'ok': True\n");
  d.write("imports.py", "import evalgraph\nimport json\nimport no_such_module_xyz\n");
  d.write("decl.py", "import evalgraph\n\n@evalgraph.node(outputs=['ok'])\ndef f(text):\n    return {}\n");
  d.write("raises.py", "import evalgraph\nraise SystemExit(3)\n");
  d.write("names.py", "import evalgraph\n\n@evalgraph.node(outputs={'bad name': bool})\ndef f(text):\n    return {}\n");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"syntax.py", "p.yaml:6:18: error: node 'c' (python): syntax.py:5:12: SyntaxError: '{' was never closed"},
      {"imports.py", "p.yaml:6:18: error: node 'c' (python): imports.py:3: importing the script failed: "
                     "ModuleNotFoundError: No module named 'no_such_module_xyz'"},
      {"decl.py", "p.yaml:6:18: error: node 'c' (python): decl.py:3: importing the script failed: TypeError: "
                  "evalgraph.node(outputs=...) takes a non-empty dict"},
      {"raises.py", "p.yaml:6:18: error: node 'c' (python): raises.py:2: importing the script failed: SystemExit: 3"},
      {"names.py", "p.yaml:6:18: error: node 'c' (python): names.py:3: importing the script failed: TypeError: "
                   "evalgraph.node: output name 'bad name' must be letters, digits, '_' and '-', not starting with '_'"},
  };
  for (const auto &[file, expect] : cases) {
    DYNAMIC_SECTION(file) {
      d.write("p.yaml", pytest::pipeline("  - id: c\n    uses: python\n    with: {file: " + file + ", function: f}\n"));
      auto r = validate(d, "p.yaml");
      INFO(r.output);
      CHECK(r.exit_code == 2);
      CHECK_THAT(r.output, Catch::Contains(expect));
      auto run = run_pipeline(d, "p.yaml");  // a run refuses it the same way, before any record
      CHECK(run.exit_code == 2);
      CHECK_FALSE(std::filesystem::exists(d.path / "out"));
    }
  }
}

TEST_CASE("python: promptfoo's get_assert(output, context) runs unchanged", "[python][promptfoo]") {
  TempDir d;
  d.write("data.jsonl",
          "{\"answer\": \"Paris is the capital\", \"expected\": \"Paris\", \"mode\": \"bool\"}\n"
          "{\"answer\": \"Lyon\", \"expected\": \"Paris\", \"mode\": \"bool\"}\n"
          "{\"answer\": \"Paris\", \"expected\": \"Paris\", \"mode\": \"float\"}\n"
          "{\"answer\": \"nothing\", \"expected\": \"Paris\", \"mode\": \"float\"}\n"
          "{\"answer\": \"Paris\", \"expected\": \"Paris\", \"mode\": \"dict\"}\n"
          "{\"answer\": \"x\", \"expected\": \"Paris\", \"mode\": \"str\"}\n");
  d.write("assert.py", R"PY(# a promptfoo Python assertion file, as promptfoo runs it
def get_assert(output, context):
    expected = context["vars"]["expected"]
    mode = context["vars"]["mode"]
    if mode == "bool":
        return expected in output
    if mode == "float":
        return 0.75 if expected in output else 0.0
    if mode == "dict":
        return {"pass": True, "score": 0.9, "reason": "found " + expected + " (" + context["config"]["lang"] + ")"}
    return "not a result"
)PY");
  d.write("p.yaml", pytest::pipeline("  - id: pf\n    uses: python\n    inputs: {output: answer}\n"
                                     "    with: {file: assert.py, function: get_assert, interface: promptfoo, lang: fr}\n"
                                     "  - id: strict\n    uses: python\n    inputs: {output: answer}\n"
                                     "    with: {file: assert.py, function: get_assert, interface: promptfoo, lang: fr, threshold: 0.8}\n"));
  auto r = run_pipeline(d, "p.yaml");
  INFO(r.output);
  CHECK(r.exit_code == 1);  // the "str" record
  auto out = read_jsonl(r.dir / "out.jsonl");
  REQUIRE(out.size() == 6);
  CHECK(out[0]["pf"] == json({{"pass", true}, {"score", 1.0}, {"reason", ""}}));
  CHECK(out[1]["pf"] == json({{"pass", false}, {"score", 0.0}, {"reason", ""}}));
  CHECK(out[2]["pf"] == json({{"pass", true}, {"score", 0.75}, {"reason", ""}}));
  CHECK(out[2]["strict"]["pass"] == false);  // 0.75 < threshold 0.8
  CHECK(out[3]["pf"]["pass"] == false);
  CHECK(out[4]["pf"] == json({{"pass", true}, {"score", 0.9}, {"reason", "found Paris (fr)"}}));
  CHECK(out[5]["_errors"]["pf"] == "error: TypeError: get_assert must return a bool, a number or a dict {'pass', "
                                   "'score', 'reason'}, not str");
  // Downstream nodes can bind pass/score/reason; validate knows them.
  d.write("q.yaml", pytest::pipeline("  - id: pf\n    uses: python\n    inputs: {output: answer}\n"
                                     "    with: {file: assert.py, function: get_assert, interface: promptfoo}\n"
                                     "  - id: next\n    uses: python\n    inputs: {output: pf.reasons}\n"
                                     "    with: {file: assert.py, function: get_assert, interface: promptfoo}\n"));
  auto v = validate(d, "q.yaml");
  CHECK(v.exit_code == 2);
  CHECK_THAT(v.output, Catch::Contains("does not write 'reasons' (did you mean 'reason'?); it writes: pass, score, reason"));
}

TEST_CASE("python: Ctrl-C still stops a run with python nodes gracefully, and it resumes", "[python][resume]") {
  TempDir d;
  std::string data;
  for (int i = 0; i < 300; ++i) data += "{\"n\": " + std::to_string(i) + "}\n";
  d.write("data.jsonl", data);
  d.write("checks.py", "import evalgraph, time\n\n@evalgraph.node(outputs={'n': int})\ndef slow(n):\n"
                       "    time.sleep(0.005)\n    return {'n': n + 1}\n");
  d.write("p.yaml", pytest::pipeline(pytest::node("s", "slow")));
  std::string script = evalgraph_cmd("run -j 2 --chunk-size 10 " + (d.path / "p.yaml").string()) + " > " +
                       (d.path / "log").string() + " 2>&1 & pid=$!; for i in $(seq 1 1000); do "
                       "grep -qs _chunk_end " + (d.path / "out").string() + "/*/progress/journal.jsonl && break; sleep 0.01; done; "
                       "kill -INT $pid; wait $pid; echo rc=$?";
  auto r = run_cmd("bash -c '" + script + "'");
  INFO(read_file(d.path / "log"));
  CHECK_THAT(r.output, Catch::Contains("rc=130"));
  CHECK_THAT(read_file(d.path / "log"), Catch::Contains("stopping after the records in flight"));
  std::filesystem::path run_dir;
  for (auto &e : std::filesystem::directory_iterator(d.path / "out")) run_dir = e.path();
  auto resumed = run_cmd(evalgraph_cmd("run -q --resume " + run_dir.string()));
  INFO(resumed.output);
  REQUIRE(resumed.exit_code == 0);
  auto recs = read_jsonl(run_dir / "out.jsonl");
  REQUIRE(recs.size() == 300);
  for (int i = 0; i < 300; ++i) REQUIRE(recs[i]["s"]["n"] == i + 1);
}

TEST_CASE("python: C extension modules import inside the engine (libpython is global)", "[python]") {
  TempDir d;
  d.write("data.jsonl", "{\"n\": 1}\n");
  d.write("checks.py", R"(import evalgraph, json, decimal, hashlib, _json, _decimal, math

@evalgraph.node(outputs={"c_json": bool, "sha": str, "dec": str})
def check(n):
    return {"c_json": json.decoder.c_scanstring is not None, "sha": hashlib.sha256(b"x").hexdigest()[:8],
            "dec": str(decimal.Decimal(1) / decimal.Decimal(8))}
)");
  auto out = pytest::run_node_records(d, pytest::node("c", "check"), 0);
  CHECK(out[0]["c"] == json({{"c_json", true}, {"sha", "2d711642"}, {"dec", "0.125"}}));
}

TEST_CASE("python: read_run and to_pandas from a plain python3", "[python][results]") {
  TempDir d;
  d.write("data.jsonl", "{\"text\": \"short\", \"id\": \"a\"}\n{\"text\": \"a rather longer answer\", \"id\": \"b\"}\n"
                        "{\"text\": 5, \"id\": \"c\"}\n");
  d.write("checks.py", kLength);
  d.write("p.yaml", pytest::pipeline(length_node()));
  auto r = run_pipeline(d, "p.yaml");
  REQUIRE(r.exit_code == 1);  // len(5) fails
  d.write("read.py", R"(import sys, evalgraph
run = evalgraph.read_run(sys.argv[1])
print(len(run.records), run.info["pipeline"], run.records[1]["len"]["length"], run.info["nodes"]["len"]["described"]["function"])
print("pandas" in sys.modules)
df = run.to_pandas()
print(sorted(c for c in df.columns))
print(list(df["len.length"].fillna(-1).astype(int)), df["_errors.len"].notna().sum())
try:
    evalgraph.read_run(sys.argv[1] + "/nope")
except FileNotFoundError as e:
    print("FileNotFoundError", e)
try:
    evalgraph.chat(prompt="hi")
except evalgraph.OutsideRun as e:
    print("OutsideRun", e)
)");
  auto py = run_cmd(std::string("PYTHONPATH=") + PYTHON_PACKAGE_DIR + " " + PYTHON3_EXE + " " + (d.path / "read.py").string() +
                    " " + r.dir.string());
  INFO(py.output);
  REQUIRE(py.exit_code == 0);
  CHECK_THAT(py.output, Catch::Contains("3 py 22 long_enough\nFalse\n"));
  CHECK_THAT(py.output, Catch::Contains("['_errors.len', 'id', 'len.length', 'len.ok', 'text']"));
  CHECK_THAT(py.output, Catch::Contains("[5, 22, -1] 1\n"));
  CHECK_THAT(py.output, Catch::Contains("FileNotFoundError evalgraph.read_run: no such results folder"));
  CHECK_THAT(py.output, Catch::Contains("OutsideRun evalgraph.chat works only inside a pipeline run"));
}
