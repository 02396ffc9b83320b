// The evalgraph package's API (docs/python.md): type hints and py.typed, OutsideRunError and TypeError from a
// plain python3, a TypedDict as the outputs, `async def` checks on the worker's event loop with evalgraph.achat
// calls of one record overlapping, and results held to limits.record_bytes.
#include <catch2/catch.hpp>
#include <regex>

#include "llm_fixture.h"
#include "python_fixture.h"
#include "sanitizers.h"

using namespace testsupport;
using nlohmann::json;

namespace {

// Runs <d>/<script> with a plain python3 that imports the built package.
CmdResult run_python(const TempDir &d, const std::string &script) {
  return run_cmd(std::string("PYTHONPATH=") + PYTHON_PACKAGE_DIR + " " + PYTHON3_EXE + " " +
                 (d.path / script).string());
}

}  // namespace

TEST_CASE("python: the package is typed, and its errors are named: OutsideRunError, TypeError", "[python][api]") {
  TempDir d;
  d.write("api.py", R"(import asyncio, inspect, os, typing, evalgraph
here = os.path.dirname(evalgraph.__file__)
print("py.typed", os.path.isfile(os.path.join(here, "py.typed")))
for name in ("node", "chat", "achat", "read_run"):
    fn = getattr(evalgraph, name)
    hints = typing.get_type_hints(fn)
    bare = [p for p in inspect.signature(fn).parameters if p not in hints]
    print(name, "return" in hints, bare)
for name in ("__init__", "__len__", "to_pandas"):  # (to_pandas's DataFrame resolves where pandas is imported)
    print("Run." + name, "return" in getattr(evalgraph.Run, name).__annotations__)
def outcome(call):
    try:
        call()
    except Exception as e:
        return type(e).__name__
    return "no error"
print("outside", outcome(lambda: evalgraph.chat(prompt="hi")), issubclass(evalgraph.OutsideRunError, RuntimeError),
      evalgraph.OutsideRun is evalgraph.OutsideRunError)
print("achat outside", outcome(lambda: asyncio.run(evalgraph.achat("hi"))))
print("types", outcome(lambda: evalgraph.chat(prompt=5)), outcome(lambda: evalgraph.chat(messages="hi")),
      outcome(lambda: evalgraph.chat("hi", provider=3)), outcome(lambda: evalgraph.chat("hi", inference=[1])),
      outcome(lambda: asyncio.run(evalgraph.achat(prompt=b"hi"))))
print("values", outcome(lambda: evalgraph.chat()), outcome(lambda: evalgraph.chat("hi", model="m")))
print("node", outcome(lambda: evalgraph.node(outputs=[("ok", bool)])), outcome(lambda: evalgraph.node(outputs={})))
)");
  auto py = run_python(d, "api.py");
  INFO(py.output);
  REQUIRE(py.exit_code == 0);
  CHECK_THAT(py.output, Catch::Contains("py.typed True\n"));
  for (const char *name : {"node", "chat", "achat", "read_run"})
    CHECK_THAT(py.output, Catch::Contains(std::string(name) + " True []\n"));
  for (const char *name : {"__init__", "__len__", "to_pandas"})
    CHECK_THAT(py.output, Catch::Contains(std::string("Run.") + name + " True\n"));
  CHECK_THAT(py.output, Catch::Contains("outside OutsideRunError True True\n"));
  CHECK_THAT(py.output, Catch::Contains("achat outside OutsideRunError\n"));
  CHECK_THAT(py.output, Catch::Contains("types TypeError TypeError TypeError TypeError TypeError\n"));
  CHECK_THAT(py.output, Catch::Contains("values ValueError ValueError\n"));
  CHECK_THAT(py.output, Catch::Contains("node TypeError TypeError\n"));
}

TEST_CASE("python: a TypedDict declares a node's outputs", "[python][api]") {
  TempDir d;
  d.write("data.jsonl", "{\"text\": \"short\"}\n{\"text\": \"a longer answer\"}\n{\"text\": \"odd\"}\n");
  d.write("checks.py", R"(import typing, evalgraph

class Length(typing.TypedDict):
    ok: bool
    length: int
    note: typing.Optional[str]

@evalgraph.node(outputs=Length, lower_is_better=["length"])
def check(text: str) -> Length:
    if text == "odd":
        return {"ok": True, "length": "three", "note": None}
    return {"ok": len(text) > 6, "length": len(text), "note": None}
)");
  auto r = pytest::run_node(d, pytest::node("c", "check"));
  INFO(r.output);
  REQUIRE(r.exit_code == 1);  // "odd": length is not an int
  auto out = read_jsonl(r.dir / "out.jsonl");
  REQUIRE(out.size() == 3);
  CHECK(out[0]["c"] == json({{"ok", false}, {"length", 5}, {"note", nullptr}}));
  CHECK(out[1]["c"] == json({{"ok", true}, {"length", 15}, {"note", nullptr}}));
  CHECK_THAT(out[2]["_errors"]["c"].get<std::string>(), Catch::Contains("output 'length' is declared int"));
  json described = read_run_json(r.dir)["nodes"]["c"]["described"];
  CHECK(described["outputs"] == json({{"ok", "bool"}, {"length", "int"}, {"note", "Optional[str]"}}));
  CHECK(described["lower_is_better"] == json::array({"length"}));
}

TEST_CASE("python: an async def check runs on its worker's own event loop, reused, and can be interrupted",
          "[python][api][async]") {
  TempDir d;
  std::string rows;
  for (int i = 0; i < 40; ++i) rows += "{\"i\": " + std::to_string(i) + "}\n";
  d.write("data.jsonl", rows);
  d.write("checks.py", R"(import asyncio, threading, evalgraph

@evalgraph.node(outputs={"thread": int, "seen": int, "twice": int})
async def check(i: int):
    await asyncio.sleep(0)
    if i == 7:
        raise ValueError("seven")
    if i == 9:
        while True:  # past timeout_s: interrupted; the thread's next record still runs
            await asyncio.sleep(0)
    twice = await asyncio.gather(double(i), asyncio.sleep(0.001, result=0))
    loop = asyncio.get_running_loop()
    loop.records_seen = getattr(loop, "records_seen", 0) + 1  # 1: a loop's first record
    return {"thread": threading.get_ident(), "seen": loop.records_seen, "twice": twice[0]}

async def double(i):
    await asyncio.sleep(0)
    return 2 * i
)");
  d.write("p.yaml", pytest::pipeline(pytest::node("c", "check", ", timeout_s: 0.5")));
  auto r = run_pipeline(d, "p.yaml", "-j 2");
  INFO(r.output);
  REQUIRE(r.exit_code == 1);
  auto out = read_jsonl(r.dir / "out.jsonl");
  REQUIRE(out.size() == 40);
  std::set<long long> threads;
  int ok = 0, first_on_loop = 0;
  for (int i = 0; i < 40; ++i) {
    INFO(out[static_cast<size_t>(i)].dump());
    if (i == 7) {
      CHECK_THAT(out[7]["_errors"]["c"].get<std::string>(),
                 Catch::Contains("ValueError: seven (at checks.py:7 in check)"));
    } else if (i == 9) {
      CHECK_THAT(out[9]["_errors"]["c"].get<std::string>(), Catch::Contains("Timeout: the call ran past timeout_s"));
    } else {
      REQUIRE(out[static_cast<size_t>(i)].contains("c"));
      CHECK(out[static_cast<size_t>(i)]["c"]["twice"] == 2 * i);
      threads.insert(out[static_cast<size_t>(i)]["c"]["thread"].get<long long>());
      if (out[static_cast<size_t>(i)]["c"]["seen"] == 1) ++first_on_loop;
      ++ok;
    }
  }
  CHECK(ok == 38);
  // One loop per thread, kept from record to record (the thread whose call was interrupted starts a fresh one).
  CHECK(static_cast<size_t>(first_on_loop) <= threads.size() + 1);
  CHECK(threads.size() <= 3);
}

TEST_CASE("python: evalgraph.achat calls of one record wait at once", "[python][api][async][llm]") {
  LlmServer srv(300, 8);
  srv.reply_all("fine: {last_user}");
  TempDir d;
  d.write("data.jsonl", "{\"text\": \"a\"}\n");
  d.write("judge.py", R"(import asyncio, time, evalgraph

@evalgraph.node(outputs={"answers": list, "elapsed": float}, calls_llm=True)
async def judge(text: str):
    t0 = time.monotonic()
    answers = await asyncio.gather(*(evalgraph.achat(f"question {k} about {text}", max_tokens=5) for k in range(3)))
    return {"answers": list(answers), "elapsed": time.monotonic() - t0}
)");
  d.write(
      "p.yaml",
      "name: judge\ndataset: {path: data.jsonl, format: jsonl}\n"
      "providers:\n  judge:\n    base_url: " +
          srv.base_url() +
          "\n    model: m\n    api_key_env: EG_TEST_SECRET_KEY\n    max_in_flight: 8\n"
          "nodes:\n  - id: j\n    uses: python\n    inputs: {text: text}\n    with: {file: judge.py, function: judge}\n"
          "sinks:\n  - uses: sink.jsonl\n    with: {file: out.jsonl}\noutput: {dir: out}\n");
  auto r = run_pipeline(d, "p.yaml", "", "EG_TEST_SECRET_KEY=k ");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  auto out = read_jsonl(r.dir / "out.jsonl");
  REQUIRE(out.size() == 1);
  INFO(out[0].dump());
  CHECK(out[0]["j"]["answers"] ==
        json::array({"fine: question 0 about a", "fine: question 1 about a", "fine: question 2 about a"}));
  CHECK(srv.request_count() == 3);
  CHECK(srv.max_concurrency() == 3);
  // Three calls of 300 ms each: one after the other they would take 900 ms.
  const double elapsed = out[0]["j"]["elapsed"].get<double>();
  CHECK(elapsed >= 0.29);
  CHECK(elapsed < 0.75);
  CHECK(read_run_json(r.dir)["llm"]["judge"]["calls"] == 3);
}

TEST_CASE("python: a result over limits.record_bytes fails its record before it is converted",
          "[python][api][limits]") {
  TempDir d;
  d.write("data.jsonl", "{\"n\": 10}\n{\"n\": 200000000}\n{\"n\": 3000}\n");
  d.write("checks.py", R"(import evalgraph

@evalgraph.node(outputs={"s": str})
def big(n: int, quote: bool = False):
    return {"s": ('"' if quote else "x") * n}
)");
  SECTION("a 200 MB str, with the default limits (8 MiB)") {
    d.write("p.yaml", pytest::pipeline(pytest::node("c", "big")));
    auto r = run_cmd("/usr/bin/time -f 'maxrss_kb=%M' env " + evalgraph_cmd("run -q " + (d.path / "p.yaml").string()));
    INFO(r.output);
    REQUIRE(r.exit_code == 1);
    std::smatch m;
    REQUIRE(std::regex_search(r.output, m, std::regex("(/[^\n]*)\n(?:Command exited[^\n]*\n)?maxrss_kb=([0-9]+)")));
    const fs::path dir = m[1].str();
    // The 200 MB str itself, and nothing of its size more (the output was 825 MB when it became a JSON line).
    // (Not under ThreadSanitizer: its shadow memory for the touched string adds ~600 MB of RSS; the normal and the
    // ASan builds check it.)
#if !EG_TEST_UNDER_TSAN
    CHECK(std::stol(m[2].str()) < 500 * 1024);
#endif
    CHECK(fs::file_size(dir / "out.jsonl") < 10000);
    auto out = read_jsonl(dir / "out.jsonl");
    REQUIRE(out.size() == 3);
    CHECK(out[0]["c"]["s"] == std::string(10, 'x'));
    CHECK(out[2]["c"]["s"] == std::string(3000, 'x'));
    CHECK_FALSE(out[1].contains("c"));
    CHECK_THAT(out[1]["_errors"]["c"].get<std::string>(),
               Catch::Contains("the function's result is at least 200000") &&
                   Catch::Contains("over limits.record_bytes (8388608 bytes); the output was not kept"));
  }
  SECTION("a result that grows past the limit as JSON (escapes) is caught after conversion") {
    d.write("p.yaml", pytest::pipeline(pytest::node("c", "big", ", quote: true"),
                                       "limits: {field_bytes: 4096, record_bytes: 4096}\n"));
    auto r = run_pipeline(d, "p.yaml");
    INFO(r.output);
    REQUIRE(r.exit_code == 1);
    auto out = read_jsonl(r.dir / "out.jsonl");
    REQUIRE(out.size() == 3);
    CHECK(out[0]["c"]["s"] == std::string(10, '"'));
    // 3000 quotes: 3,008 bytes counted before, 6,008 bytes of JSON after.
    CHECK(out[2]["_errors"]["c"] ==
          "error: the function's result is 6008 bytes as JSON, over limits.record_bytes (4096 "
          "bytes); the output was not kept. Return less (a summary, a count), or raise "
          "limits.record_bytes in the pipeline if outputs this large are expected");
    CHECK_THAT(out[1]["_errors"]["c"].get<std::string>(), Catch::Contains("at least 2000000"));
  }
}
