// labels:, agreement:, the expect: gates on agreement and `evalgraph agree` (docs/agreement.md), end to end on
// records of known values: test.scored's outputs (score = x, ok = x >= 0.5) against hand-made labels whose
// statistics are worked out by hand below; several annotators (majority, ties, the people's ceiling, alpha);
// labels as record fields; and every way a labels file or a declaration can be wrong, with where it is.
#include <fmt/format.h>

#include <catch2/catch.hpp>

#include "test_support.h"

using namespace testsupport;
using nlohmann::json;

namespace {

// x = 0.1 ... 1.0 for r1 ... r10; test.scored: ok = x >= 0.5 (r5..r10), score = x.
std::string scored_data() {
  std::string s = "id,x\n";
  for (int i = 1; i <= 10; ++i) s += fmt::format("r{},{}\n", i, i / 10.0);
  return s;
}

// good: r3 r5 r6 r8 r9 r10 true; r1 r2 r4 r7 false. ok vs good: 3 TN (r1 r2 r4), 1 FN (r3), 1 FP (r7), 5 TP:
// accuracy 0.8, kappa (0.8 - 0.52) / 0.48. score vs good: 20 of the 24 (positive, negative) pairs in order: AUROC 5/6.
std::string good_labels(const std::string &extra = "") {
  const bool good[] = {false, false, true, false, true, true, false, true, true, true};
  std::string s;
  for (int i = 1; i <= 10; ++i)
    s += fmt::format("{{\"id\": \"r{}\", \"good\": {}}}\n", i, good[i - 1] ? "true" : "false");
  return s + extra;
}

std::string pipeline(const std::string &labels, const std::string &rest) {
  return "name: agree\ndataset: {path: data.csv}\n" + labels +
         "nodes:\n  - {id: s, uses: test.scored}\nsinks:\n  - uses: sink.jsonl\n    with: {file: detailed.jsonl}\n"
         "output: {dir: out}\n" +
         rest;
}

const char *kLabelsFile = "labels: {path: labels.jsonl, key: id, fields: {good: {type: binary}}}\n";

const json &entry(const json &agreement, const std::string &name) {
  return entry_where(agreement["entries"], "name", name);
}

}  // namespace

TEST_CASE("agreement: a boolean and a score against binary labels, with hand-worked figures", "[agree]") {
  TempDir d;
  d.write("data.csv", scored_data());
  d.write("labels.jsonl", good_labels("{\"id\": \"r99\", \"good\": true}\n"));
  d.write("p.yaml",
          pipeline(kLabelsFile, "agreement:\n  - {metric: s.ok, label: good}\n  - {metric: s.score, label: good}\n"));
  json run = run_ok(d, "p.yaml");
  const json &a = run["agreement"];
  CHECK(a["labels"]["records"] == 10);
  CHECK(a["labels"]["labelled"] == 10);
  CHECK(a["labels"]["unknown_keys"] == 1);  // r99 is not in the data set: counted, not dropped silently
  const json &c = entry(a, "s.ok~good");
  CHECK(c["kind"] == "classification");
  CHECK(c["n"] == 10);
  CHECK(c["confusion"] == json::parse("[[3, 1], [1, 5]]"));
  CHECK(c["stats"]["accuracy"]["value"].get<double>() == Approx(0.8).epsilon(1e-12));
  CHECK(c["stats"]["kappa"]["value"].get<double>() == Approx(0.28 / 0.48).epsilon(1e-12));
  CHECK(c["stats"]["accuracy"]["method"].get<std::string>().find("Wilson") != std::string::npos);
  CHECK(c["stats"]["precision"]["value"].get<double>() == Approx(5.0 / 6).epsilon(1e-12));
  CHECK(c["stats"]["recall"]["value"].get<double>() == Approx(5.0 / 6).epsilon(1e-12));
  CHECK(c["cells"]["0,1"] == json::array({"r3"}));  // metric false, label true
  CHECK(c["disagreements"].size() == 2);
  const json &s = entry(a, "s.score~good");
  CHECK(s["kind"] == "score_vs_binary");
  CHECK(s["stats"]["auroc"]["value"].get<double>() == Approx(20.0 / 24).epsilon(1e-12));
  CHECK(s["stats"]["auroc"]["low"].get<double>() < s["stats"]["auroc"]["value"].get<double>());
  CHECK(s["stats"].contains("balanced_accuracy_cv"));
  CHECK(s["disagreements"][0]["id"] == "r3");  // the lowest-scored record labelled true (r7: the highest false, next)
  CHECK(s["disagreements"][1]["id"] == "r7");
  // The labels travel with the records.
  auto recs = read_jsonl(fs::path(only_run_dir(d.path / "out")) / "detailed.jsonl");
  CHECK(recs[2]["_labels"]["good"][0]["value"] == true);
}

TEST_CASE("agreement: expect gates on a statistic by value and by interval, exit 4 naming what failed", "[agree]") {
  TempDir d;
  d.write("data.csv", scored_data());
  d.write("labels.jsonl", good_labels());
  d.write("pass.yaml", pipeline(kLabelsFile, "expect:\n  - {metric: s.ok, label: good, stat: accuracy, min: 0.75}\n"));
  json run = run_ok(d, "pass.yaml");
  CHECK(run["expectations"]["passed"] == true);
  CHECK(run["agreement"]["entries"].size() == 1);  // the gate's pair is measured without an agreement: entry
  d.write("fail.yaml", pipeline(kLabelsFile,
                                "expect:\n  - {metric: s.ok, label: good, stat: kappa, min: 0.5, confidence: 0.95}\n"
                                "  - {metric: s.score, label: good, stat: kappa, min: 0.5}\n"));
  auto r = check_run(d, "fail.yaml", 4, {"interval's lower end", "kappa does not apply to s.score vs label 'good'"});
  (void)r;
}

TEST_CASE("agreement: several annotators — majority, ties left out, each person against the rest, alpha", "[agree]") {
  TempDir d;
  d.write("data.csv", scored_data());
  // a and b agree with ok everywhere; c contradicts them on r1 and r2 (no tie: 2 against 1); r3 has a and c only,
  // who disagree: a tie, left out.
  std::string rows;
  for (int i = 1; i <= 10; ++i) {
    const bool ok = i >= 5;
    if (i != 3)
      rows += fmt::format("{{\"id\": \"r{}\", \"rater\": \"a\", \"good\": {}}}\n", i, ok);
    else
      rows += "{\"id\": \"r3\", \"rater\": \"a\", \"good\": true}\n";
    if (i != 3) rows += fmt::format("{{\"id\": \"r{}\", \"rater\": \"b\", \"good\": {}}}\n", i, ok);
    rows +=
        fmt::format("{{\"id\": \"r{}\", \"rater\": \"c\", \"good\": {}}}\n", i, i <= 2 ? !ok : (i == 3 ? false : ok));
  }
  d.write("labels.jsonl", rows);
  d.write("p.yaml",
          pipeline("labels: {path: labels.jsonl, key: id, annotator: rater, fields: {good: {type: binary}}}\n",
                   "agreement:\n  - {metric: s.ok, label: good}\nexpect:\n  - {label: good, stat: alpha, min: 0.1}\n"));
  json run = run_ok(d, "p.yaml");
  const json &e = entry(run["agreement"], "s.ok~good");
  CHECK(e["left_out"]["tie"] == 1);
  CHECK(e["n"] == 9);
  CHECK(e["stats"]["accuracy"]["value"].get<double>() == Approx(1.0));
  CHECK(e["people"]["annotators"] == 3);
  CHECK(e["people"]["per_annotator"].size() == 3);
  const json &alpha = run["agreement"]["alpha"]["good"];
  CHECK(alpha["level"] == "nominal");
  CHECK(alpha["units"] == 10);
  CHECK(alpha["defined"] == true);
  CHECK(run["expectations"]["passed"] == true);
  CHECK(run["agreement"]["labels"]["annotators"] == json::array({"a", "b", "c"}));
}

TEST_CASE("agreement: labels as record fields, a list holding one label per person", "[agree]") {
  TempDir d;
  std::string s;
  for (int i = 1; i <= 10; ++i)
    s += fmt::format("{{\"id\": \"r{}\", \"x\": {}, \"q\": [{}, {}]}}\n", i, i / 10.0, (i + 1) / 2, (i + 2) / 2);
  d.write("data.jsonl", s);
  d.write("p.yaml",
          "name: rec\ndataset: {path: data.jsonl}\nlabels: {fields: {q: {type: ordinal, values: [1, 2, 3, 4, 5, 6]}}}\n"
          "nodes:\n  - {id: s, uses: test.scored}\nagreement:\n  - {metric: s.score, label: q}\n"
          "sinks:\n  - uses: sink.jsonl\n    with: {file: detailed.jsonl}\noutput: {dir: out}\n");
  json run = run_ok(d, "p.yaml");
  const json &e = entry(run["agreement"], "s.score~q");
  CHECK(e["kind"] == "correlation");
  CHECK(e["stats"]["spearman"]["value"].get<double>() > 0.9);
  CHECK(run["agreement"]["alpha"]["q"]["level"] == "ordinal");
  CHECK(run["agreement"]["alpha"]["q"]["annotators"] == 2);
}

TEST_CASE("agreement: a labels file's problems are refused before any record moves, with file:line:col", "[agree]") {
  TempDir d;
  d.write("data.csv", scored_data());
  d.write("labels.jsonl",
          "{\"id\": \"r1\", \"good\": true}\n{\"id\": \"r2\", \"good\": \"maybe\"}\n"
          "{\"id\": \"r3\", \"goood\": true}\n{\"id\": \"r1\", \"good\": false}\n");
  d.write("p.yaml", pipeline(kLabelsFile, ""));
  check_refused(d, "p.yaml",
                {"labels.jsonl:2:22: error: label 'good' of record 'r2': \"maybe\" is not binary",
                 "labels.jsonl:3:", "unknown label column 'goood' (did you mean 'good'?)",
                 "labels.jsonl:4:", "record 'r1' is labelled twice"});
  CHECK(!fs::exists(d.path / "out"));
}

TEST_CASE("agreement: declarations that cannot work are refused with their place", "[agree]") {
  TempDir d;
  d.write("data.csv", scored_data());
  d.write("labels.jsonl", good_labels());
  d.write("a.yaml", pipeline("", "agreement:\n  - {metric: s.ok, label: good}\n"));
  check_refused(d, "a.yaml", {"a.yaml:10:", "the pipeline declares no labels"});
  d.write("b.yaml", pipeline(kLabelsFile, "agreement:\n  - {metric: s.okk, label: goodd, positive: 7}\n"));
  check_refused(d, "b.yaml", {"has no output 'okk'", "'goodd' is not a label field (did you mean 'good'?)"});
  d.write("c.yaml",
          pipeline("labels: {path: labels.jsonl, key: idd, fields: {good: {type: binry}, q: {type: ordinal}}}\n", ""));
  check_refused(d, "c.yaml", {"unknown label type 'binry' (did you mean 'binary'?)", "is ordinal: list its values"});
  d.write("e.yaml", pipeline(kLabelsFile, "expect:\n  - {metric: s.ok, label: good, stat: kapa, min: 0.5}\n"));
  check_refused(d, "e.yaml", {"e.yaml:11:", "unknown agreement stat 'kapa' (did you mean 'kappa'?)"});
}

TEST_CASE("evalgraph agree: a finished run measured again with other labels and entries, --json, -o, exit 4",
          "[agree]") {
  TempDir d;
  d.write("data.csv", scored_data());
  d.write("labels.jsonl", good_labels());
  d.write("p.yaml", pipeline(kLabelsFile,
                             "agreement:\n  - {metric: s.ok, label: good}\n"
                             "expect:\n  - {metric: s.ok, label: good, stat: accuracy, min: 0.75}\n"));
  auto run = run_pipeline(d, "p.yaml");
  REQUIRE(run.exit_code == 0);
  auto r = run_cmd(evalgraph_cmd("agree -q --json " + run.dir.string()));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  json j = json::parse(r.output);
  CHECK(entry(j["agreement"], "s.ok~good")["stats"]["accuracy"]["value"].get<double>() == Approx(0.8));
  // The people changed their minds about r3 and r7: ok now agrees everywhere.
  d.write("relabelled.jsonl", "{\"id\": \"r3\", \"good\": false}\n{\"id\": \"r7\", \"good\": true}\n");
  r = run_cmd(evalgraph_cmd("agree -q --json --labels " + (d.path / "relabelled.jsonl").string() +
                            " --agreement s.score~good " + run.dir.string()));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  j = json::parse(r.output);
  CHECK(j["agreement"]["labels"]["labelled"] == 2);
  CHECK(j["agreement"]["entries"].size() == 2);  // the --agreement entry and the gate's pair
  // Too few labels for the gate: accuracy of ok on r3 and r7 under the new labels is 0 → exit 4; -o writes both files.
  d.write("wrong.jsonl", "{\"id\": \"r3\", \"good\": true}\n{\"id\": \"r7\", \"good\": false}\n");
  r = run_cmd(evalgraph_cmd("agree -q --labels " + (d.path / "wrong.jsonl").string() + " -o " +
                            (d.path / "agree").string() + " " + run.dir.string()));
  INFO(r.output);
  CHECK(r.exit_code == 4);
  CHECK(fs::exists(d.path / "agree" / "agreement.json"));
  CHECK(read_file(d.path / "agree" / "junit.xml").find("<failure") != std::string::npos);
  r = run_cmd(evalgraph_cmd("agree " + run.dir.string() + " --agreement nonsense"));
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Catch::Contains("is not METRIC~LABEL"));
}

TEST_CASE("agreement: shards defer it, the merge measures the whole run as one run does, and agree reads the merge",
          "[agree]") {
  TempDir d;
  d.write("data.csv", scored_data());
  d.write("labels.jsonl", good_labels());
  d.write("p.yaml", pipeline(kLabelsFile, "agreement:\n  - {metric: s.score, label: good}\n"));
  for (int i = 1; i <= 2; ++i) {
    auto r = run_cmd(evalgraph_cmd(fmt::format("run -q {} --shard {}/2 -o {}", (d.path / "p.yaml").string(), i,
                                               (d.path / fmt::format("s{}", i)).string())));
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    CHECK(!read_run_json(only_run_dir(d.path / fmt::format("s{}", i))).contains("agreement"));
  }
  auto m = run_cmd(evalgraph_cmd("merge " + only_run_dir(d.path / "s1").string() + " " +
                                 only_run_dir(d.path / "s2").string() + " -o " + (d.path / "merged").string()));
  INFO(m.output);
  REQUIRE(m.exit_code == 0);
  const json merged = read_run_json(d.path / "merged")["agreement"];
  const json single = run_ok(d, "p.yaml")["agreement"];
  CHECK(merged["entries"][0]["stats"] == single["entries"][0]["stats"]);
  CHECK(merged["entries"][0]["stats"]["auroc"]["value"].get<double>() == Approx(20.0 / 24));
  auto a = run_cmd(evalgraph_cmd("agree -q --json " + (d.path / "merged").string()));
  INFO(a.output);
  REQUIRE(a.exit_code == 0);
  CHECK(json::parse(a.output)["agreement"]["entries"][0]["stats"] == single["entries"][0]["stats"]);
}

TEST_CASE("agreement: a CSV labels file — cells are text: yes/no, a scale's numbers, an empty cell is no label", "[agree]") {
  TempDir d;
  d.write("data.csv", scored_data());
  std::string csv = "id,good,q\n";
  const char *good[] = {"no", "No", "yes", "0", "1", "TRUE", "false", "yes", "yes", ""};
  for (int i = 1; i <= 10; ++i) csv += fmt::format("r{},{},{}\n", i, good[i - 1], 1 + i / 3);
  d.write("labels.csv", csv);
  d.write("p.yaml", pipeline("labels: {path: labels.csv, key: id, fields: {good: {type: binary}, q: {type: ordinal, "
                             "values: [1, 2, 3, 4]}}}\n",
                             "agreement:\n  - {metric: s.ok, label: good}\n"));
  json run = run_ok(d, "p.yaml");
  const json &e = entry(run["agreement"], "s.ok~good");
  CHECK(e["n"] == 9);  // r10's empty cell: no label
  CHECK(e["left_out"]["unlabelled"] == 1);
  CHECK(e["confusion"] == json::parse("[[3, 1], [1, 4]]"));
  // A value off the scale names the file and the line (a CSV row has no column of its own here).
  d.write("labels.csv", csv + "r11,yes,7\n");
  check_refused(d, "p.yaml", {"labels.csv:12:", "label 'q' of record 'r11': \"7\" is not one of its values [1, 2, 3, 4]"});
}
