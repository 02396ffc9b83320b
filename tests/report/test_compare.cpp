// `evalgraph compare` on small hand-made results folders (known statistics) and on two real runs.
#include <algorithm>

#include <catch2/catch.hpp>

#include "compare/compare.h"
#include "test_support.h"

using namespace testsupport;
using nlohmann::json;

namespace {

// A results folder as `evalgraph run` leaves it: run.json naming a sink.jsonl file, and the records.
fs::path make_run(const TempDir &t, const std::string &name, double alpha, const std::vector<json> &records) {
  json run = {{"pipeline", "toy"},
              {"dataset", "toy.jsonl"},
              {"engine_version", "0.1.0"},
              {"replications", 1},
              {"nodes", {{"m", {{"uses", "toy.metric"}, {"plugin", "toy"}, {"plugin_version", "1.0.0"}, {"with", {{"alpha", alpha}}}}}}},
              {"sinks", {{"sink.jsonl", {{"uses", "sink.jsonl"}, {"with", {{"file", "detailed.jsonl"}}}}}}}};
  t.write(name + "/run.json", run.dump());
  std::string lines;
  for (const auto &r : records) lines += r.dump() + "\n";
  t.write(name + "/detailed.jsonl", lines);
  return t.path / name;
}

json rec(const std::string &id, double score, bool ok) {
  return {{"id", id}, {"text", "x"}, {"m", {{"score", score}, {"ok", ok}, {"parameters", {{"alpha", 0.4}}}, {"parts", {{"sub", score / 2}}}}}};
}

const json &metric(const json &c, const std::string &field) { return entry_where(c["metrics"], "field", field); }

}  // namespace

TEST_CASE("compare: identical runs give diff 0, interval [0, 0], p 1") {
  TempDir t;
  std::vector<json> rs;
  for (int i = 0; i < 30; ++i) rs.push_back(rec("r" + std::to_string(i), 0.1 * (i % 7), i % 3 == 0));
  fs::path a = make_run(t, "a", 0.4, rs), b = make_run(t, "b", 0.4, rs);
  json c = evalgraph::compare::compare_runs(a, b);
  CHECK(c["n_paired"] == 30);
  CHECK(c["unpaired_a"] == 0);
  CHECK(c["unpaired_b"] == 0);
  CHECK(c["paired_by"] == "id");
  CHECK(c["parameter_differences"].empty());
  CHECK(c["changed"].empty());
  REQUIRE(c["metrics"].size() == 3);  // score, ok, parts.sub; parameters are not metrics
  for (const auto &m : c["metrics"]) {
    CHECK(m["n"] == 30);
    CHECK(m["diff"] == 0.0);
    CHECK(m["ci_low"] == 0.0);
    CHECK(m["ci_high"] == 0.0);
    CHECK(m["p_value"] == 1.0);
  }
  CHECK(metric(c, "ok")["test"] == "mcnemar_exact");
  CHECK(metric(c, "score")["test"] == "wilcoxon_signed_rank");
}

TEST_CASE("compare: known differences, McNemar table, unpaired records and changed parameters") {
  TempDir t;
  std::vector<json> ra, rb;
  // 12 paired records: score rises by 0.01·i (all positive, distinct: Wilcoxon p = 2/2^12);
  // ok: true→false twice, false→true eight times, true→true twice (McNemar b = 2, c = 8: p = 112/1024).
  for (int i = 1; i <= 12; ++i) {
    bool oa = i <= 2 || i >= 11, ob = i >= 3;
    ra.push_back(rec("r" + std::to_string(i), 0.5, oa));
    rb.push_back(rec("r" + std::to_string(i), 0.5 + 0.01 * i, ob));
  }
  ra.push_back(rec("only-a", 0.9, true));
  rb.push_back(rec("only-b", 0.1, false));
  fs::path a = make_run(t, "a", 0.4, ra), b = make_run(t, "b", 0.5, rb);
  json c = evalgraph::compare::compare_runs(a, b);
  CHECK(c["n_paired"] == 12);
  CHECK(c["unpaired_a"] == 1);
  CHECK(c["unpaired_b"] == 1);
  CHECK(c["unpaired_a_ids"] == json::array({"only-a"}));
  CHECK(c["unpaired_b_ids"] == json::array({"only-b"}));
  const json &s = metric(c, "score");
  CHECK(s["n"] == 12);
  CHECK(s["mean_a"].get<double>() == Approx(0.5));
  CHECK(s["diff"].get<double>() == Approx(0.065));  // mean of 0.01..0.12
  CHECK(s["ci_low"].get<double>() > 0.03);
  CHECK(s["ci_high"].get<double>() < 0.1);
  CHECK(s["ci_low"].get<double>() < 0.065);
  CHECK(s["ci_high"].get<double>() > 0.065);
  CHECK(s["p_value"].get<double>() == Approx(2.0 / 4096).epsilon(1e-9));
  const json &o = metric(c, "ok");
  CHECK(o["p_value"].get<double>() == Approx(112.0 / 1024).epsilon(1e-9));
  CHECK(o["mean_a"].get<double>() == Approx(4.0 / 12));
  CHECK(o["mean_b"].get<double>() == Approx(10.0 / 12));
  CHECK(o["diff"].get<double>() == Approx(0.5));
  REQUIRE(c["parameter_differences"].size() == 1);
  CHECK(c["parameter_differences"][0]["path"] == "/nodes/m/with/alpha");
  CHECK(c["parameter_differences"][0]["a"] == 0.4);
  CHECK(c["parameter_differences"][0]["b"] == 0.5);
  // Changed most: r12 moved the score by 0.12 and flipped ok.
  REQUIRE(!c["changed"].empty());
  CHECK(c["changed"][0]["id"] == "r1");  // ok flipped (|Δ| 1): the first of the largest changes
  CHECK(c["records_changed"] == 12);
}

TEST_CASE("compare command: table, --json, -o and clear errors") {
  TempDir t;
  std::vector<json> rs;
  for (int i = 0; i < 5; ++i) rs.push_back(rec("r" + std::to_string(i), 0.2 * i, i % 2 == 0));
  fs::path a = make_run(t, "a", 0.4, rs), b = make_run(t, "b", 0.4, rs);
  auto r = run_cmd(std::string(EVALGRAPH_EXE) + " compare " + a.string() + " " + b.string());
  CHECK(r.exit_code == 0);
  CHECK(r.output.find("paired by id: 5 pairs; unpaired: 0 only in A, 0 only in B") != std::string::npos);
  CHECK(r.output.find("m.score") != std::string::npos);
  auto j = run_cmd(std::string(EVALGRAPH_EXE) + " compare --json " + a.string() + " " + b.string() + " -o " + (t.path / "out").string());
  REQUIRE(j.exit_code == 0);
  json c = json::parse(j.output.substr(j.output.find('{')));
  for (const char *k : {"a", "b", "n_paired", "unpaired_a", "unpaired_b", "metrics", "changed"}) CHECK(c.contains(k));
  for (const char *k : {"node", "field", "n", "mean_a", "mean_b", "diff", "ci_low", "ci_high", "p_value", "test"})
    CHECK(c["metrics"][0].contains(k));
  CHECK(fs::exists(t.path / "out" / "compare.json"));
  std::string html = read_file(t.path / "out" / "compare.html");
  CHECK(html.find("<svg") != std::string::npos);
  CHECK(html.find("http") == std::string::npos);  // nothing loaded from the network

  std::vector<json> extra = rs;
  for (auto &e : extra) e["m"]["new_score"] = 0.5;
  fs::path e = make_run(t, "e", 0.4, extra);
  auto oneside = run_cmd(std::string(EVALGRAPH_EXE) + " compare " + a.string() + " " + e.string());
  CHECK(oneside.exit_code == 0);
  CHECK(oneside.output.find("values only in B (not compared): m.new_score") != std::string::npos);

  t.write("plain/notes.txt", "x");
  auto bad = run_cmd(std::string(EVALGRAPH_EXE) + " compare " + a.string() + " " + (t.path / "plain").string());
  CHECK(bad.exit_code == 2);
  CHECK(bad.output.find((t.path / "plain").string() + ": not a results folder: no run.json") != std::string::npos);
  auto missing = run_cmd(std::string(EVALGRAPH_EXE) + " compare " + a.string() + " " + (t.path / "nope").string());
  CHECK(missing.exit_code == 2);
  CHECK(missing.output.find("no such folder") != std::string::npos);
  auto one = run_cmd(std::string(EVALGRAPH_EXE) + " compare " + a.string());
  CHECK(one.exit_code == 2);
  CHECK(one.output.find("give two results folders") != std::string::npos);
  t.write("broken/run.json", "{\"nodes\":{\"m\":{}},\"sinks\":{\"j\":{\"uses\":\"sink.jsonl\",\"with\":{\"file\":\"d.jsonl\"}}}}");
  t.write("broken/d.jsonl", "{\"id\":\"r0\"}\n{oops\n");
  auto broken = run_cmd(std::string(EVALGRAPH_EXE) + " compare " + a.string() + " " + (t.path / "broken").string());
  CHECK(broken.exit_code == 3);
  CHECK(broken.output.find("d.jsonl:2: not a JSON object") != std::string::npos);
}

TEST_CASE("compare: two runs of the shipped KSODI pipeline are identical") {
  TempDir t;
  std::string run = std::string("CI=true ") + EVALGRAPH_EXE + " run -q " + REPO_DIR + "/pipelines/ksodi-standard.yaml -o " + t.path.string();
  auto r1 = run_cmd(run), r2 = run_cmd(run);
  REQUIRE(r1.exit_code == 0);
  REQUIRE(r2.exit_code == 0);
  auto trim = [](std::string s) { return s.substr(0, s.find_last_not_of("\n") + 1); };
  json c = evalgraph::compare::compare_runs(trim(r1.output), trim(r2.output));
  CHECK(c["n_paired"] == 64);
  CHECK(c["paired_by"] == "id");
  CHECK(metric(c, "O0")["n"].get<int>() > 0);
  for (const auto &m : c["metrics"]) {
    if (m["diff"].is_null()) continue;
    CHECK(m["diff"] == 0.0);
    CHECK(m["p_value"] == 1.0);
  }
}

TEST_CASE("compare: replications pair with the same replication, and without an id records pair by position") {
  TempDir t;
  std::vector<json> ra, rb;
  for (int i = 0; i < 3; ++i)
    for (int r = 0; r < 2; ++r) {
      json a = rec("q" + std::to_string(i), 0.1 * r, true), b = rec("q" + std::to_string(i), 0.1 * r + (r == 1 ? 0.5 : 0.0), true);
      a["_replication"] = std::to_string(r);
      b["_replication"] = std::to_string(r);
      ra.push_back(a);
      rb.push_back(b);
    }
  std::reverse(rb.begin(), rb.end());  // order does not matter
  json c = evalgraph::compare::compare_runs(make_run(t, "a", 0.4, ra), make_run(t, "b", 0.4, rb));
  CHECK(c["n_paired"] == 6);
  CHECK(c["paired_by"] == "id");
  CHECK(metric(c, "score")["diff"].get<double>() == Approx(0.25));  // +0.5 on replication 1 of each
  REQUIRE(c["changed"].size() == 3);
  CHECK(c["changed"][0]["id"].get<std::string>().find("(replication 1)") != std::string::npos);

  std::vector<json> na, nb;
  for (int i = 0; i < 4; ++i) na.push_back({{"text", "x"}, {"m", {{"score", 1.0 * i}}}});
  for (int i = 0; i < 3; ++i) nb.push_back({{"text", "x"}, {"m", {{"score", 1.0 * i + 1}}}});
  json p = evalgraph::compare::compare_runs(make_run(t, "na", 0.4, na), make_run(t, "nb", 0.4, nb));
  CHECK(p["paired_by"].get<std::string>().find("record position") == 0);
  CHECK(p["n_paired"] == 3);
  CHECK(p["unpaired_a_ids"] == json::array({"#4"}));
  CHECK(metric(p, "score")["diff"].get<double>() == Approx(1.0));
  CHECK(metric(p, "score")["ci_low"].get<double>() == 1.0);  // every difference is 1
}

TEST_CASE("compare: a --config-dir run's detailed_results.jsonl pairs by row and replication and compares the criteria") {
  TempDir t;
  // As chatbot.report writes it: each criterion's value under criteria.<name>.value (null when the verdict
  // was invalid), the replication as `replication`, the dataset inside the results folder.
  auto make = [&](const std::string &name, const std::vector<int> &verdicts) {
    fs::path dir = t.path / name;
    json run = {{"pipeline", "example"},
                {"dataset", (dir / "dataset.jsonl").string()},
                {"replications", 2},
                {"nodes", {{"task_a", {{"uses", "judge.task_comparison"}, {"plugin_version", "1.0.0"}, {"with", json::object()}}},
                           {"score", {{"uses", "chatbot.score"}, {"plugin_version", "1.0.0"}, {"with", json::object()}}}}},
                {"sinks", {{"chatbot.report", {{"uses", "chatbot.report"}, {"with", json::object()}}},
                           {"sink.html_report", {{"uses", "sink.html_report"}, {"with", {{"file", "report.html"}}}}}}}};
    t.write(name + "/run.json", run.dump());
    t.write(name + "/dataset.jsonl", "{\"data_file\":\"d\",\"row\":1}\n");  // the same bytes in both folders
    std::string lines;
    std::size_t k = 0;
    for (int row = 1; row <= 3; ++row)
      for (int rep = 0; rep < 2; ++rep, ++k) {
        json crit = verdicts[k] < 0 ? json{{"status", "invalid"}, {"raw", "?"}, {"value", nullptr}} : json{{"status", "ok"}, {"value", verdicts[k]}};
        lines += json({{"criteria", {{"Task A", crit}}}, {"data_file", "d"}, {"row", row}, {"replication", rep},
                       {"score", verdicts[k] < 0 ? json(nullptr) : json(0.5 * verdicts[k])}, {"transformation", "t"}})
                     .dump() + "\n";
      }
    t.write(name + "/detailed_results.jsonl", lines);
    return dir;
  };
  // Records in the same order; B differs on row 2 replication 1 (0 -> 1) and row 3 replication 0 (1 -> invalid).
  json c = evalgraph::compare::compare_runs(make("a", {1, 0, 1, 0, 1, 1}), make("b", {1, 0, 1, 1, -1, 1}));
  CHECK(c["a"]["records_file"] == "detailed_results.jsonl");
  CHECK(c["paired_by"] == "data_file + row + transformation");
  CHECK(c["n_paired"] == 6);
  CHECK(c["parameter_differences"].empty());  // each folder's own dataset.jsonl, the same bytes
  const json &crit = metric(c, "Task A.value");
  CHECK(crit["node"] == "criteria");
  CHECK(crit["n"] == 5);  // the invalid verdict has no value
  CHECK(crit["diff"].get<double>() == Approx(0.2));
  CHECK(metric(c, "value")["node"] == "score");
  REQUIRE(c["changed"].size() == 1);
  CHECK(c["changed"][0]["id"] == "d/2/t (replication 1)");
}

TEST_CASE("compare: the sink.jsonl records come first even where chatbot.report's file exists too") {
  TempDir t;
  auto make = [&](const std::string &name, double v) {
    json run = {{"pipeline", "chatbot-eval"},
                {"dataset", "data.jsonl"},
                {"nodes", {{"task_a", {{"uses", "judge.task_comparison"}, {"plugin_version", "1.0.0"}, {"with", json::object()}}}}},
                {"sinks", {{"chatbot.report", {{"uses", "chatbot.report"}, {"with", json::object()}}},
                           {"sink.jsonl", {{"uses", "sink.jsonl"}, {"with", {{"file", "records.jsonl"}}}}}}}};
    t.write(name + "/run.json", run.dump());
    t.write(name + "/detailed_results.jsonl", "{\"criteria\":{},\"score\":1}\n");
    t.write(name + "/records.jsonl", json({{"id", "r1"}, {"task_a", {{"value", v}, {"valid", true}}}}).dump() + "\n");
    return t.path / name;
  };
  json c = evalgraph::compare::compare_runs(make("a", 0), make("b", 1));
  CHECK(c["a"]["records_file"] == "records.jsonl");
  CHECK(c["paired_by"] == "id");
  CHECK(metric(c, "value")["node"] == "task_a");
  CHECK(metric(c, "value")["diff"] == 1.0);
}
