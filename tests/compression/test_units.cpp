// Unit tests of the shared compression library: token estimate, transcript, facts, the judge-answer
// parser, the seeded order, the aggregation, and the compression triggers (with a fake host).
#include <catch2/catch.hpp>

#include <cstring>

#include "answering.hpp"
#include "compression/aggregate.hpp"
#include "compression/compressor.hpp"
#include "compression/facts.hpp"
#include "compression/llm_util.hpp"
#include "compression/rubric.hpp"
#include "compression/session.hpp"
#include "compression/summary.hpp"

using namespace compression;

namespace {
std::vector<Message> session(const char *text) {
  std::vector<Message> s;
  append_messages(s, json::parse(text), "test");
  return s;
}
}  // namespace

TEST_CASE("token estimate is ceil(code points / 4) of the rendered transcript", "[compression][unit]") {
  CHECK(estimate_tokens("") == 0);
  CHECK(estimate_tokens("abcd") == 1);
  CHECK(estimate_tokens("abcde") == 2);
  CHECK(estimate_tokens("äöüß") == 1);  // 4 code points, 8 bytes
  auto s = session(R"([{"role":"user","content":"hi"},
    {"role":"assistant","content":"ok","tool_calls":[{"id":"a","name":"read_file","arguments":{"path":"x.py"}}]},
    {"role":"tool","tool_call_id":"a","name":"read_file","exit_code":2,"content":"boom"}])");
  // "[0] user: hi" (12) + "\n" + "[1] assistant: ok" (17) + "\n" + "  -> call read_file " (20) +
  // "{\"path\":\"x.py\"}" (15) + "\n" + "[2] tool read_file (exit 2): boom" (33) = 100 code points → 25 tokens.
  std::string t = render_transcript(s, 0, 3);
  CHECK(t == "[0] user: hi\n[1] assistant: ok\n  -> call read_file {\"path\":\"x.py\"}\n[2] tool read_file (exit 2): boom");
  CHECK(utf8_length(t) == 100);
  CHECK(transcript_tokens(s, 0, 3) == 25);
  CHECK(render_message(s[2], 2) == "[2] tool read_file (exit 2): bo…");
}

TEST_CASE("OpenAI-style tool calls and index checks", "[compression][unit]") {
  auto s = session(R"([{"role":"assistant","content":null,"tool_calls":[{"id":"q","type":"function","function":{"name":"edit_file","arguments":"{\"path\":\"a.c\",\"old_str\":\"x\",\"new_str\":\"y\"}"}}]}])");
  REQUIRE(s[0].tool_calls.size() == 1);
  CHECK(s[0].tool_calls[0].args["path"] == "a.c");
  std::vector<Message> m;
  CHECK_THROWS_WITH(append_messages(m, json::parse(R"([{"role":"user","content":"a","index":3}])"), "cp 1"),
                    Catch::Contains("has index 3 but is message 0"));
  CHECK_THROWS_WITH(append_messages(m, json::parse(R"([{"role":"robot","content":"a"}])"), "cp 1"), Catch::Contains("role 'robot'"));
}

TEST_CASE("facts: files, first error, last failing test, open to-dos", "[compression][unit]") {
  auto s = session(R"([
    {"role":"user","content":"Fix the importer"},
    {"role":"assistant","content":"","tool_calls":[{"id":"1","name":"bash","arguments":{"command":"python -m importer data.csv"}}]},
    {"role":"tool","tool_call_id":"1","is_error":true,"content":"Traceback (most recent call last):\n  File \"importer/cli.py\", line 3\nValueError: invalid literal for int() with base 10: 'n/a'"},
    {"role":"assistant","content":"","tool_calls":[{"id":"2","name":"read_file","arguments":{"path":"importer/cli.py"}},{"id":"3","name":"write_file","arguments":{"path":"importer/parse.py","content":"a\nb\nc"}}]},
    {"role":"tool","tool_call_id":"2","content":"..."},
    {"role":"tool","tool_call_id":"3","content":"ok"},
    {"role":"assistant","content":"","tool_calls":[{"id":"4","name":"write_file","arguments":{"path":"importer/parse.py","content":"a"}},{"id":"5","name":"run_command","arguments":{"command":"pytest -q"}}]},
    {"role":"tool","tool_call_id":"4","content":"ok"},
    {"role":"tool","tool_call_id":"5","exit_code":1,"content":"FAILED tests/test_parse.py::test_na - AssertionError\nFAILED tests/test_parse.py::test_empty\n=== 2 failed, 5 passed ==="},
    {"role":"assistant","content":"","tool_calls":[{"id":"6","name":"TodoWrite","arguments":{"todos":[{"content":"fix n/a","status":"in_progress"},{"content":"docs","status":"completed"}]}}]}
  ])");
  Facts f = extract_facts(s, 0, s.size());
  CHECK(f.first_user_request == "Fix the importer");
  CHECK(f.has_error);
  CHECK(f.first_error_line == "ValueError: invalid literal for int() with base 10: 'n/a'");
  CHECK(f.first_error_command == "python -m importer data.csv");
  REQUIRE(f.files.size() == 2);
  CHECK(f.files[0].path == "importer/cli.py");
  CHECK(f.files[0].status() == "read");
  CHECK(f.files[1].status() == "created");  // written twice; first write creates it
  CHECK(f.files[1].changes == std::vector<std::string>{"created (3 lines)", "rewritten (1 lines)"});
  REQUIRE(f.last_test.has_value());
  CHECK(f.last_test_failures ==
        std::vector<std::string>{"FAILED tests/test_parse.py::test_na - AssertionError", "FAILED tests/test_parse.py::test_empty"});
  REQUIRE(f.open_todos().size() == 1);
  CHECK(f.open_todos()[0].content == "fix n/a");
  // Only the first span: no test run yet.
  Facts g = extract_facts(s, 0, 3);
  CHECK_FALSE(g.last_test.has_value());
  CHECK(g.files.empty());
}

TEST_CASE("judge answers: strict JSON, every requested criterion, scores within 0-5", "[compression][unit]") {
  std::vector<std::string> req{"accuracy_factual", "accuracy_technical", "instruction_format"};
  std::map<std::string, double> w{{"accuracy_technical", 3}};
  auto mk = [](int a, int b, int c) {
    return json{{"criterionResults",
                 {{{"criterionId", "accuracy_factual"}, {"score", a}, {"reasoning", "r"}},
                  {{"criterionId", "accuracy_technical"}, {"score", b}, {"reasoning", "r"}},
                  {{"criterionId", "instruction_format"}, {"score", c}, {"reasoning", "r"}},
                  {{"criterionId", "continuity_reasoning"}, {"score", 0}, {"reasoning", "not asked"}}}}}
        .dump();
  };
  // accuracy = (1·5 + 3·1)/4 = 2; instruction = 4; aggregate = (2 + 4)/2 = 3.
  Judgement j = parse_judgement(mk(5, 1, 4), req, w);
  REQUIRE(j.valid);
  CHECK(j.dimension_scores.at("accuracy") == Approx(2.0));
  CHECK(j.dimension_scores.at("instruction_following") == Approx(4.0));
  CHECK(j.dimension_scores.size() == 2);
  CHECK(j.aggregate == Approx(3.0));
  CHECK(j.ignored == std::vector<std::string>{"continuity_reasoning"});
  CHECK(parse_judgement("```json\n" + mk(5, 1, 4) + "\n```", req, w).valid);
  CHECK(parse_judgement("Here you go: " + mk(5, 1, 4), req, w).invalid_reason == "not valid JSON");
  CHECK(parse_judgement(mk(5, 6, 4), req, w).invalid_reason == "criterion accuracy_technical has score 6 outside 0-5");
  CHECK(parse_judgement(mk(5, -1, 4), req, w).invalid_reason == "criterion accuracy_technical has score -1 outside 0-5");
  json missing = json::parse(mk(5, 1, 4));
  missing["criterionResults"].erase(1);
  CHECK(parse_judgement(missing.dump(), req, w).invalid_reason == "criterion accuracy_technical is missing");
  json twice = json::parse(mk(5, 1, 4));
  twice["criterionResults"].push_back(twice["criterionResults"][0]);
  CHECK(parse_judgement(twice.dump(), req, w).invalid_reason == "criterion accuracy_factual graded twice");
  json str = json::parse(mk(5, 1, 4));
  str["criterionResults"][0]["score"] = "5";
  CHECK(parse_judgement(str.dump(), req, w).invalid_reason == "criterion accuracy_factual has no numeric score");
  CHECK_FALSE(parse_judgement("[]", req, w).valid);
  CHECK_FALSE(parse_judgement("", req, w).valid);
}

TEST_CASE("the judge's prompt and the rubric name no method", "[compression][unit][blinding]") {
  std::string s = lower(judge_system_prompt());
  for (const char *w : {"anchored", "regenerative", "opaque", "iterative", "method"}) CHECK(s.find(w) == std::string::npos);
  CHECK(criteria().size() == 14);
  for (const auto &[type, list] : default_criteria_by_type())
    for (const auto &c : list) CHECK_FALSE(dimension_of(c).empty());
}

TEST_CASE("seeded permutation is fixed per seed and a permutation", "[compression][unit]") {
  auto a = seeded_permutation(10, 42), b = seeded_permutation(10, 42), c = seeded_permutation(10, 43);
  CHECK(a == b);
  CHECK(a != c);
  auto s = a;
  std::sort(s.begin(), s.end());
  for (std::size_t i = 0; i < s.size(); ++i) CHECK(s[i] == i);
  CHECK(seeded_permutation(0, 1).empty());
}

TEST_CASE("summary sections: parse, anchored merge, render", "[compression][unit]") {
  auto s1 = parse_sections(R"({"intent":"fix login","files":[{"path":"a.py","change":"guard"}],"decisions":[{"decision":"use get","rationale":"simpler","alternatives":["try/except","default dict"]}],"errors":["KeyError"],"current_state":"patched","next_steps":["test"]})");
  REQUIRE(s1);
  CHECK(s1->decisions[0].alternatives == "try/except; default dict");
  auto s2 = parse_sections(R"({"intent":"also add logging","decisions":[{"decision":"use get","rationale":"x"}],"current_state":"tested","next_steps":[]})");
  REQUIRE(s2);
  Sections m = *s1;
  merge_span(m, *s2);
  CHECK(m.intent == "fix login\nUpdate: also add logging");
  CHECK(m.decisions.size() == 1);
  CHECK(m.current_state == "tested");
  CHECK(m.next_steps == std::vector<std::string>{"test"});  // an empty list keeps the older steps
  CHECK_FALSE(parse_sections("not json"));
  CHECK_FALSE(parse_sections(R"({"files":"a.py"})"));
  std::vector<FileFacts> art(1);
  art[0].path = "a.py";
  art[0].modified = true;
  art[0].changes = {"replaced `x` with `y`"};
  std::string r = render_sections(m, &art);
  CHECK(r.find("- modified: a.py — replaced `x` with `y`; guard") != std::string::npos);
  CHECK(r.find("## Next steps\n- test\n") != std::string::npos);
}

TEST_CASE("aggregation: missing dimensions are null, both overall modes", "[compression][unit]") {
  json out = {{"methods", {{{"method", "m"}, {"label", "M"}, {"tokens_kept", 10}, {"tokens_history", 40}}}},
              {"results",
               {{{"method", "m"}, {"label", "M"}, {"probe_type", "recall"}, {"status", "valid"},
                 {"dimensionScores", {{"accuracy", 4.0}, {"completeness", 2.0}}}, {"aggregateScore", 3.0}},
                {{"method", "m"}, {"label", "M"}, {"probe_type", "decision"}, {"status", "valid"},
                 {"dimensionScores", {{"accuracy", 1.0}}}, {"aggregateScore", 1.0}},
                {{"method", "m"}, {"label", "M"}, {"probe_type", "decision"}, {"status", "invalid"}},
                {{"method", "m"}, {"label", "M"}, {"probe_type", "decision"}, {"status", "unanswered"}}}}};
  Aggregator a("answers");
  a.add(out);
  json r = a.result();
  // accuracy (4+1)/2 = 2.5, completeness 2; overall (answers) = (3+1)/2 = 2.
  CHECK(r["methods"][0]["dimensions"]["accuracy"] == 2.5);
  CHECK(r["methods"][0]["dimensions"]["continuity"].is_null());
  CHECK(r["methods"][0]["overall"] == 2.0);
  CHECK(r["methods"][0]["judge_calls"] == 3);
  CHECK(r["methods"][0]["invalid"] == 1);
  CHECK(r["methods"][0]["unanswered"] == 1);
  CHECK(r["methods"][0]["compression_ratio"] == 0.25);
  Aggregator b("dimensions");
  b.add(out);
  CHECK(b.result()["methods"][0]["overall"] == 2.25);  // (2.5 + 2)/2
  CHECK_THROWS(Aggregator("median"));
}

namespace {
// A fake host whose chat answers with the number of messages in the prompt's transcript section.
struct FakeHost {
  eg_host h{};
  int calls = 0;
  std::vector<std::string> prompts;
  FakeHost() {
    h.struct_size = sizeof(eg_host);
    h.host_data = this;
    h.chat = [](const eg_host *host, eg_call *, const char *, const char *req, size_t len, eg_buffer *out) -> eg_status {
      auto *self = static_cast<FakeHost *>(host->host_data);
      json body = json::parse(std::string(req, len));
      self->prompts.push_back(body["messages"][1]["content"]);
      ++self->calls;
      json resp = {{"choices", {{{"message", {{"role", "assistant"}, {"content", "S" + std::to_string(self->calls)}}}}}}};
      std::string s = resp.dump();
      auto *owned = new std::string(s);
      out->data = owned->data();
      out->size = owned->size();
      out->private_data = owned;
      out->release = [](eg_buffer *b) { delete static_cast<std::string *>(b->private_data); };
      return EG_OK;
    };
  }
};

// Records the spans it compresses in a vector owned by the test (the method itself dies with its session).
class LastSpan : public Method {
 public:
  explicit LastSpan(std::vector<std::pair<std::size_t, std::size_t>> &s) : spans(s) {}
  void compress(const Span &s) override {
    spans.emplace_back(s.from, s.to);
    text = compression::summarise(s.host, s.call, s.k, "sys", render_transcript(s.msgs, s.from, s.to));
    ++llm_calls;
  }
  std::string context() const override { return text; }
  std::string text;
  std::vector<std::pair<std::size_t, std::size_t>> &spans;
};

json records(int per_record, int n_records) {
  json recs = json::array();
  int i = 0;
  for (int r = 0; r < n_records; ++r) {
    json msgs = json::array();
    for (int k = 0; k < per_record; ++k) msgs.push_back({{"role", k % 2 ? "assistant" : "user"}, {"content", "m" + std::to_string(i++)}});
    recs.push_back({{"messages", msgs}});
  }
  return recs;
}
}  // namespace

TEST_CASE("compression triggers: checkpoints, every N messages, every N tokens", "[compression][unit]") {
  FakeHost fh;
  evalgraph::Host host(&fh.h);
  evalgraph::Call call(nullptr);
  std::vector<std::pair<std::size_t, std::size_t>> spans;
  auto make = [&] { return std::make_unique<LastSpan>(spans); };
  SECTION("checkpoints") {
    CompressionTransform t(knobs_params().parse(json{{"keep_recent", 3}}), "x", "X", make, host);
    json out = t.process_sequence(call, records(10, 2));
    // 10 messages → compress [0,7); 20 → [7,17).
    CHECK(spans == std::vector<std::pair<std::size_t, std::size_t>>{{0, 7}, {7, 17}});
    CHECK(out[0]["compressed_through"] == 7);
    CHECK(out[1]["context"] == "S2");
    CHECK(out[1]["recent"] == "[17] assistant: m17\n[18] user: m18\n[19] assistant: m19");
    CHECK(out[1]["llm_calls"] == 1);
  }
  SECTION("every 4 messages beyond the 2 kept") {
    CompressionTransform t(knobs_params().parse(json{{"keep_recent", 2}, {"trigger", "messages"}, {"every", 4}}), "x",
                           "X", make, host);
    json out = t.process_sequence(call, records(5, 3));
    // n=6 → [0,4); n=10 → [4,8); n=14 → [8,12). Checkpoints end at 5, 10, 15.
    CHECK(spans == std::vector<std::pair<std::size_t, std::size_t>>{{0, 4}, {4, 8}, {8, 12}});
    CHECK(out[0]["compressions"] == 0);
    CHECK(out[0]["context"] == "");
    CHECK(out[1]["compressed_through"] == 8);
    CHECK(out[2]["compressed_through"] == 12);
    CHECK(out[2]["messages_total"] == 15);
  }
  SECTION("every 20 tokens") {
    // "[i] user: mi" renders to 12 code points (3 tokens) for i < 10, "[1x] assistant: m1x" 19-20 (5 tokens).
    CompressionTransform t(knobs_params().parse(json{{"keep_recent", 1}, {"trigger", "tokens"}, {"every", 20}}), "x",
                           "X", make, host);
    t.process_sequence(call, records(12, 1));
    // messages 0..9: 3,4,3,4,... ("[1] assistant: m1" = 17 → 5 tokens): 0:3 1:5 2:3 3:5 4:3 5:5 → Σ0..5 = 24 ≥ 20 at n=6
    // → [0,5); then from 5: 5:5 6:3 7:5 8:3 9:5 → Σ5..9 = 21 at n=10 → [5,9).
    CHECK(spans == std::vector<std::pair<std::size_t, std::size_t>>{{0, 5}, {5, 9}});
  }
  CHECK_THROWS_WITH(CompressionTransform(knobs_params().parse(json{{"trigger", "messages"}}), "x", "X", make, host),
                    Catch::Contains("needs `every`"));
}

namespace {
// A Method that only shows what sections_of makes of a summariser's answer.
struct SectionsProbe : Method {
  void compress(const Span &) override {}
  std::string context() const override { return {}; }
  Sections read(const std::string &answer) { return sections_of(answer); }
};
}  // namespace

TEST_CASE("a method's sections: JSON answers parse, others count as a parse failure and become the current state", "[compression][unit]") {
  SectionsProbe m;
  CHECK(m.read(R"({"intent":"fix login","current_state":"patched"})").intent == "fix login");
  CHECK(m.parse_failures == 0);
  Sections s = m.read("  just prose\n");
  CHECK(m.parse_failures == 1);
  CHECK(s.intent.empty());
  CHECK(s.current_state == "just prose");
  const std::vector<const char *> w = transform_writes({"summary"});
  REQUIRE(w.size() == 15);
  CHECK(std::strcmp(w.front(), "method") == 0);
  CHECK(std::strcmp(w[13], "parse_failures") == 0);
  CHECK(std::strcmp(w.back(), "summary") == 0);
}

namespace {
// A fake host whose chat_batch answers with `reply` (a JSON array), whatever was asked.
struct BatchHost {
  eg_host h{};
  std::string reply;
  int calls = 0;
  explicit BatchHost(std::string r) : reply(std::move(r)) {
    h.struct_size = sizeof(eg_host);
    h.host_data = this;
    h.chat_batch = [](const eg_host *host, eg_call *, const char *, const char *, size_t, eg_buffer *out) -> eg_status {
      auto *self = static_cast<BatchHost *>(host->host_data);
      ++self->calls;
      evalgraph::detail::fill_buffer(out, self->reply);  // released by the SDK's callback, as a plugin's answer
      return EG_OK;
    };
  }
};
}  // namespace

TEST_CASE("chat_batch_texts: answers in order, the host's error or a response without text in place of an answer", "[compression][unit]") {
  BatchHost fake(R"([{"ok":true,"response":{"choices":[{"message":{"content":"A1"}}]}},
                     {"ok":false,"error":"HTTP 500"},
                     {"ok":true,"response":{"choices":[]}}])");
  evalgraph::Host host(&fake.h);
  evalgraph::Call call(nullptr);
  const json three = json::array({chat_request("s", "1", 0, 0), chat_request("s", "2", 0, 0), chat_request("s", "3", 0, 0)});
  const std::vector<BatchAnswer> a = chat_batch_texts(host, call, "", three);
  REQUIRE(a.size() == 3);
  CHECK((a[0].ok && a[0].text == "A1"));
  CHECK((!a[1].ok && a[1].text == "HTTP 500"));
  CHECK((!a[2].ok && a[2].text == "the LLM response has no choices[0].message.content"));
  CHECK(chat_batch_texts(host, call, "", json::array()).empty());
  CHECK(fake.calls == 1);  // no requests: no call
  CHECK_THROWS_WITH(chat_batch_texts(host, call, "p", json::array({three[0]})), "chat_batch returned 3 answers for 1 requests");
}

TEST_CASE("compression.answer: one request per probe with the method's context, the answers or errors per probe", "[compression][unit]") {
  const AnswerOptions o{};
  const json in = {{"compressed", {{"context", "C1"}, {"recent", "R1"}, {"method", "anchored_iterative"}, {"label", "Anchored"}}},
                   {"probes", {{"probes", {{{"id", "p1"}, {"question", "Q1?"}}, {{"question", "Q2?"}}}}, {"tokens_history", 40}}}};
  const ProbeAnswers a(in, o);
  REQUIRE(a.requests().size() == 2);
  const std::string user = a.requests()[1]["messages"][1]["content"];
  CHECK(user == "## Compressed context\nC1\n\n## Most recent messages\nR1\n\n## Question\nQ2?");
  const json out = a.output({BatchAnswer{true, "A1"}, BatchAnswer{false, "HTTP 500"}});
  CHECK(out["method"] == "anchored_iterative");
  CHECK(out["label"] == "Anchored");
  CHECK(out["tokens_history"] == 40);
  CHECK(out["answers"] == json::parse(R"([{"probe_id":"p1","answer":"A1"},{"probe_id":"2","answer":null,"error":"HTTP 500"}])"));
  CHECK(out["answered"] == 1);
  CHECK(out["failed"] == 1);
  const ProbeAnswers text_column(json{{"compressed", "plain"}, {"probes", json::array()}}, o);
  CHECK(text_column.output({})["method"] == "custom");
  CHECK_THROWS_AS(ProbeAnswers(json{{"compressed", 3}, {"probes", json::array()}}, o), evalgraph::InputError);
}
