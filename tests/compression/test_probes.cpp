// Unit tests of compression.probes' computation (plugins/operators/compression_probes/probes.hpp): the
// extracted probes and their expected answers, supplied-probe checks, the decision answer parser and where
// decision probes go.
#include <catch2/catch.hpp>

#include <stdexcept>

#include "compression/session.hpp"
#include "probes.hpp"

using namespace compression;

TEST_CASE("probes: extracted recall, artifact and continuation answers from the facts", "[compression][unit]") {
  std::vector<Message> s;
  append_messages(s, json::parse(R"([
    {"role":"user","content":"Fix the importer"},
    {"role":"assistant","content":"","tool_calls":[{"id":"1","name":"read_file","arguments":{"path":"a.py"}},{"id":"2","name":"write_file","arguments":{"path":"b.py","content":"x\ny"}}]},
    {"role":"tool","tool_call_id":"1","content":"..."},
    {"role":"tool","tool_call_id":"2","content":"ok"}
  ])"), "test");
  Facts f = extract_facts(s, 0, s.size());
  json p = extracted_probes(f, {"recall", "artifact", "continuation"});
  REQUIRE(p.size() == 3);
  CHECK(p[0]["id"] == "recall-1");
  CHECK(p[0]["expected"] == "The user asked: Fix the importer");
  CHECK(p[1]["expected"] == "Created: b.py — created (2 lines). Modified: none. Read without changes: a.py.");
  CHECK(p[2]["expected"] == "No test has been run yet.");
  CHECK(p[2]["source"] == "extracted");
  CHECK(extracted_probes(f, {"artifact"}).size() == 1);
  json facts = facts_summary(f);
  CHECK(facts["files_created"] == json::array({"b.py"}));
  CHECK(facts["files_read"] == json::array({"a.py"}));
  CHECK(facts["first_error"].is_null());
}

TEST_CASE("probes: supplied probes are checked, decision probes go before them", "[compression][unit]") {
  json probes = json::array({probe("artifact-1", "artifact", "q", "e", "extracted")});
  probes.push_back(supplied_probe(json{{"type", "recall"}, {"question", "Q?"}}, 1, "checkpoint 1"));
  CHECK(probes[1]["id"] == "dataset-1");
  CHECK(probes[1]["expected"] == "");
  CHECK_THROWS_AS(supplied_probe(json{{"type", "nope"}, {"question", "Q?"}}, 2, "checkpoint 1"), std::invalid_argument);
  CHECK_THROWS_AS(supplied_probe(json{{"question", "Q?"}}, 2, "checkpoint 1"), std::invalid_argument);

  CHECK_FALSE(parse_decisions("not json").has_value());
  CHECK_FALSE(parse_decisions(R"({"decisions":[{"question":" ","answer":"a"}]})").has_value());
  auto d = parse_decisions(R"({"decisions":[{"question":" Why X? ","answer":"Y was slower."},{"question":"Why Z?","answer":"W."}]})");
  REQUIRE(d.has_value());
  REQUIRE(d->size() == 2);
  CHECK((*d)[0].first == "Why X?");
  insert_decision_probes(probes, *d, 1);
  REQUIRE(probes.size() == 3);
  CHECK(probes[1]["id"] == "decision-1");
  CHECK(probes[1]["source"] == "llm");
  CHECK(probes[1]["expected"] == "Y was slower.");
  CHECK(probes[2]["source"] == "dataset");
  CHECK(decision_prompt(2, "T").find("Find the 2 most important") != std::string::npos);
}

TEST_CASE("probes: a session's checkpoints, one decision request each, the LLM's answers placed or counted", "[compression][unit]") {
  const ProbeOptions o{{}, {"recall", "decision"}, 1, false, 300};
  const json records = json::parse(R"([
    {"messages": [{"role":"user","content":"Fix the importer"}]},
    {"messages": [{"role":"assistant","content":"Using csv.reader."}],
     "probes": [{"type":"recall","question":"Which task?","expected":"the importer"}]}
  ])");
  SessionProbes s(records, o);
  REQUIRE(s.requests().size() == 2);
  const json out = s.output({BatchAnswer{true, R"({"decisions":[{"question":"Why csv.reader?","answer":"It is standard."}]})"},
                             BatchAnswer{true, "no JSON here"}});
  REQUIRE(out.size() == 2);
  CHECK(out[0]["messages_total"] == 1);
  CHECK(out[1]["messages_total"] == 2);  // the history grows over the session
  CHECK(out[0]["probes"].back()["id"] == "decision-1");
  CHECK(out[0]["decision_errors"] == 0);
  CHECK(out[1]["decision_errors"] == 1);
  CHECK(out[1]["decision_raw"] == "no JSON here");
  CHECK(out[1]["probes"].back()["question"] == "Which task?");  // supplied, after the generated ones
  CHECK_THROWS_WITH(SessionProbes(records, o).output({BatchAnswer{false, "HTTP 500"}, BatchAnswer{true, ""}}),
                    "decision probes: LLM call failed: HTTP 500");
  CHECK_THROWS_AS(SessionProbes(json::parse(R"([{"text": "no messages"}])"), o), evalgraph::InputError);
}
