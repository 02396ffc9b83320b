// End-to-end runs of the compression evaluation against the scripted loopback LLM server: the three
// compression transforms, probes, answers, the blind judge and the report, with hand-computed numbers.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "config/pipeline.h"
#include "exec/executor.h"
#include "exec/host.h"
#include "graph/plan.h"
#include "llm/llm_service.h"
#include "plugin/registry.h"
#include "test_llm_server.h"
#include "test_registry.h"
#include "test_support.h"

using namespace evalgraph;
using nlohmann::json;
using evalgraph::testing::Rule;
using evalgraph::testing::TestLlmServer;
namespace fs = std::filesystem;

namespace {

using testsupport::read_jsonl;
using testsupport::TempDir;
const auto slurp = testsupport::read_file;

using testsupport::registry;

struct Run {
  TempDir dir;
  RunResult result;
  std::vector<json> records;
  json report;
  fs::path run_dir;
};

void run_pipeline(Run &r, const std::string &data, const std::string &yaml) {
  r.dir.write("sessions.jsonl", data);
  fs::path file = r.dir.write("p.yaml", yaml);
  Pipeline p = load_pipeline(file);
  Plan plan = build_plan(p, registry(), read_dataset_columns(p));
  std::vector<llm::ProviderConfig> providers;
  for (const auto &d : p.providers) providers.push_back(llm::provider_from_json(d.name, d.config));
  llm::CacheOptions cache;
  cache.path = (r.dir.path / "cache.sqlite").string();
  auto svc = std::make_shared<llm::LlmService>(providers, cache);
  HostServices host(svc, p.default_provider, p.embedding_provider);
  host.set_min_stderr_level(EG_LOG_ERROR);
  RunOptions opt;
  opt.jobs = 2;
  opt.run_dir = r.dir.path / "run";
  r.run_dir = opt.run_dir;
  r.result = run_plan(p, plan, host, opt);
  r.records = read_jsonl(opt.run_dir / "out.jsonl");
  if (fs::exists(opt.run_dir / "compression_report.json")) r.report = json::parse(slurp(opt.run_dir / "compression_report.json"));
}

// One debugging session in two checkpoint records (spans of 6 and 4 messages), one JSON object per line.
const char *kCheckpoint1 = R"JSON({"session_id":"t1","checkpoint":1,"task":"debugging","messages":[
 {"role":"user","content":"The login endpoint returns 500 since the upgrade. Please fix it."},
 {"role":"assistant","content":"Let me run the login tests first.","tool_calls":[{"id":"c1","name":"run_command","arguments":{"command":"pytest tests/test_login.py"}}]},
 {"role":"tool","tool_call_id":"c1","name":"run_command","exit_code":1,"content":"FAILED tests/test_login.py::test_login_ok - KeyError: 'user_id'\n1 failed in 0.12s"},
 {"role":"assistant","content":"","tool_calls":[{"id":"c2","name":"read_file","arguments":{"path":"app/auth.py"}}]},
 {"role":"tool","tool_call_id":"c2","name":"read_file","content":"def login(req):\n    uid = req.session['user_id']\n"},
 {"role":"assistant","content":"I will read the key with session.get rather than wrapping it in try/except, because a missing key is a normal state for new visitors.","tool_calls":[{"id":"c3","name":"edit_file","arguments":{"path":"app/auth.py","old_str":"uid = req.session['user_id']","new_str":"uid = req.session.get('user_id')"}}]}]})JSON";
const char *kCheckpoint2 = R"JSON({"session_id":"t1","checkpoint":2,"task":"debugging","messages":[
 {"role":"tool","tool_call_id":"c3","name":"edit_file","content":"edited app/auth.py"},
 {"role":"assistant","content":"Adding a regression test.","tool_calls":[{"id":"c4","name":"create_file","arguments":{"path":"tests/test_session.py","content":"def test_missing_key():\n    assert True\n"}}]},
 {"role":"tool","tool_call_id":"c4","name":"create_file","content":"created tests/test_session.py"},
 {"role":"assistant","content":"Updating the task list.","tool_calls":[{"id":"c5","name":"todo_write","arguments":{"todos":[{"content":"Add regression test","status":"completed"},{"content":"Update CHANGELOG","status":"pending"}]}}]}]})JSON";
const std::string kSession = json::parse(kCheckpoint1).dump() + "\n" + json::parse(kCheckpoint2).dump() + "\n";

std::string scores_reply(const std::map<std::string, int> &s) {
  json cr = json::array();
  for (const auto &[id, v] : s) cr.push_back({{"criterionId", id}, {"score", v}, {"reasoning", "scripted"}});
  return json{{"criterionResults", cr}, {"aggregateScore", 9.9}, {"dimensionScores", {{"accuracy", 9.9}}}}.dump();
}

// Scripted judge scores per method (every criterion is graded; the judge node keeps only the requested ones).
const std::map<std::string, int> kAlpha{{"accuracy_factual", 5}, {"accuracy_technical", 4}, {"context_conversation_state", 3},
                                        {"context_artifact_state", 4}, {"artifact_files_created", 3}, {"artifact_files_modified", 5},
                                        {"artifact_key_details", 4}, {"completeness_coverage", 5}, {"completeness_depth", 3},
                                        {"continuity_work_state", 4}, {"continuity_todo_state", 3}, {"continuity_reasoning", 5},
                                        {"instruction_format", 5}, {"instruction_constraints", 4}};
const std::map<std::string, int> kBeta{{"accuracy_factual", 4}, {"accuracy_technical", 3}, {"context_conversation_state", 3},
                                       {"context_artifact_state", 3}, {"artifact_files_created", 2}, {"artifact_files_modified", 4},
                                       {"artifact_key_details", 3}, {"completeness_coverage", 4}, {"completeness_depth", 3},
                                       {"continuity_work_state", 3}, {"continuity_todo_state", 2}, {"continuity_reasoning", 4},
                                       {"instruction_format", 5}, {"instruction_constraints", 4}};
const std::map<std::string, int> kGamma{{"accuracy_factual", 3}, {"accuracy_technical", 3}, {"context_conversation_state", 3},
                                        {"context_artifact_state", 2}, {"artifact_files_created", 1}, {"artifact_files_modified", 2},
                                        {"artifact_key_details", 2}, {"completeness_coverage", 4}, {"completeness_depth", 3},
                                        {"continuity_work_state", 4}, {"continuity_todo_state", 4}, {"continuity_reasoning", 3},
                                        {"instruction_format", 4}, {"instruction_constraints", 4}};

void script_server(TestLlmServer &srv) {
  // 1. Judge requests (their last user message is the judge input JSON, keys sorted: compacted_context,
  //    ground_truth, model_response, probe_question, rubric_criteria).
  //    Invalid on purpose:
  //    - Alpha's recall answer at checkpoint 2 (the recent messages hold message [8]): a criterion is missing.
  auto alpha_missing = kAlpha;
  alpha_missing.erase("artifact_key_details");
  srv.add_rule({.match = R"(\[8\] tool[\s\S]*"model_response": "ANS-ALPHA",\s*"probe_question": "What was the exact)",
                .regex = true, .reply = scores_reply(alpha_missing)});
  //    - Beta's continuation answer at checkpoint 2 (its ground truth lists the open task): a score of 7.
  auto beta_seven = kBeta;
  beta_seven["continuity_todo_state"] = 7;
  srv.add_rule({.match = R"(Open tasks: \[pending\] Update CHANGELOG\.",\s*"model_response": "ANS-BETA")", .regex = true,
                .reply = scores_reply(beta_seven)});
  //    - Gamma's artifact answer at checkpoint 1 (nothing created yet): not JSON at all.
  srv.add_rule({.match = R"(Created: none\.[^"]*",\s*"model_response": "ANS-GAMMA")", .regex = true,
                .reply = "The answer looks fine to me, I would give it a 4."});
  srv.add_rule({.match = "\"model_response\": \"ANS-ALPHA\"", .reply = scores_reply(kAlpha)});
  srv.add_rule({.match = "\"model_response\": \"ANS-BETA\"", .reply = scores_reply(kBeta)});
  srv.add_rule({.match = "\"model_response\": \"ANS-GAMMA\"", .reply = scores_reply(kGamma)});
  // 2. Decision probes.
  srv.add_rule({.match = "most important decision(s)",
                .reply = R"({"decisions":[{"question":"Why was the session key read with session.get?","answer":"A missing key is normal for new visitors; try/except was the alternative."}]})"});
  // 3. Summaries: each method's own marker (ALPHA / BETA / GAMMA), never its name.
  srv.add_rule({.match = "summarise ONLY the new messages",
                .reply = R"({"intent":"ALPHA fix the login 500","files":[{"path":"app/auth.py","change":"session.get for user_id"}],"decisions":[{"decision":"use session.get","rationale":"missing key is normal","alternatives":"try/except"}],"errors":["KeyError: 'user_id'"],"current_state":"fix applied","next_steps":["run the tests"]})"});
  srv.add_rule({.match = "Write the complete structured summary",
                .reply = R"({"intent":"BETA fix the login 500","files":[],"decisions":[],"errors":[],"current_state":"working","next_steps":[]})"});
  srv.add_rule({.match = "Compact the conversation", .reply = "GAMMA the agent fixed a KeyError in the login."});
  // 4. Answers: by the marker in the compressed context. Gamma's decision answer fails (HTTP 400).
  srv.add_rule({.match = R"(GAMMA[\s\S]*## Question\nWhy was the session key)", .regex = true,
                .fault = evalgraph::testing::Fault::http_status, .status = 400, .error_message = "scripted refusal"});
  srv.add_rule({.match = "ALPHA", .reply = "ANS-ALPHA"});
  srv.add_rule({.match = "BETA", .reply = "ANS-BETA"});
  srv.add_rule({.match = "GAMMA", .reply = "ANS-GAMMA"});
}

std::string pipeline_yaml(const TestLlmServer &srv, const std::string &overall = "answers") {
  return "name: compression-test\n"
         "dataset: {path: sessions.jsonl}\n"
         "providers:\n"
         "  llm: {base_url: \"" + srv.base_url() + "\", model: test-model, max_attempts: 2, backoff_initial_s: 0.01}\n"
         "nodes:\n"
         "  - {id: anchored, uses: compression.anchored, group_by: session_id, order_by: checkpoint, with: {keep_recent: 2}}\n"
         "  - {id: regen, uses: compression.regenerative, group_by: session_id, order_by: checkpoint, with: {keep_recent: 2}}\n"
         "  - {id: opaque, uses: compression.opaque, group_by: session_id, order_by: checkpoint, with: {keep_recent: 2}}\n"
         "  - {id: probe_gen, uses: compression.probes, group_by: session_id, order_by: checkpoint}\n"
         "  - {id: ans_anchored, uses: compression.answer, inputs: {compressed: anchored, probes: probe_gen}}\n"
         "  - {id: ans_regen, uses: compression.answer, inputs: {compressed: regen, probes: probe_gen}}\n"
         "  - {id: ans_opaque, uses: compression.answer, inputs: {compressed: opaque, probes: probe_gen}}\n"
         "  - id: judge\n"
         "    uses: compression.judge\n"
         "    inputs: {probes: probe_gen, answers_1: ans_anchored, answers_2: ans_regen, answers_3: ans_opaque}\n"
         "    with:\n"
         "      seed: 7\n"
         "      criterion_weights: {artifact_files_modified: 3}\n"
         "      criteria_by_probe_type:\n"
         "        recall: [accuracy_factual, artifact_key_details, instruction_format]\n"
         "        artifact: [artifact_files_created, artifact_files_modified, context_artifact_state]\n"
         "        continuation: [continuity_todo_state, continuity_work_state, completeness_coverage]\n"
         "        decision: [continuity_reasoning, accuracy_technical]\n"
         "sinks:\n"
         "  - {uses: sink.jsonl, with: {file: out.jsonl}}\n"
         "  - {uses: compression.report, with: {overall: " + overall + "}}\n";
}

const json &method_row(const json &report, const std::string &method) {
  const json &rows = report["methods"];
  const auto row = std::find_if(rows.begin(), rows.end(), [&](const json &m) { return m["method"] == method; });
  INFO("no report row for " << method);
  REQUIRE(row != rows.end());
  return *row;
}

double d(const json &v) { return v.get<double>(); }

}  // namespace

TEST_CASE("three methods end to end: exact aggregates, invalid and unanswered counts", "[compression][pipeline]") {
  TestLlmServer srv;
  script_server(srv);
  Run r;
  run_pipeline(r, kSession, pipeline_yaml(srv));
  REQUIRE(r.records.size() == 2);
  REQUIRE(r.result.failed_records == 0);

  // Compression: keep_recent 2 → checkpoint 1 (6 messages) compresses [0,4), checkpoint 2 (10) [4,8).
  const json &a1 = r.records[0]["anchored"];
  const json &a2 = r.records[1]["anchored"];
  CHECK(a1["compressed_through"] == 4);
  CHECK(a2["compressed_through"] == 8);
  CHECK(a2["compressions"] == 2);
  CHECK(a1["llm_calls"] == 1);
  // The anchored artifact list is deterministic: created/modified come from the tool calls, not the LLM.
  CHECK(a2["context"].get<std::string>().find("- created: tests/test_session.py — created (2 lines)") != std::string::npos);
  CHECK(a2["context"].get<std::string>().find("- modified: app/auth.py") != std::string::npos);
  // The span summary was merged twice; the decision is kept once.
  CHECK(a2["summary"]["decisions"].size() == 1);
  CHECK(r.records[1]["regen"]["context"].get<std::string>().find("BETA fix the login 500") != std::string::npos);
  CHECK(r.records[1]["opaque"]["stand_in"].is_string());
  CHECK(r.records[1]["opaque"]["label"] == "Opaque (stand-in)");

  // Probes: 4 per checkpoint with deterministic expected answers.
  const json &p1 = r.records[0]["probe_gen"]["probes"];
  const json &p2 = r.records[1]["probe_gen"]["probes"];
  REQUIRE(p1.size() == 4);
  REQUIRE(p2.size() == 4);
  CHECK(p1[0]["expected"] == "The command `pytest tests/test_login.py` failed with: FAILED tests/test_login.py::test_login_ok - KeyError: 'user_id'");
  CHECK(p1[1]["expected"] == "Created: none. Modified: app/auth.py — replaced `uid = req.session['user_id']` with "
                             "`uid = req.session.get('user_id')`. Read without changes: none.");
  CHECK(p2[2]["expected"] == "The last test run (`pytest tests/test_login.py`) failed: FAILED tests/test_login.py::test_login_ok - "
                             "KeyError: 'user_id'. Open tasks: [pending] Update CHANGELOG.");
  CHECK(p2[3]["type"] == "decision");
  CHECK(p2[3]["source"] == "llm");

  const json &rep = r.report;
  REQUIRE(rep.is_object());
  // Per-answer scores (requested criteria only; artifact_files_modified weighs 3):
  //   Alpha: recall  acc 5, art 4, ins 5 → 14/3      artifact art (3+3·5)/4 = 4.5, ctx 4 → 4.25
  //          contin. cont (3+4)/2 = 3.5, compl 5 → 4.25      decision cont 5, acc 4 → 4.5
  //   Beta:  recall 4,3,5 → 4   artifact (2+12)/4 = 3.5, ctx 3 → 3.25   contin. 2.5, 4 → 3.25   decision 4, 3 → 3.5
  //   Gamma: recall 3,2,4 → 3   artifact (1+6)/4 = 1.75, ctx 2 → 1.875  contin. 4, 4 → 4      decision: unanswered
  // Invalid: Alpha recall @2 (missing criterion), Beta continuation @2 (score 7), Gamma artifact @1 (not JSON).
  //
  // Alpha (7 valid): accuracy (5+4+4)/3 = 13/3; context (4+4)/2 = 4; artifact (4+4.5+4.5)/3 = 13/3;
  //   completeness 5; continuity (3.5+3.5+5+5)/4 = 4.25; instruction 5;
  //   overall = (14/3 + 4.25·4 + 4.5·2)/7 = 92/21.
  const json &A = method_row(rep, "anchored_iterative");
  CHECK(A["label"] == "Anchored Iterative");
  CHECK(d(A["overall"]) == Approx(92.0 / 21.0).epsilon(1e-12));
  CHECK(d(A["dimensions"]["accuracy"]) == Approx(13.0 / 3.0).epsilon(1e-12));
  CHECK(d(A["dimensions"]["context_awareness"]) == Approx(4.0).epsilon(1e-12));
  CHECK(d(A["dimensions"]["artifact_trail"]) == Approx(13.0 / 3.0).epsilon(1e-12));
  CHECK(d(A["dimensions"]["completeness"]) == Approx(5.0).epsilon(1e-12));
  CHECK(d(A["dimensions"]["continuity"]) == Approx(4.25).epsilon(1e-12));
  CHECK(d(A["dimensions"]["instruction_following"]) == Approx(5.0).epsilon(1e-12));
  CHECK(A["valid"] == 7);
  CHECK(A["invalid"] == 1);
  CHECK(A["judge_calls"] == 8);
  CHECK(A["unanswered"] == 0);
  // Beta (7 valid): accuracy (4+4+3+3)/4 = 3.5; context 3; artifact (3+3+3.5+3.5)/4 = 3.25; completeness 4
  //   (continuation @1 only); continuity (2.5+4+4)/3 = 3.5; instruction 5;
  //   overall = (4+3.25+3.25+3.5 + 4+3.25+3.5)/7 = 24.75/7.
  const json &B = method_row(rep, "regenerative");
  CHECK(d(B["overall"]) == Approx(24.75 / 7.0).epsilon(1e-12));
  CHECK(d(B["dimensions"]["accuracy"]) == Approx(3.5).epsilon(1e-12));
  CHECK(d(B["dimensions"]["context_awareness"]) == Approx(3.0).epsilon(1e-12));
  CHECK(d(B["dimensions"]["artifact_trail"]) == Approx(3.25).epsilon(1e-12));
  CHECK(d(B["dimensions"]["completeness"]) == Approx(4.0).epsilon(1e-12));
  CHECK(d(B["dimensions"]["continuity"]) == Approx(3.5).epsilon(1e-12));
  CHECK(d(B["dimensions"]["instruction_following"]) == Approx(5.0).epsilon(1e-12));
  CHECK(B["valid"] == 7);
  CHECK(B["invalid"] == 1);
  // Gamma (5 valid: recall ×2, continuation ×2, artifact @2): accuracy 3; context 2; artifact (2+2+1.75)/3 = 5.75/3;
  //   completeness 4; continuity 4; instruction 4; overall = (3+3+4+4+1.875)/5 = 3.175.
  const json &G = method_row(rep, "opaque");
  CHECK(d(G["overall"]) == Approx(3.175).epsilon(1e-12));
  CHECK(d(G["dimensions"]["accuracy"]) == Approx(3.0).epsilon(1e-12));
  CHECK(d(G["dimensions"]["context_awareness"]) == Approx(2.0).epsilon(1e-12));
  CHECK(d(G["dimensions"]["artifact_trail"]) == Approx(5.75 / 3.0).epsilon(1e-12));
  CHECK(d(G["dimensions"]["completeness"]) == Approx(4.0).epsilon(1e-12));
  CHECK(d(G["dimensions"]["continuity"]) == Approx(4.0).epsilon(1e-12));
  CHECK(d(G["dimensions"]["instruction_following"]) == Approx(4.0).epsilon(1e-12));
  CHECK(G["valid"] == 4 + 1);
  CHECK(G["invalid"] == 1);
  CHECK(G["unanswered"] == 2);
  CHECK(G["judge_calls"] == 6);
  // Totals: 8 + 8 + 6 judge calls, 3 invalid, 2 unanswered; the server saw exactly those judge requests.
  CHECK(rep["totals"]["judge_calls"] == 22);
  CHECK(rep["totals"]["invalid"] == 3);
  CHECK(rep["totals"]["unanswered"] == 2);
  CHECK(rep["totals"]["judge_errors"] == 0);

  // By probe type: Alpha recall has one valid answer (14/3); Gamma has no decision row (all unanswered).
  bool seen_alpha_recall = false;
  for (const auto &b : rep["by_probe_type"]) {
    if (b["method"] == "anchored_iterative" && b["probe_type"] == "recall") {
      seen_alpha_recall = true;
      CHECK(b["answers"] == 1);
      CHECK(d(b["overall"]) == Approx(14.0 / 3.0).epsilon(1e-12));
      CHECK(b["dimensions"]["continuity"].is_null());
    }
    CHECK_FALSE((b["method"] == "opaque" && b["probe_type"] == "decision"));
  }
  CHECK(seen_alpha_recall);

  // Invalid answers are kept with their raw text and never scored.
  long invalid_seen = 0;
  for (const auto &rec : r.records)
    for (const auto &res : rec["judge"]["results"])
      if (res["status"] == "invalid") {
        ++invalid_seen;
        CHECK(res["raw"].is_string());
        CHECK_FALSE(res.contains("dimensionScores"));
        CHECK_FALSE(res.contains("aggregateScore"));
      }
  CHECK(invalid_seen == 3);
  CHECK(r.records[0]["judge"]["results"][0]["status"] == "valid");

  // Compression ratio = Σ tokens kept / Σ tokens of the history, from the transforms' own counts.
  for (const auto &[node, method] : std::vector<std::pair<std::string, std::string>>{
           {"anchored", "anchored_iterative"}, {"regen", "regenerative"}, {"opaque", "opaque"}}) {
    double kept = 0, hist = 0;
    for (const auto &rec : r.records) {
      kept += d(rec[node]["tokens_kept"]);
      hist += d(rec[node]["tokens_history"]);
    }
    CHECK(d(method_row(rep, method)["compression_ratio"]) == Approx(kept / hist).epsilon(1e-12));
    CHECK(d(method_row(rep, method)["tokens_kept"]) == kept);
  }

  // The files of the report.
  for (const char *f : {"compression_report.md", "compression_report.csv", "compression_report_by_probe_type.csv",
                        "compression_report.png"})
    CHECK(fs::exists(r.run_dir / f));
  std::string md = slurp(r.run_dir / "compression_report.md");
  CHECK(md.find("| Anchored Iterative | 4.38 | 4.33 | 4.00 | 4.33 | 5.00 | 4.25 | 5.00 | 7 | 1 |") != std::string::npos);
  CHECK(md.find("| Opaque (stand-in) | 3.17 |") != std::string::npos);  // 3.175 rounds half-to-even in binary → 3.17
  CHECK(md.find("stand-in") != std::string::npos);
  std::string csv = slurp(r.run_dir / "compression_report.csv");
  CHECK(csv.find("regenerative,Regenerative,3.5357,3.5000,3.0000,3.2500,4.0000,3.5000,5.0000,7,1,0,0,8,2,") != std::string::npos);
  std::string png = slurp(r.run_dir / "compression_report.png");
  REQUIRE(png.size() > 8);
  CHECK(png.substr(1, 3) == "PNG");
}

TEST_CASE("the judge is blind: no method name, label or id in any judge request, and a shuffled order",
          "[compression][pipeline][blinding]") {
  TestLlmServer srv;
  script_server(srv);
  Run r;
  run_pipeline(r, kSession, pipeline_yaml(srv));
  REQUIRE(r.result.failed_records == 0);
  std::size_t judge_requests = 0;
  const std::vector<std::string> forbidden{"anchored", "iterative", "regenerative", "regen", "opaque", "stand-in",
                                           "ans_", "answers_", "slot", "probe_gen", "recall-1", "artifact-1",
                                           "continuation-1", "decision-1"};
  for (const auto &req : srv.requests()) {
    json body = json::parse(req.body);
    std::string last_user;
    for (const auto &m : body["messages"])
      if (m["role"] == "user") last_user = m["content"];
    if (last_user.find("\"rubric_criteria\"") == std::string::npos) continue;
    ++judge_requests;
    std::string lower = req.body;
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
    for (const auto &w : forbidden) {
      INFO("judge request contains '" << w << "'");
      CHECK(lower.find(w) == std::string::npos);
    }
    // The judge input is exactly the seed's shape.
    json input = json::parse(last_user);
    std::vector<std::string> keys;
    for (const auto &[k, v] : input.items()) keys.push_back(k);
    CHECK(keys == std::vector<std::string>{"compacted_context", "ground_truth", "model_response", "probe_question", "rubric_criteria"});
  }
  CHECK(judge_requests == 22);
  // Within a checkpoint the answers are sent in a seeded random order, not grouped by method.
  for (const auto &rec : r.records) {
    std::vector<std::pair<long, int>> order;  // (position in the batch, slot)
    for (const auto &res : rec["judge"]["results"])
      if (res.contains("order")) order.emplace_back(res["order"].get<long>(), res["slot"].get<int>());
    std::sort(order.begin(), order.end());
    std::vector<int> slots;
    for (auto &[pos, slot] : order) slots.push_back(slot);
    std::vector<int> grouped = slots;
    std::stable_sort(grouped.begin(), grouped.end());
    CHECK(slots != grouped);
    for (std::size_t i = 0; i < order.size(); ++i) CHECK(order[i].first == static_cast<long>(i));
  }
}

TEST_CASE("a compressed context of one's own, supplied probes only, default criteria and the dimensions mode",
          "[compression][pipeline]") {
  TestLlmServer srv;
  // Every criterion 4 except accuracy_factual 2 and instruction_format 5.
  std::map<std::string, int> s;
  for (const auto &[k, v] : kAlpha) s[k] = 4;
  s["accuracy_factual"] = 2;
  s["instruction_format"] = 5;
  srv.add_rule({.match = "\"rubric_criteria\"", .reply = scores_reply(s)});
  srv.add_rule({.match = "", .reply = "ANS-DELTA"});
  std::string data =
      R"({"session_id":"u","checkpoint":1,"my_ctx":"DELTA: login fixed in app/auth.py","probes":[{"type":"recall","question":"Which key was missing?","expected":"user_id","criteria":["accuracy_factual","instruction_format"]},{"type":"artifact","question":"Which files changed?"}],"messages":[{"role":"user","content":"fix login"}]})"
      "\n";
  std::string yaml = "name: own\ndataset: {path: sessions.jsonl}\nproviders:\n  llm: {base_url: \"" + srv.base_url() +
                     "\", model: m}\nnodes:\n"
                     "  - {id: probe_gen, uses: compression.probes, group_by: session_id, order_by: checkpoint, with: {supplied: only}}\n"
                     "  - {id: ans_mine, uses: compression.answer, inputs: {compressed: my_ctx, probes: probe_gen}, with: {method: mine, label: Mine}}\n"
                     "  - {id: judge, uses: compression.judge, inputs: {probes: probe_gen, answers_1: ans_mine}}\n"
                     "sinks:\n  - {uses: sink.jsonl, with: {file: out.jsonl}}\n  - {uses: compression.report, with: {overall: dimensions, chart: false}}\n";
  Run r;
  run_pipeline(r, data, yaml);
  REQUIRE(r.result.failed_records == 0);
  const json &probes = r.records[0]["probe_gen"]["probes"];
  REQUIRE(probes.size() == 2);  // supplied: only → no generated probes, no decision LLM call
  CHECK(probes[0]["source"] == "dataset");
  // recall (own criteria): accuracy 2, instruction 5 → overall 3.5.
  // artifact (default: accuracy_factual, context_artifact_state, artifact_files_created, artifact_files_modified,
  //   artifact_key_details, completeness_coverage, completeness_depth, instruction_format):
  //   accuracy 2, context 4, artifact 4, completeness 4, instruction 5.
  // Columns: accuracy (2+2)/2 = 2; context 4; artifact 4; completeness 4; continuity — (no data); instruction 5.
  // Overall in the dimensions mode = mean of the five columns with data = (2+4+4+4+5)/5 = 3.8.
  const json &M = method_row(r.report, "mine");
  CHECK(M["label"] == "Mine");
  CHECK(d(M["overall"]) == Approx(3.8).epsilon(1e-12));
  CHECK(M["dimensions"]["continuity"].is_null());
  CHECK(d(M["dimensions"]["accuracy"]) == Approx(2.0).epsilon(1e-12));
  CHECK(M["judge_calls"] == 2);
  CHECK(M["checkpoints"] == 1);
  // The custom context went to the model as is.
  bool saw = false;
  for (const auto &req : srv.requests())
    if (req.body.find("DELTA: login fixed in app/auth.py") != std::string::npos) saw = true;
  CHECK(saw);
  CHECK_FALSE(fs::exists(r.run_dir / "compression_report.png"));
  CHECK(slurp(r.run_dir / "compression_report.md").find("| Mine | 3.80 | 2.00 | 4.00 | 4.00 | 4.00 | — | 5.00 | 2 | 0 |") !=
        std::string::npos);
}

TEST_CASE("the shipped pipeline validates against the shipped sessions", "[compression][pipeline]") {
  Pipeline p = load_pipeline(fs::path(REPO_DIR) / "pipelines" / "compression-eval.yaml");
  auto cols = read_dataset_columns(p);
  Plan plan = build_plan(p, registry(), cols);
  CHECK(plan.group_by == "session_id");
  CHECK(plan.nodes.size() == 8);
  // Every session of the sample is long enough and every record holds a span.
  std::ifstream in(p.dataset.path);
  std::string line;
  std::map<std::string, std::size_t> messages;
  std::map<std::string, std::string> task;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    json j = json::parse(line);
    messages[j["session_id"]] += j["messages"].size();
    task[j["session_id"]] = j["task"];
  }
  REQUIRE(messages.size() >= 3);
  std::set<std::string> tasks;
  for (const auto &[id, n] : messages) {
    INFO(id);
    CHECK(n >= 150);
    tasks.insert(task[id]);
  }
  CHECK(tasks.count("debugging") == 1);
  CHECK(tasks.count("feature") == 1);
  CHECK(tasks.count("review") == 1);
}
