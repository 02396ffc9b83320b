// Unit tests of compression.judge's logic (plugins/judges/compression_judge/judging.hpp): the criteria a
// probe is graded on, the criterion check and the per-checkpoint seed.
#include <catch2/catch.hpp>

#include <stdexcept>

#include "judging.hpp"

using namespace compression;

TEST_CASE("judge: a probe's own criteria or those of its type, unknown ones rejected", "[compression][unit]") {
  CriteriaByType by_type{{"recall", {"accuracy_factual"}}};
  CHECK(probe_criteria(json{{"type", "recall"}}, "p1", "recall", by_type) == std::vector<std::string>{"accuracy_factual"});
  json own{{"criteria", {"accuracy_technical", "instruction_format"}}};
  CHECK(probe_criteria(own, "p2", "recall", by_type) == std::vector<std::string>{"accuracy_technical", "instruction_format"});
  CHECK_THROWS_AS(probe_criteria(json::object(), "p3", "decision", by_type), std::invalid_argument);
  CHECK_THROWS_AS(probe_criteria(json{{"criteria", {"nope"}}}, "p4", "recall", by_type), std::invalid_argument);
  CHECK_NOTHROW(check_criterion("accuracy_factual", "w"));
  CHECK_THROWS_AS(check_criterion("nope", "w"), std::invalid_argument);
  CHECK(checkpoint_seed(json::object(), 7) == 7);
  json a{{"_meta", {{"record_index", 1}, {"replication", 0}}}}, b{{"_meta", {{"record_index", 2}, {"replication", 0}}}};
  CHECK(checkpoint_seed(a, 7) != checkpoint_seed(b, 7));
  CHECK(checkpoint_seed(a, 7) == checkpoint_seed(a, 7));
}

TEST_CASE("judge: configured criteria replace a type's defaults, unknown or repeated ones rejected", "[compression][unit]") {
  const CriteriaByType defaults = default_criteria_by_type();
  CHECK(criteria_by_type(json::object()) == defaults);
  const CriteriaByType mine = criteria_by_type(json{{"recall", {"accuracy_technical", "instruction_format"}}});
  CHECK(mine.at("recall") == std::vector<std::string>{"accuracy_technical", "instruction_format"});
  CHECK(mine.at("decision") == defaults.at("decision"));
  CHECK_THROWS_WITH(criteria_by_type(json{{"recall", {"nope"}}}), Catch::Contains("criteria_by_probe_type.recall: unknown criterion 'nope'"));
  CHECK_THROWS_WITH(criteria_by_type(json{{"artifact", {"accuracy_factual", "accuracy_factual"}}}),
                    "criteria_by_probe_type.artifact lists accuracy_factual twice");
}

TEST_CASE("judge: a checkpoint's grading, blind requests for the answered items only, errors kept per item", "[compression][unit]") {
  GradingOptions o{{}, default_criteria_by_type(), {}, 7, true};
  const json in = {{"probes", {{"probes", {{{"id", "p1"}, {"type", "recall"}, {"question", "Which file?"}, {"expected", "a.py"}}}}}},
                   {"answers_1", {{"method", "m1"}, {"label", "M1"}, {"compacted_context", "ctx"}, {"answers", {{{"probe_id", "p1"}, {"answer", "a.py"}}}}}},
                   {"answers_3", {{"method", "m3"}, {"answers", {{{"probe_id", "p1"}, {"answer", nullptr}, {"error", "HTTP 500"}}}}}}};
  Grading g(in, o);
  REQUIRE(g.requests().size() == 1);
  const std::string user = g.requests()[0]["messages"][1]["content"];
  CHECK(user.find("a.py") != std::string::npos);
  CHECK(user.find("m1") == std::string::npos);  // blind: no method id
  const json out = g.output({BatchAnswer{false, "judge down"}});
  CHECK(out["methods"].size() == 2);
  CHECK(out["methods"][1]["slot"] == 3);
  CHECK(out["judge_calls"] == 1);
  CHECK(out["unanswered"] == 1);
  CHECK(out["judge_errors"] == 1);
  CHECK(out["results"][0]["status"] == "judge_error");
  CHECK(out["results"][0]["error"] == "judge down");
  CHECK(out["results"][1]["status"] == "unanswered");
  CHECK(out["results"][1]["error"] == "HTTP 500");
  CHECK_THROWS_AS(Grading(json{{"probes", json::array()}}, o), evalgraph::InputError);
  CHECK_THROWS_AS(Grading(json{{"probes", 3}, {"answers_1", in["answers_1"]}}, o), evalgraph::InputError);
}
