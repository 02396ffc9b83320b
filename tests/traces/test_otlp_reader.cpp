// The trace reader on files written by the real instrumentation libraries (fixtures/, from make_traces.sh) and
// on hand-made files for what those libraries do not write (OpenLLMetry's older gen_ai.prompt.N.*, span
// events, one JSON document, gzip, mapping:, unit: llm_call).
#include <zlib.h>

#include "trace_test_util.h"

using namespace tracetest;

namespace {

const std::filesystem::path kFixtures = EVALGRAPH_TRACE_FIXTURES;

json by_question(const Read &r, const std::string &q) {
  for (const auto &rec : r.records)
    if (rec["user_text"] == q) return rec;
  FAIL("no record for " << q);
  return nullptr;
}

}  // namespace

TEST_CASE("traces: the three instrumentations' files give the same records", "[traces]") {
  Read genai = read_traces(kFixtures / "genai-traces.jsonl", {{"logs", (kFixtures / "genai-logs.jsonl").string()}});
  Read oi = read_traces(kFixtures / "openinference-traces.jsonl");
  Read oll = read_traces(kFixtures / "openllmetry-traces.jsonl");
  for (const Read *r : {&genai, &oi, &oll}) {
    REQUIRE(r->records.size() == 4);
    CHECK(r->stats["unmapped"].empty());
    CHECK(r->stats["traces"] == 4);
  }
  for (const char *q :
       {"Where is my order A17?", "Can I still return it within 30 days?", "When does order B22 ship?"}) {
    json a = by_question(genai, q), b = by_question(oi, q), c = by_question(oll, q);
    CHECK(a["assistant_text"] == std::string("Answer to: ") + q);
    for (const char *f : {"assistant_text", "session_id", "system_prompt", "model"}) {
      CHECK(a[f] == b[f]);
      CHECK(a[f] == c[f]);
    }
    for (const json *x : {&a, &b, &c}) {
      REQUIRE((*x)["tool_calls"].size() == 1);
      CHECK((*x)["tool_calls"][0]["name"] == "get_order_status");
      CHECK((*x)["tool_calls"][0]["arguments"].is_object());
      CHECK((*x)["tool_calls"][0]["result"].get<std::string>().find("status") != std::string::npos);
      CHECK((*x)["retrieved_docs"].size() == 2);
      CHECK((*x)["retrieved_docs"] == a["retrieved_docs"]);
      CHECK((*x)["tool_calls"][0]["arguments"] == a["tool_calls"][0]["arguments"]);
    }
    CHECK(b["tool_profile"] == "get_order_status(order_id): Looks up an order's status");
  }
  // A session's records come together, in time order.
  CHECK(oi.records[0]["session_id"] == oi.records[1]["session_id"]);
  CHECK(oi.records[0]["start"] < oi.records[1]["start"]);
  CHECK(oi.records[1]["messages"].size() > oi.records[0]["messages"].size());  // the history grew
}

TEST_CASE("traces: without its logs the GenAI file has no text, and says so", "[traces]") {
  Read r = read_traces(kFixtures / "genai-traces.jsonl");
  CHECK(r.records.size() == 4);
  CHECK(r.unmapped("LLM span without message content (capture of content off?)") == 4);
  CHECK(r.records[0]["assistant_text"] == "");
}

TEST_CASE("traces: logs in the same file, one JSON document, and gzip read alike", "[traces]") {
  testsupport::TempDir dir;
  std::ifstream t(kFixtures / "genai-traces.jsonl"), l(kFixtures / "genai-logs.jsonl");
  std::string both((std::istreambuf_iterator<char>(t)), {});
  both.append((std::istreambuf_iterator<char>(l)), {});
  Read mixed = read_traces(dir.write("mixed.jsonl", both));
  REQUIRE(mixed.records.size() == 4);
  gzFile gz = gzopen((dir.path / "mixed.jsonl.gz").c_str(), "wb");
  gzwrite(gz, both.data(), static_cast<unsigned>(both.size()));
  gzclose(gz);
  Read zipped = read_traces(dir.path / "mixed.jsonl.gz");
  CHECK(zipped.records == mixed.records);
  // One pretty-printed document (an array of the requests).
  json doc = json::array();
  std::istringstream lines(both);
  for (std::string line; std::getline(lines, line);) doc.push_back(json::parse(line));
  Read document = read_traces(dir.write("doc.json", doc.dump(2)));
  CHECK(document.records == mixed.records);
}

TEST_CASE("traces: OpenLLMetry's gen_ai.prompt.N attributes, a span's events, unit llm_call", "[traces]") {
  testsupport::TempDir dir;
  const std::string t = trace_id(1);
  json llm = span(t, "00000000000000a1", "", "openai.chat", 100,
                  {{"llm.request.type", "chat"},
                   {"gen_ai.request.model", "gpt-x"},
                   {"gen_ai.prompt.0.role", "system"},
                   {"gen_ai.prompt.0.content", "Be brief."},
                   {"gen_ai.prompt.1.role", "user"},
                   {"gen_ai.prompt.1.content", "Hi?"},
                   {"gen_ai.completion.0.role", "assistant"},
                   {"gen_ai.completion.0.content", ""},
                   {"gen_ai.completion.0.tool_calls.0.name", "lookup"},
                   {"gen_ai.completion.0.tool_calls.0.arguments", "{\"q\": \"hi\"}"},
                   {"gen_ai.completion.0.tool_calls.0.id", "call-1"},
                   {"llm.request.functions.0.name", "lookup"},
                   {"llm.request.functions.0.description", "Looks up"},
                   {"gen_ai.usage.prompt_tokens", 12},
                   {"gen_ai.usage.completion_tokens", 3}});
  json llm2 = span(t, "00000000000000a2", "", "chat", 200, {{"gen_ai.operation.name", "chat"}});
  llm2["events"] = {{{"name", "gen_ai.content.prompt"},
                     {"attributes", {attr("gen_ai.prompt", R"([{"role":"user","content":"Hi?"}])")}}},
                    {{"name", "gen_ai.content.completion"},
                     {"attributes", {attr("gen_ai.completion", R"([{"role":"assistant","content":"Hello."}])")}}}};
  auto file = dir.write("t.jsonl", request({llm2}) + request({llm}));
  Read r = read_traces(file);
  REQUIRE(r.records.size() == 1);
  const json &rec = r.records[0];
  CHECK(rec["system_prompt"] == "Be brief.");
  CHECK(rec["assistant_text"] == "Hello.");
  CHECK(rec["tool_calls"] == json::parse(R"([{"id":"call-1","name":"lookup","arguments":{"q":"hi"},
                                             "result":null,"error":null,"start":null,"duration_ms":null}])"));
  CHECK(rec["tool_profile"] == "lookup(): Looks up");
  CHECK(rec["usage"]["input_tokens"] == 12);
  CHECK(rec["usage"]["llm_calls"] == 2);
  Read calls = read_traces(file, {{"unit", "llm_call"}});
  REQUIRE(calls.records.size() == 2);
  CHECK(calls.records[0]["id"] == t + "/00000000000000a1");
  CHECK(calls.records[1]["assistant_text"] == "Hello.");
}

TEST_CASE("traces: mapping names the attributes and spans of home-made instrumentation", "[traces]") {
  testsupport::TempDir dir;
  const std::string t = trace_id(2);
  json root = span(t, "00000000000000b1", "", "handle", 100, {{"app.session", "s9"}, {"app.tenant", "acme"}});
  json call = span(t, "00000000000000b2", "00000000000000b1", "my_llm", 110,
                   {{"gen_ai.input.messages", R"([{"role":"user","parts":[{"type":"text","content":"Q"}]}])"},
                    {"gen_ai.output.messages", R"([{"role":"assistant","parts":[{"type":"text","content":"A"}]}])"}});
  auto file = dir.write("t.jsonl", request({call, root}));
  json opts = {
      {"mapping", {{"session_id", "app.session"}, {"tenant", {{"attribute", "app.tenant"}}}, {"llm_spans", "my_*"}}}};
  Read r = read_traces(file, opts);
  REQUIRE(r.records.size() == 1);
  CHECK(r.records[0]["session_id"] == "s9");
  CHECK(r.records[0]["tenant"] == "acme");
  CHECK(r.records[0]["assistant_text"] == "A");
  CHECK_THROWS_AS(read_traces(file, {{"unit", "span"}}), evalgraph::io::DataError);
  CHECK_THROWS_AS(read_traces(file, {{"mapping", {{"x", 3}}}}), evalgraph::io::DataError);
}
