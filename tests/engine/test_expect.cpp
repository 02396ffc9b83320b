// expect: in a pipeline and compare --fail-if-worse (docs/ci.md): every stat on records of known values,
// confidence, where, the checks of `evalgraph validate`, junit.xml against a JUnit schema, the step summary,
// the report, shards judged by the merge, and the regression gate on a real change and on identical runs.
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <cmath>

#include "stats/stats.h"
#include "util/junit.h"
#include "test_support.h"

using namespace testsupport;
using nlohmann::json;

namespace {

// x = 0.1, 0.2, ..., 1.0; lang alternates de, en (de: 0.1 0.3 0.5 0.7 0.9).
std::string dataset(double shift = 0, const std::string &row3 = "") {
  std::string s = "id,x,lang\n";
  for (int i = 1; i <= 10; ++i) {
    std::string x = i == 3 && !row3.empty() ? row3 : fmt::format("{}", std::round((i / 10.0 + shift) * 100) / 100);
    s += fmt::format("r{},{},{}\n", i, x, i % 2 == 1 ? "de" : "en");
  }
  return s;
}

const char *kNodes =
    "nodes:\n"
    "  - id: s\n"
    "    uses: test.scored\n"
    "sinks:\n"
    "  - uses: sink.jsonl\n"
    "    with: {file: detailed.jsonl}\n"
    "output: {dir: out}\n";

fs::path single_run_dir(const fs::path &out) {
  std::vector<fs::path> dirs;
  for (const auto &e : fs::directory_iterator(out))
    if (e.is_directory()) dirs.push_back(e.path());
  REQUIRE(dirs.size() == 1);
  return dirs[0];
}

// The pipeline "gate" over data.csv whose expect: holds `entries` (YAML lines; the first is line 11 of the file).
std::string gate(const std::string &entries) {
  return std::string("name: gate\ndataset: {path: data.csv}\n") + kNodes + "expect:\n" + entries;
}

// Writes data.csv (dataset()) and p.yaml, gate(entries).
void write_gate(const TempDir &d, const std::string &entries) {
  d.write("data.csv", dataset());
  d.write("p.yaml", gate(entries));
}

// validate refuses p.yaml whose expect: holds these entries (one a line from line 11), each with the message it
// must get ("": the entry is fine and gets none), and counts the problems.
void check_entries_refused(const std::vector<std::pair<std::string, std::string>> &entries) {
  TempDir d;
  std::string yaml;
  std::vector<std::string> messages;
  for (const auto &[entry, message] : entries) {
    yaml += "  - " + entry + "\n";
    if (!message.empty()) messages.push_back(message);
  }
  messages.push_back(fmt::format("{} problems found; nothing was run", messages.size()));
  write_gate(d, yaml);
  auto r = check_refused(d, "p.yaml", messages);
  for (std::size_t i = 0; i < entries.size(); ++i)
    if (entries[i].second.empty()) CHECK_THAT(r.output, !Catch::Contains(fmt::format("p.yaml:{}:", 11 + i)));
}

const json &result(const json &verdict, const std::string &name) { return entry_where(verdict["results"], "name", name); }

// xmllint against tests/engine/data/junit.xsd, and the counts read back with Python's XML parser.
void check_junit(const fs::path &xml, int tests, int failures) {
  auto v = run_cmd("xmllint --noout --schema " + std::string(TEST_SOURCE_DIR) + "/data/junit.xsd " + xml.string());
  INFO(v.output);
  CHECK(v.exit_code == 0);
  auto p = run_cmd("/usr/bin/python3 -c \"import sys, xml.etree.ElementTree as E; s = E.parse(sys.argv[1]).getroot()"
                   ".find('testsuite'); print(s.get('tests'), s.get('failures'), len(s.findall('testcase')), "
                   "len(s.findall('testcase/failure')))\" " + xml.string());
  CHECK(p.output == fmt::format("{} {} {} {}\n", tests, failures, tests, failures));
}

}  // namespace

TEST_CASE("expect: each stat, confidence and where on records of known values, then exit 4, junit.xml, step summary and report", "[expect]") {
  TempDir d;
  write_gate(d,
             "  - {metric: s.score, stat: mean, min: 0.5}\n"
             "  - {metric: s.score, stat: median, min: 0.5, max: 0.6}\n"
             "  - {metric: s.score, stat: min, min: 0.1}\n"
             "  - {metric: s.score, stat: max, max: 1}\n"
             "  - {metric: s.score, stat: p90, max: 0.9}\n"
             "  - {metric: s.ok, stat: share, equals: true, min: 0.6}\n"
             "  - {metric: s.label, stat: share, equals: lo, max: 0.4}\n"
             "  - {metric: s.score, stat: mean, min: 0.5, confidence: 0.95, name: mean with its interval}\n"
             "  - {metric: s.score, stat: mean, min: 0.45, max: 0.55, where: {lang: de}}\n"
             "  - {metric: s.score, stat: min, min: 0.5, where: {s.label: hi}}\n"
             "  - {metric: s.error_rate, stat: mean, max: 0.5}\n"
             "  - {metric: s.ok, stat: mean, min: 0.5, confidence: 0.9}\n");
  const fs::path summary = d.path / "step-summary.md";
  auto r = run_cmd("GITHUB_STEP_SUMMARY=" + summary.string() + " " +
                   evalgraph_cmd("run " + (d.path / "p.yaml").string()));
  INFO(r.output);
  CHECK(r.exit_code == 4);
  CHECK_THAT(r.output, Catch::Contains("expectations: 9 of 12 passed"));
  CHECK_THAT(r.output, Catch::Contains("FAIL s.score p90: p90 0.91 is above the maximum 0.9"));
  CHECK_THAT(r.output, Catch::Contains("p.yaml:15:5"));  // the failing entry's line
  const fs::path run = single_run_dir(d.path / "out");
  const json v = read_run_json(run)["expectations"];
  CHECK(v["failed"] == 3);
  CHECK(v["total"] == 12);
  CHECK(result(v, "s.score mean")["value"].get<double>() == Approx(0.55));
  CHECK(result(v, "s.score mean")["passed"] == true);
  CHECK(result(v, "s.score median")["value"].get<double>() == Approx(0.55));
  CHECK(result(v, "s.score min")["value"].get<double>() == Approx(0.1));
  CHECK(result(v, "s.score max")["value"].get<double>() == Approx(1.0));
  CHECK(result(v, "s.score p90")["value"].get<double>() == Approx(0.91));  // type 7: 0.9 + 0.1·(1.0 − 0.9)
  CHECK(result(v, "s.score p90")["passed"] == false);
  CHECK(result(v, "s.ok share")["value"].get<double>() == Approx(0.6));
  CHECK(result(v, "s.ok share")["n"] == 10);
  CHECK(result(v, "s.label share = \"lo\"")["value"].get<double>() == Approx(0.4));
  // The mean passes as a point (0.55) but not by its interval: 0.55 − 1.96·0.3028/√10 = 0.362.
  const json &ci = result(v, "mean with its interval");
  CHECK(ci["passed"] == false);
  CHECK(ci["judged"] == "interval");
  CHECK(ci["interval"][0].get<double>() == Approx(0.3623).epsilon(0.001));
  CHECK(ci["interval"][1].get<double>() == Approx(0.7377).epsilon(0.001));
  CHECK_THAT(ci["message"].get<std::string>(), Catch::Contains("the 95 % interval's lower end 0.3623 is below the minimum 0.5"));
  CHECK(result(v, "s.score mean where lang=de")["value"].get<double>() == Approx(0.5));
  CHECK(result(v, "s.score mean where lang=de")["n"] == 5);
  CHECK(result(v, "s.score min where s.label=hi")["value"].get<double>() == Approx(0.5));
  CHECK(result(v, "s.error_rate mean")["value"].get<double>() == Approx(0.45));
  // A boolean's mean is its share of true, with Wilson's interval (as the report's): 6/10 at 90 % → [0.35, 0.81].
  const json &okm = result(v, "s.ok mean");
  CHECK(okm["interval_method"] == "Wilson score interval of the share of true");
  CHECK(okm["interval"][0].get<double>() == Approx(0.3516).epsilon(0.01));
  CHECK(okm["passed"] == false);

  check_junit(run / "junit.xml", 12, 3);
  CHECK_THAT(read_file(run / "junit.xml"), Catch::Contains("failure message=\"p90 0.91 is above the maximum 0.9\""));
  const std::string md = read_file(summary);
  CHECK_THAT(md, Catch::Contains("### ❌ gate: 9 of 12 expectations passed"));
  CHECK_THAT(md, Catch::Contains("| ❌ | s.score p90 | 0.91 ["));
  CHECK_THAT(read_file(run / "report.html"), Catch::Contains("\"expectations\":{"));
}

TEST_CASE("expect: all holding exits 0, records that fail count as missing, and exit 4 still wins when one fails", "[expect]") {
  TempDir d;
  d.write("data.csv", dataset(0, "fail"));
  d.write("ok.yaml", gate("  - {metric: s.score, stat: mean, min: 0.5}\n"));
  check_run(d, "ok.yaml", 1, {"expectations: 1 of 1 passed"});  // the failed record, the expectation held
  json v = read_run_json(single_run_dir(d.path / "out"))["expectations"];
  CHECK(v["results"][0]["missing"] == 1);
  CHECK(v["results"][0]["n"] == 9);
  fs::remove_all(d.path / "out");

  d.write("bad.yaml", gate("  - {metric: s.score, stat: mean, min: 0.9}\n"));
  check_run(d, "bad.yaml", 4, {"1 of 1 expectations failed (junit.xml in the results folder); 1 records failed too"});
  fs::remove_all(d.path / "out");

  d.write("data.csv", dataset());
  check_run(d, "ok.yaml", 0, {});
  check_junit(single_run_dir(d.path / "out") / "junit.xml", 1, 0);
}

TEST_CASE("expect: the shape of each entry is checked as the pipeline is read, with file:line:col", "[expect]") {
  check_entries_refused(
      {{"{metric: s.score, stat: average, min: 0.5}",
        "p.yaml:11:29: error: unknown expect stat 'average'; use mean, median, min, max, p1 ... p99"},
       {"{metric: s.score, stat: mean}", "p.yaml:12:5: error: expect 's.score' needs a bound"},
       {"{metric: s.score, stat: min, min: 0.1, confidence: 0.9}", "p.yaml:13:56: error: stat min has no interval"},
       {"{metric: s.score, min: 0.9, max: 0.5}", "p.yaml:14:28: error: expect 's.score': min 0.9 is above max 0.5"},
       {"{metric: score, min: 0.5}",
        "p.yaml:15:14: error: expect metric 'score' must name a node's output as node.field"},
       {"{metric: s.ok, stat: share, min: 5}", "p.yaml:16:5: error: a share lies between 0 and 1"},
       {"{metric: s.score, min: high}", "p.yaml:17:28: error: expect 'min' must be a number"},
       {"{metric: s.score, min: 0.5, confidence: 95}",  // a level, not a percent
        "p.yaml:18:45: error: expect 'confidence' is the interval's level, from 0.5 to below 1"},
       {"{metric: s.score, stat: p100, max: 1}", "p.yaml:19:29: error: unknown expect stat 'p100'"},
       {"{metric: s.score, min: 0.5, colour: red}", "p.yaml:20:33: error: unknown key 'colour' in an 'expect' entry"},
       {"{metric: s.score, stat: mean, equals: 1, min: 0.5}",
        "p.yaml:21:43: error: expect 'equals' goes with stat: share"}});
}

TEST_CASE("expect: validate checks every entry against the nodes and their declared outputs, with file:line:col", "[expect]") {
  check_entries_refused(
      {{"{metric: t.score, min: 0.5}",
        "p.yaml:11:14: error: expect 't.score': the pipeline has no node 't' (did you mean 's'?); its nodes: s"},
       {"{metric: s.scor, min: 0.5}",
        "p.yaml:12:14: error: expect 's.scor': node 's' (test.scored) has no output 'scor' (did you mean 'score'?)"},
       {"{metric: s.label, stat: mean, min: 0.5}", "p.yaml:13:29: error: expect 's.label': 'label' is text"},
       {"{metric: s.ok, stat: median, min: 0.5}",
        "p.yaml:14:26: error: expect 's.ok': 'ok' is true/false; use stat: share"},
       {"{metric: s.tags, stat: share, min: 0.5}", "p.yaml:15:14: error: expect 's.tags': 'tags' is a list"},
       {"{metric: s.score, min: 0.5, where: {language: de}}",
        "p.yaml:16:41: error: expect 's.score' where: 'language' is neither a column of the dataset nor a node's "
        "output"},
       {"{metric: s.score, stat: share, equals: high, min: 0.5}",
        "p.yaml:17:29: error: expect 's.score': 'score' is number, so no value equals \"high\""},
       {"{metric: s.score, min: 0.5, where: {s.labl: hi}}",
        "p.yaml:18:41: error: expect 's.score' where: node 's' (test.scored) has no output 'labl'"},
       {"{metric: s.score, stat: p95, max: 0.99, where: {s.label: hi, lang: de}}", ""}});  // fine
}

TEST_CASE("expect: a shard defers its expectations, the merge judges the whole run", "[expect]") {
  TempDir d;
  write_gate(d, "  - {metric: s.score, stat: mean, min: 0.5}\n  - {metric: s.score, stat: p90, max: 0.9}\n");
  for (int i = 1; i <= 2; ++i) {
    auto r = run_cmd(evalgraph_cmd(fmt::format("run {} --shard {}/2 -o {}", (d.path / "p.yaml").string(), i,
                                               (d.path / fmt::format("s{}", i)).string())));
    INFO(r.output);
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.output, Catch::Contains("evalgraph merge judges them"));
  }
  auto m = run_cmd(evalgraph_cmd("merge " + single_run_dir(d.path / "s1").string() + " " +
                                 single_run_dir(d.path / "s2").string() + " -o " + (d.path / "merged").string()));
  INFO(m.output);
  CHECK(m.exit_code == 4);
  CHECK_THAT(m.output, Catch::Contains("expectations: 1 of 2 passed"));
  json v = read_run_json(d.path / "merged")["expectations"];
  CHECK(v["results"][0]["n"] == 10);
  CHECK(v["results"][1]["value"].get<double>() == Approx(0.91));
  check_junit(d.path / "merged" / "junit.xml", 2, 1);
}

TEST_CASE("compare --fail-if-worse: a real change fails the gate, identical runs and improvements pass", "[expect][compare]") {
  TempDir d;
  d.write("base.csv", dataset());
  d.write("worse.csv", dataset(-0.1));
  auto run_on = [&](const std::string &data, const std::string &out) {
    d.write(out + ".yaml", "name: gate\ndataset: {path: " + data + "}\n" + std::string(kNodes));
    auto r = run_cmd(evalgraph_cmd("run " + (d.path / (out + ".yaml")).string() + " -o " + (d.path / out).string()));
    REQUIRE(r.exit_code == 0);
    return single_run_dir(d.path / out);
  };
  const fs::path a = run_on("base.csv", "a"), a2 = run_on("base.csv", "a2"), b = run_on("worse.csv", "b");
  auto cmp = [&](const fs::path &x, const fs::path &y, const std::string &opts) {
    return run_cmd(evalgraph_cmd("compare " + x.string() + " " + y.string() + " " + opts));
  };
  // B's score is 0.1 lower on every record: Wilcoxon's exact p = 2/2^10.
  auto r = cmp(a, b, "--fail-if-worse s.score -o " + (d.path / "gate").string());
  INFO(r.output);
  CHECK(r.exit_code == 4);
  CHECK_THAT(r.output, Catch::Contains("FAIL s.score: worse by 0.1, significant at alpha 0.05; mean 0.5500 → 0.4500"));
  CHECK_THAT(r.output, Catch::Contains("p = 0.0020"));
  check_junit(d.path / "gate" / "junit.xml", 1, 1);
  CHECK(json::parse(read_file(d.path / "gate" / "compare.json"))["gate"]["passed"] == false);
  // error_rate is declared lower-is-better: it rose, so B is worse there too; the boolean ok fell on one record only.
  r = cmp(a, b, "--fail-if-worse s.error_rate --fail-if-worse s.ok");
  CHECK(r.exit_code == 4);
  CHECK_THAT(r.output, Catch::Contains("FAIL s.error_rate: worse by 0.1"));
  CHECK_THAT(r.output, Catch::Contains("lower is better"));
  CHECK_THAT(r.output, Catch::Contains("PASS s.ok: worse by 0.1, not significant"));
  CHECK_THAT(r.output, Catch::Contains("significantly worse than A on 1 of 2 gated metrics"));
  // The other way round B is better; identical runs are unchanged; a tolerance above the change passes.
  CHECK(cmp(b, a, "--fail-if-worse s.score --fail-if-worse s.error_rate").exit_code == 0);
  r = cmp(a, a2, "--fail-if-worse s.score");
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.output, Catch::Contains("PASS s.score: unchanged"));
  r = cmp(a, b, "--fail-if-worse s.score --min-diff 0.2");
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.output, Catch::Contains("within --min-diff 0.2"));
  CHECK(cmp(a, b, "--fail-if-worse s.score --alpha 0.001").exit_code == 0);
  // A metric neither run has is a usage error that names the ones there are.
  r = cmp(a, b, "--fail-if-worse s.scor");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Catch::Contains("--fail-if-worse s.scor: no such metric in both runs (did you mean 's.score'?); give node.field"));
  CHECK(cmp(a, b, "--fail-if-worse s.score --alpha 2").exit_code == 2);
}

TEST_CASE("stats: the one-sample intervals expect: judges", "[expect][stats]") {
  using namespace evalgraph::stats;
  CHECK(normal_quantile(0.975) == Approx(1.959964).epsilon(1e-6));
  CHECK(normal_quantile(0.05) == Approx(-1.644854).epsilon(1e-6));
  CHECK(normal_quantile(1e-10) == Approx(-6.361341).epsilon(1e-5));
  auto w = wilson_interval(0, 10, 0.95);
  CHECK(w.low == Approx(0).margin(1e-12));
  CHECK(w.high == Approx(0.2775).epsilon(0.001));
  auto m = mean_interval({1, 2, 3, 4, 5}, 0.95);
  CHECK(m.low == Approx(3 - 1.959964 * std::sqrt(2.5 / 5)));
  // Median of 1..20 at 95 %: order statistics 6 and 15 (P(X <= 5) = 0.0207 <= 0.025 < P(X <= 6) = 0.0577).
  std::vector<double> s;
  for (int i = 1; i <= 20; ++i) s.push_back(i);
  auto q = quantile_interval(s, 0.5, 0.95);
  CHECK(q.low == 6);
  CHECK(q.high == 15);
  // Too few values for the level: the ends are open.
  auto few = quantile_interval({1, 2, 3}, 0.5, 0.95);
  CHECK(std::isinf(few.low));
  CHECK(std::isinf(few.high));
}

TEST_CASE("expect: the shipped gate (pipelines/ksodi-gate.yaml) holds on its sample and fails when a bound is raised", "[expect]") {
  TempDir d;
  const std::string repo = REPO_DIR;
  auto r = run_cmd(evalgraph_cmd("run " + repo + "/pipelines/ksodi-gate.yaml --no-report -o " + (d.path / "a").string()));
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.output, Catch::Contains("expectations: 6 of 6 passed"));
  // The same pipeline with the O0 bound above what the sample gives (0.60): exit 4, the line of that entry.
  std::string text = read_file(repo + "/pipelines/ksodi-gate.yaml");
  const std::string bound = "{metric: o0.O0, stat: mean, min: 0.5}";
  REQUIRE(text.find(bound) != std::string::npos);
  text.replace(text.find(bound), bound.size(), "{metric: o0.O0, stat: mean, min: 0.65}");
  const std::string data = "path: data/ksodi_standard_sample.jsonl";
  text.replace(text.find(data), data.size(), "path: " + repo + "/pipelines/data/ksodi_standard_sample.jsonl");
  d.write("gate.yaml", text);
  r = run_cmd(evalgraph_cmd("run " + (d.path / "gate.yaml").string() + " --no-report -o " + (d.path / "b").string()));
  CHECK(r.exit_code == 4);
  CHECK_THAT(r.output, Catch::Contains("FAIL o0.O0 mean: mean 0.5973 is below the minimum 0.65"));
}

TEST_CASE("junit.xml stays well-formed whatever a name or message holds", "[expect][junit]") {
  TempDir d;
  std::vector<evalgraph::junit::Case> cases = {
      {"c<&>\"'", "bytes \xff\xfe and a control \x01 and \xe2\x82\xac", true, "value 0.5 < 0.6\nsecond line",
       "details with ]]> and \x1b[31m"},
      {"c", "a passing one", false, "", "out"}};
  const auto xml = d.write("junit.xml", evalgraph::junit::document("suite \xc3\x28", cases, 1.5));
  check_junit(xml, 2, 1);
  const std::string text = read_file(xml);
  CHECK_THAT(text, Catch::Contains("bytes \xef\xbf\xbd\xef\xbf\xbd and a control \xef\xbf\xbd and \xe2\x82\xac"));
  CHECK_THAT(text, Catch::Contains("message=\"value 0.5 &lt; 0.6&#10;second line\""));
}
