// Unit tests: verdict parsing, the German readability and content-preservation indices, the statistics over
// replications, the report aggregation with differing replications, the xlsx reader, the list parser.
#include <xlsxwriter.h>

#include <catch2/catch.hpp>
#include <fstream>

#include "chatbot_config/config.h"
#include "chatbot_config/experiment.h"
#include "chatbot_config/xlsx_reader.h"
#include "content.hpp"
#include "readability.hpp"
#include "report.hpp"
#include "csv_cells.h"
#include "evalgraph/input.hpp"
#include "node_run.h"
#include "test_support.h"
#include "judge/verdict.hpp"

using namespace chatbot_judge;
using nlohmann::json;
using testsupport::TempDir;
namespace fs = std::filesystem;

TEST_CASE("verdicts: strict about content, forgiving about form", "[verdict]") {
  for (const char *s : {"True", "true", " TRUE\n", "True.", "\"True\"", "„True“", "'wahr'", "Wahr!", "**True**",
                        "`true`", "{\"verdict\": true}", "{\"Verdict\": \"True\"}", "```json\n{\"verdict\": 1}\n```",
                        "«wahr»"})
    CHECK(parse_verdict(s) == Verdict::yes);
  for (const char *s : {"False", "false.", "FALSCH", "„False“", "{\"verdict\": false}", "{\"verdict\": \"falsch\"}", "*False*"})
    CHECK(parse_verdict(s) == Verdict::no);
  for (const char *s : {"", "Yes", "ja", "True, because it is short", "Das Kriterium ist erfüllt", "True False",
                        "{\"answer\": true}", "{\"verdict\": \"maybe\"}", "{\"verdict\": 2}", "Answer: True", "1", "{broken"})
    CHECK(parse_verdict(s) == Verdict::invalid);
  auto out = verdict_output(Verdict::invalid, "Vielleicht");
  CHECK(out["value"].is_null());
  CHECK(out["valid"] == false);
  CHECK(out["raw"] == "Vielleicht");
  CHECK(render("A {prompt_input_1} B {prompt_input_2} {x}", {{"prompt_input_1", "o{prompt_input_2}"}, {"prompt_input_2", "k"}}) ==
        "A o{prompt_input_2} B k {x}");
}

namespace {
// The smallest TextPairNode: the two texts' lengths.
struct Lengths : evalgraph::TextPairNode {
  Lengths(const evalgraph::Host &, const evalgraph::NoParams &) : TextPairNode("test.lengths") {}
  json compare(evalgraph::Call &, const std::string &o, const std::string &t) override { return {{"o", o.size()}, {"t", t.size()}}; }
};
}  // namespace

TEST_CASE("TextPairNode: reads original and transformed, one record or a group, and names a port that is not a string", "[index]") {
  const eg_node_type t = evalgraph::text_pair_type<Lengths>({.kind = EG_KIND_INDEX,
                                                             .name = "test.lengths",
                                                             .description = "lengths",
                                                             .writes = {"o", "t"},
                                                             .flags = EG_FLAG_THREAD_SAFE,
                                                             .params = evalgraph::no_params()});
  CHECK(std::string(t.reads[0]) == "original");
  CHECK(std::string(t.reads[1]) == "transformed");
  CHECK(t.reads[2] == nullptr);
  const NodeRun run(t);
  CHECK(run(R"({"original": "abc", "x": [1], "transformed": "d\u00e9"})", EG_OK) == R"({"o":3,"t":3})");
  CHECK(run(R"([{"original": "", "transformed": "z"}, {"original": "ab", "transformed": ""}])", EG_OK) == R"([{"o":0,"t":1},{"o":2,"t":0}])");
  CHECK(run(R"({"original": null, "transformed": "z"})", EG_INVALID_INPUT) == "test.lengths: port 'original' must be a string, not null");
  CHECK(run(R"({"original": "a", "transformed": 3})", EG_INVALID_INPUT) == "test.lengths: port 'transformed' must be a string, not number");
  CHECK(run(R"({"original": "a"})", EG_INVALID_INPUT) == "test.lengths: port 'transformed' must be a string, not null");
}

TEST_CASE("readability: syllables with umlauts, Amstad FRE and Wiener Sachtextformel by hand", "[index]") {
  using chatbot_text::count_syllables;
  using chatbot_text::decode;
  CHECK(count_syllables(decode("Größe")) == 2);        // Grö-ße
  CHECK(count_syllables(decode("Übergänge")) == 4);    // Ü-ber-gän-ge
  CHECK(count_syllables(decode("Häuser")) == 2);       // äu is one group
  CHECK(count_syllables(decode("Bearbeitung")) == 3);  // ea undercounted (hiatus): Bear-bei-tung
  CHECK(count_syllables(decode("Zweck")) == 1);
  // "Die Katze sitzt auf der Matte." 6 words, 1 sentence, 8 syllables (Kat-ze, Mat-te)
  // ASL 6, ASW 8/6; FRE = 180 - 6 - 58.5*8/6 = 96
  auto a = chatbot_text::readability("Die Katze sitzt auf der Matte.");
  CHECK(a.words == 6);
  CHECK(a.sentences == 1);
  CHECK(a.syllables == 8);
  CHECK(a.fre == Approx(96.0));
  // WSTF1: MS 0 %, SL 6, IW 0 % (no word > 6 letters), ES 4/6 = 66.67 %
  // = 0.1672*6 - 0.0327*66.6667 - 0.875 = 1.0032 - 2.18 - 0.875 = -2.0518
  CHECK(a.wstf == Approx(0.1672 * 6 - 0.0327 * (400.0 / 6.0) - 0.875));
  // Two sentences, umlauts: "Über Änderungen entscheidet die Behörde. Sie prüft schnell!"
  // Ü-ber(2) Än-de-run-gen(4) ent-schei-det(3) die(1) Be-hör-de(3) | Sie(1) prüft(1) schnell(1) = 16 syl, 8 words
  auto b = chatbot_text::readability("Über Änderungen entscheidet die Behörde. Sie prüft schnell!");
  CHECK(b.words == 8);
  CHECK(b.sentences == 2);
  CHECK(b.syllables == 16);
  CHECK(b.fre == Approx(180.0 - 4.0 - 58.5 * 2.0));  // 59
  CHECK(chatbot_text::readability("   ").defined() == false);
}

TEST_CASE("content preservation: content-word recall over light stems", "[index]") {
  // O = {antrag, kund, geehrt, bearbeitet}; T = {antrag, bearbeitet, kundinn->kund? }
  auto p = chatbot_text::content_preservation("Sehr geehrte Kunden, der Antrag wird bearbeitet.",
                                              "Liebe Kundinnen und Kunden: Ihr Antrag ist in Bearbeitung.");
  // original stems: geehrt, kund, antrag, bearbeitet (sehr/der/wird are stop words) -> 4
  // transformed: lieb, kund (Kundinnen -> kund, Kunden -> kund), antrag, bearbeitung -> 4
  // shared: kund, antrag -> recall 2/4, precision 2/4
  CHECK(p.n_original == 4);
  CHECK(p.n_transformed == 4);
  CHECK(p.n_shared == 2);
  CHECK(p.recall == Approx(0.5));
  CHECK(p.f1 == Approx(0.5));
  CHECK(p.missing == std::vector<std::string>{"geehrt", "bearbeitet"});
  CHECK(chatbot_text::content_preservation("und die der", "x").defined() == false);
  CHECK(chatbot_text::content_stems("Straße STRASSE") == std::vector<std::string>{"strass"});
}

TEST_CASE("statistics over replications: mean, sample sd, 95% t-interval", "[stats]") {
  // means 0.5, 1.0, 0.75: mean 0.75, sd = sqrt((0.0625+0.0625+0)/2) = 0.25,
  // t(0.975, 2) = 4.302653, half width = 4.302653 * 0.25 / sqrt(3) = 0.621034
  auto s = chatbot_report::rep_stats({0.5, 1.0, 0.75});
  CHECK(s.n == 3);
  CHECK(s.mean == Approx(0.75));
  CHECK(s.min == Approx(0.5));
  CHECK(s.max == Approx(1.0));
  REQUIRE(s.sd);
  CHECK(*s.sd == Approx(0.25));
  CHECK(*s.ci_low == Approx(0.75 - 0.621034).epsilon(1e-5));
  CHECK(*s.ci_high == Approx(0.75 + 0.621034).epsilon(1e-5));
  auto one = chatbot_report::rep_stats({0.4});
  CHECK(one.n == 1);
  CHECK_FALSE(one.sd);
  CHECK_FALSE(one.ci_low);
}

using chatbot_test::read_csv;

TEST_CASE("report: replications that differ give mean/min/max of replication means and counted invalid verdicts", "[report]") {
  TempDir d;
  chatbot_report::ReportConfig c;
  c.output_dir = d.path / "out";
  c.experiment_name = "unit";
  c.rows_mode = true;
  c.separator = ';';
  c.transformations = {{"a", "Modell Ä"}};
  c.criteria = {{"Prägnanz und Einfachheit", "Prägnanz", "", "task"}};
  c.has_score = true;
  chatbot_report::Report r(c);
  // replication 0: values 1, 0 -> mean 0.5; replication 1: 1, (invalid) -> 1.0; replication 2: 1, 0.5? (binary: 1,1) -> 1
  auto row = [](int rep, json v, const char *status, json score) {
    json crit = {{"value", v}, {"status", status}};
    if (std::string(status) == "invalid") crit["raw"] = "Vielleicht";
    return json{{"experiment", "unit"}, {"data_file", "d"}, {"row", 1}, {"transformation", "a"}, {"transformation_label", "Modell Ä"},
                {"replication", rep}, {"original", "o"}, {"transformed", "t"}, {"criteria", {{"Prägnanz und Einfachheit", crit}}},
                {"score", score}, {"errors", json::object()}};
  };
  r.add(row(0, 1, "ok", 1));
  r.add(row(0, 0, "ok", 0));
  r.add(row(1, 1, "ok", 1));
  r.add(row(1, nullptr, "invalid", nullptr));
  r.add(row(2, 1, "ok", 1));
  r.add(row(2, 1, "ok", 1));
  auto files = r.finish();
  CHECK(files.size() == 10);
  // Prägnanz: replication means 0.5, 1, 1 -> mean 0.833333, min 0.5, max 1; invalid 1
  auto sum = read_csv(c.output_dir / "summary.csv", ';');
  REQUIRE(sum.size() == 2);
  CHECK(sum[0] == std::vector<std::string>{"transformation", "Prägnanz", "Score", "Prägnanz invalid", "rows", "failed_rows"});
  CHECK(sum[1] == std::vector<std::string>{"Modell Ä", "0.833333", "0.833333", "1", "6", "0"});
  auto st = read_csv(c.output_dir / "summary_statistics_replications.csv", ';');
  REQUIRE(st.size() == 3);
  // sd of (0.5, 1, 1) = sqrt((1/9*... )) : deviations -1/3, 1/6, 1/6 -> ss = 1/9+1/36+1/36 = 1/6; /2 -> 1/12; sd 0.288675
  CHECK(st[1][1] == "Prägnanz");
  CHECK(st[1][2] == "3");
  CHECK(std::stod(st[1][4]) == Approx(0.288675).epsilon(1e-5));
  CHECK(st[1][5] == "0.5");
  CHECK(st[1][6] == "1");
  CHECK(st[1][10] == "1");  // invalid
  std::string md = testsupport::read_file(c.output_dir / "summary.md");
  CHECK(md.find("| Prägnanz | 0.833 | 0.500 | 1.000 | 3 | 1 | 0 |") != std::string::npos);
  auto det = read_csv(c.output_dir / "detailed_results.csv", ';');
  REQUIRE(det.size() == 7);
  CHECK(det[4][det[0].size() - 2] == "Prägnanz: Vielleicht");
  CHECK(det[4][7].empty());  // the invalid verdict is no 0
  auto x = evalgraph::chatbot::read_xlsx(c.output_dir / "detailed_results.xlsx");
  REQUIRE(x.size() == 7);
  CHECK(x[0][7] == "Prägnanz");
  CHECK(x[2][7] == "0");
}

TEST_CASE("xlsx reader: shared strings, inline strings, numbers, gaps, umlauts", "[xlsx]") {
  TempDir d;
  fs::path f = d.path / "data.xlsx";
  lxw_workbook *wb = workbook_new(f.c_str());
  lxw_worksheet *ws = workbook_add_worksheet(wb, "Tabelle1");
  worksheet_write_string(ws, 0, 0, "Original", nullptr);
  worksheet_write_string(ws, 0, 2, "Zahl", nullptr);
  worksheet_write_string(ws, 1, 0, "Größe & <Maß> \"x\"", nullptr);
  worksheet_write_number(ws, 1, 2, 3.5, nullptr);
  worksheet_write_string(ws, 3, 0, "Zeile vier", nullptr);
  REQUIRE(workbook_close(wb) == LXW_NO_ERROR);
  auto rows = evalgraph::chatbot::read_xlsx(f);
  REQUIRE(rows.size() == 4);
  CHECK(rows[0] == std::vector<std::string>{"Original", "", "Zahl"});
  CHECK(rows[1][0] == "Größe & <Maß> \"x\"");
  CHECK(rows[1][2] == "3.5");
  CHECK(rows[2].empty());
  CHECK(rows[3][0] == "Zeile vier");
  auto t = evalgraph::chatbot::read_table(f, ",");
  CHECK(t.header[0] == "Original");
  CHECK(t.rows.size() == 2);  // the empty row is skipped
  std::ofstream(d.path / "bad.xlsx") << "not a zip";
  CHECK_THROWS_WITH(evalgraph::chatbot::read_xlsx(d.path / "bad.xlsx"), Catch::Contains("bad.xlsx"));
}

TEST_CASE("create-dataset list parser: JSON arrays, numbered and bulleted lines, prose around", "[create-dataset]") {
  using evalgraph::chatbot::parse_example_list;
  CHECK(parse_example_list("Hier sind die Beispiele:\n```json\n[\"Erstens, ja.\", \"Zweitens\"]\n```\nViel Erfolg!") ==
        std::vector<std::string>{"Erstens, ja.", "Zweitens"});
  CHECK(parse_example_list("[{\"text\": \"A\"}, {\"beispiel\": \"B\"}]") == std::vector<std::string>{"A", "B"});
  CHECK(parse_example_list("Gern:\n1. „Der Mitarbeiter kommt.“\n2) Die Kunden warten.\n\nFertig.") ==
        std::vector<std::string>{"Der Mitarbeiter kommt.", "Die Kunden warten."});
  CHECK(parse_example_list("- eins\n* zwei\n• drei") == std::vector<std::string>{"eins", "zwei", "drei"});
  CHECK(parse_example_list("Keine Liste hier.").empty());
}

TEST_CASE("slug: umlauts transliterated, index names resolve to node types", "[config]") {
  CHECK(evalgraph::chatbot::slug("Prägnanz und Einfachheit") == "praegnanz_und_einfachheit");
  CHECK(evalgraph::chatbot::slug("LLM Hallucination") == "llm_hallucination");
  CHECK(evalgraph::chatbot::slug("Größe/Maß") == "groesse_mass");
}
