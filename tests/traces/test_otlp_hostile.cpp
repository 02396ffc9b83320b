// Hostile trace files: each is read to its end with the damage counted under a named reason (run.json's
// dataset_reader.unmapped), never a crash, never silence.
#include "trace_test_util.h"

using namespace tracetest;

namespace {

std::string answered_trace(int n) {
  const std::string t = trace_id(n);
  return request({oi_llm(t, "00000000000000c1", "", 100 + n, "q" + std::to_string(n), "a" + std::to_string(n))});
}

}  // namespace

TEST_CASE("traces hostile: spans without a trace id, or with a malformed one", "[traces]") {
  testsupport::TempDir dir;
  json no_id = oi_llm("", "00000000000000c1", "", 1, "q", "a");
  no_id.erase("traceId");
  json bad_id = oi_llm("xyz", "00000000000000c1", "", 1, "q", "a");
  json zero_id = oi_llm(std::string(32, '0'), "00000000000000c1", "", 1, "q", "a");
  Read r = read_traces(dir.write("t.jsonl", request({no_id, bad_id, zero_id}) + answered_trace(1)));
  CHECK(r.records.size() == 1);
  CHECK(r.unmapped("span without a trace id") == 1);
  CHECK(r.unmapped("span with a trace id that is not 32 hex digits") == 2);
}

TEST_CASE("traces hostile: a cycle of parent ids", "[traces]") {
  testsupport::TempDir dir;
  const std::string t = trace_id(3);
  json a = oi_llm(t, "00000000000000a1", "00000000000000a2", 1, "q", "a");
  json b = span(t, "00000000000000a2", "00000000000000a3", "x", 2, {});
  json c = span(t, "00000000000000a3", "00000000000000a1", "y", 3, {});
  json self = span(t, "00000000000000a4", "00000000000000a4", "z", 4, {});
  Read r = read_traces(dir.write("t.jsonl", request({a, b}) + request({c, self})));
  REQUIRE(r.records.size() == 1);
  CHECK(r.records[0]["assistant_text"] == "a");
  CHECK(r.unmapped("span whose parent ids form a cycle (read; no root told)") == 4);
}

TEST_CASE("traces hostile: a trace over max_trace_spans is counted, the others read", "[traces]") {
  testsupport::TempDir dir;
  const std::string t = trace_id(4);
  std::string text;
  for (int batch = 0; batch < 20; ++batch) {
    std::vector<json> spans;
    for (int i = 0; i < 100; ++i) {
      char id[20];
      std::snprintf(id, sizeof id, "%016x", batch * 100 + i + 1);
      spans.push_back(oi_llm(t, id, "", i, "q", "a"));
    }
    text += request(spans) + answered_trace(batch + 10);
  }
  Read r = read_traces(dir.write("t.jsonl", text), {{"max_trace_spans", 1000}});
  CHECK(r.records.size() == 20);
  CHECK(r.unmapped("trace over max_trace_spans (not read)") == 1);
}

TEST_CASE("traces hostile: a request line over max_request_mb, a big attribute", "[traces]") {
  testsupport::TempDir dir;
  std::string big(std::size_t{3} << 20, 'x');
  json huge = oi_llm(trace_id(5), "00000000000000c1", "", 1, "q", big);
  Read r = read_traces(dir.write("t.jsonl", answered_trace(1) + request({huge}) + answered_trace(2)),
                       {{"max_request_mb", 2}});
  CHECK(r.records.size() == 2);
  CHECK(r.unmapped("export request (line) over max_request_mb, not read") == 1);
  // Within max_request_mb, the 3 MB answer makes its record fail alone (limits.field_bytes, 1 MB).
  Read within = read_traces(dir.write("u.jsonl", request({huge})));
  REQUIRE(within.records.size() == 1);
  CHECK(within.problems[0].find("field_bytes") != std::string::npos);
  CHECK(within.records[0]["assistant_text"].is_null());
  CHECK(within.unmapped("record with a field over a limit (fails alone)") == 1);
}

TEST_CASE("traces hostile: invalid UTF-8 and truncated lines", "[traces]") {
  testsupport::TempDir dir;
  std::string bad = request({oi_llm(trace_id(6), "00000000000000c1", "", 1, "q", "ANSWER")});
  bad.replace(bad.find("ANSWER"), 6, "AN\xC3\x28\xFFR");
  std::string cut = answered_trace(7);
  cut = cut.substr(0, cut.size() / 2) + "\n";
  Read r = read_traces(dir.write("t.jsonl", bad + cut + answered_trace(8) + "{\"resourceSpans\": [\x01\n\n"));
  REQUIRE(r.records.size() == 2);
  CHECK(r.unmapped("text with bytes that are not UTF-8 (replaced by U+FFFD)") >= 1);
  CHECK(r.unmapped("export request with malformed or truncated JSON (read up to the fault)") == 2);
  for (const auto &rec : r.records) CHECK(!rec.dump().empty());  // valid UTF-8 (dump throws otherwise)
}

TEST_CASE("traces hostile: not a trace file at all", "[traces]") {
  testsupport::TempDir dir;
  Read r = read_traces(dir.write("t.jsonl", "{\"question\": \"a JSONL record\"}\nhello\n"));
  CHECK(r.records.empty());
  CHECK(r.stats["spans"] == 0);
  CHECK_THROWS_AS(read_traces(dir.path / "missing.jsonl"), evalgraph::io::DataError);
  CHECK_THROWS_AS(read_traces(dir.path), evalgraph::io::DataError);
}

TEST_CASE("traces hostile: message parts and tool definitions whose names and types are not strings", "[traces]") {
  testsupport::TempDir dir;
  // GenAI messages as the attribute's JSON text, with a part's type, id or name of another JSON type, and a tool
  // definition whose name is a number: each part is left out (it has no text), the rest of the trace is read.
  auto genai = [](int n, const std::string &input) {
    return span(trace_id(n), "00000000000000c1", "", "chat", 1,
                {{"gen_ai.operation.name", "chat"},
                 {"gen_ai.request.model", "m"},
                 {"gen_ai.input.messages", input},
                 {"gen_ai.output.messages", R"([{"role":"assistant","content":"ans"}])"},
                 {"gen_ai.tool.definitions", R"([{"type":"function","function":{"name":7,"description":[1]}}])"}});
  };
  const std::string text =
      request({genai(1, R"([{"role":"user","parts":[{"type":5,"content":"x"}]}])")}) +
      request({genai(2, R"([{"role":"user","parts":[{"type":"tool_call","id":5,"name":"f"}]}])")}) +
      request({genai(3, R"([{"role":"user","parts":[{"type":null},{"type":"text","content":"q"}]}])")});
  Read r = read_traces(dir.write("t.jsonl", text));
  REQUIRE(r.records.size() == 3);
  for (const auto &rec : r.records) CHECK(rec["assistant_text"] == "ans");
  CHECK(r.records[2]["user_text"] == "q");
  CHECK(r.unmapped("trace with a value of an unexpected type (not read)") == 0);
}

TEST_CASE("traces hostile: token counts as doubles, one past int64's range", "[traces]") {
  testsupport::TempDir dir;
  // A count written as a double is read as the integer it is; 1e300 is no count (converting it was undefined
  // behaviour): it is counted and left out, and the next attribute that names the same count is read.
  auto call = [](int n, const json &prompt_tokens) {
    return span(trace_id(n), "00000000000000c1", "", "chat", 1,
                {{"gen_ai.operation.name", "chat"},
                 {"gen_ai.request.model", "m"},
                 {"gen_ai.input.messages", R"([{"role":"user","content":"q"}])"},
                 {"gen_ai.output.messages", R"([{"role":"assistant","content":"ans"}])"},
                 {"gen_ai.usage.input_tokens", prompt_tokens},
                 {"gen_ai.usage.prompt_tokens", 7}});
  };
  Read r = read_traces(
      dir.write("t.jsonl", request({call(1, 12.0)}) + request({call(2, 1e300)}) + request({call(3, -1e19)})));
  REQUIRE(r.records.size() == 3);
  CHECK(r.records[0]["usage"]["input_tokens"] == 12);
  CHECK(r.records[1]["usage"]["input_tokens"] == 7);
  CHECK(r.records[2]["usage"]["input_tokens"] == 7);
  CHECK(r.unmapped("integer attribute past int64's range (not read)") == 2);
}
