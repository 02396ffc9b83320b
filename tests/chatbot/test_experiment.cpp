// Whole chatbot experiments (seed 004's config format) against the loopback LLM test server with scripted
// verdicts: exact summary numbers, invalid-verdict counts, the files; bad configurations fail before any LLM
// call; --only-transform; combine-experiments; create-dataset; the CLI.
#include <array>
#include <catch2/catch.hpp>
#include <fstream>
#include <regex>

#include "chatbot_config/experiment.h"
#include "chatbot_config/xlsx_reader.h"
#include "test_llm_server.h"
#include "csv_cells.h"
#include "test_registry.h"
#include "test_support.h"

using namespace evalgraph;
using nlohmann::json;
using testsupport::TempDir;
namespace fs = std::filesystem;
using evalgraph::testing::Rule;
using evalgraph::testing::TestLlmServer;

namespace {

using testsupport::registry;

std::string replace_all(std::string s, const std::string &a, const std::string &b) {
  for (std::size_t p = 0; (p = s.find(a, p)) != std::string::npos; p += b.size()) s.replace(p, a.size(), b);
  return s;
}

// A project folder: config/ from pipelines/chatbot/config with URLs pointing at the test server and our own
// evaluation.yaml, llm_tasks.yaml (markers KRIT-P / KRIT-K in the descriptions) and data.
struct Project {
  TempDir dir;
  fs::path root, config;
  explicit Project(const TestLlmServer &server) {
    root = dir.path / "projekt";
    config = root / "config";
    fs::create_directories(config);
    fs::create_directories(root / "data");
    fs::create_directories(root / "secrets");
    const fs::path src = fs::path(REPO_DIR) / "pipelines" / "chatbot" / "config";
    for (const char *f : {"llm_parameters.yaml", "llm_system_prompts.yaml", "create_dataset.yaml"})
      dir.write("projekt/config/" + std::string(f),
                replace_all(testsupport::read_file(src / f), "https://api.openai.com/v1", server.base_url()));
    dir.write("projekt/secrets/llm_api.secret", "sk-test-secret\n");
    dir.write("projekt/config/llm_tasks.yaml",
              "Prägnanz und Einfachheit: |\n  KRIT-P Kurz und einfach.\nVermeidung des Konjunktivs: |\n  KRIT-K Kein Konjunktiv.\n"
              "Lösungsorientierte und positive Sprache: |\n  KRIT-L Lösungen zuerst.\n");
    dir.write("projekt/config/evalgraph_models.yaml",
              "models:\n  gpt_4_o:\n    type: llm\n    url: " + server.base_url() +
                  "\n    model: m-gpt\n    secret_path: ./secrets/llm_api.secret\n    system_prompt: |\n      Vereinfache den Text.\n"
                  "    user_prompt: \"{text}\"\n    inference: {temperature: 0.7}\n");
    dir.write("projekt/data/example_data.csv",
              "Original;Manuell\n"
              "ORIG-1 Sehr geehrte Kunden, der Antrag wird bearbeitet.;MANU-1 Ihr Antrag wird bearbeitet.\n"
              "ORIG-2 Es könnte sein, dass die Frist verlängert werden würde.;MANU-2 Die Frist wird verlängert.\n"
              ";\n");  // an empty input row: skipped
    write_evaluation("example");
  }
  void write_evaluation(const std::string &name, const std::string &extra_transformation = "",
                        const std::string &output_column = "Transformed") {
    dir.write("projekt/config/evaluation.yaml",
              "experiment_name: \"" + name +
                  "\"\ndata_files:\n  - example_data\nreplications: 2\ncsv_separator: \";\"\ninput_column_name: Original\n"
                  "output_column_name: " + output_column + "\ntransformations:\n  gpt_4_o:\n    type: backend\n    model_name: gpt_4_o\n"
                  "    label: GPT 4\n  manuell:\n    type: manual\n    column: Manuell\n    label: Von Hand\n" + extra_transformation +
                  "tasks:\n  - Prägnanz und Einfachheit\n  - Vermeidung des Konjunktivs\nindices:\n  - LLM Hallucination\n"
                  "  - Content Preservation\nscore_weighting:\n  Prägnanz und Einfachheit: 2\n  Vermeidung des Konjunktivs: 1\n"
                  "  LLM Hallucination: 1\nmap:\n  Prägnanz und Einfachheit: Prägnanz\n  Vermeidung des Konjunktivs: Konjunktiv\n"
                  "  LLM Hallucination: Halluzinationen\n");
  }
};

// Scripted judge verdicts by (criterion marker, transformed-text marker); the transform's replies by original.
void script(TestLlmServer &s) {
  auto judge = [&](const std::string &crit, const std::string &text, const std::string &reply) {
    Rule r;
    r.match = crit + "[\\s\\S]*" + text;
    r.regex = true;
    r.any_message = true;
    r.reply = reply;
    s.add_rule(r);
  };
  //            Prägnanz     Konjunktiv           Halluzination
  // GPT-1      True         False.               „True“
  // GPT-2      wahr         {"verdict": true}    Vielleicht   (invalid)
  // MANU-1     False        FALSCH               True
  // MANU-2     **True**     Das ist unklar       true         (Konjunktiv invalid)
  const std::pair<const char *, std::array<const char *, 3>> replies[] = {
      {"GPT-1", {"True", "False.", "„True“"}},
      {"GPT-2", {"wahr", "{\"verdict\": true}", "Vielleicht"}},
      {"MANU-1", {"False", "FALSCH", "True"}},
      {"MANU-2", {"**True**", "Das ist unklar", "true"}},
  };
  for (const auto &[row, reply] : replies) {
    judge("KRIT-P", row, reply[0]);
    judge("KRIT-K", row, reply[1]);
    judge("Inhaltsvergleich", row, reply[2]);
  }
  Rule t1;
  t1.match = "ORIG-1";
  t1.reply = "GPT-1 Ihr Antrag ist in Bearbeitung.";
  s.add_rule(t1);
  Rule t2;
  t2.match = "ORIG-2";
  t2.reply = "GPT-2 Die Frist wird verlängert.";
  s.add_rule(t2);
}

chatbot::RunSettings settings(const Project &p, bool only_transform = false) {
  chatbot::RunSettings s;
  s.config_dir = p.config;
  s.only_transform = only_transform;
  s.jobs = 2;
  s.stderr_level = EG_LOG_ERROR;
  s.cache_path = (p.dir.path / "cache.sqlite").string();
  return s;
}

using chatbot_test::read_csv;

// Cell of a CSV table by row label (first column) and header name.
std::string cell(const std::vector<std::vector<std::string>> &t, const std::string &row, const std::string &col) {
  auto h = std::find(t[0].begin(), t[0].end(), col);
  REQUIRE(h != t[0].end());
  for (const auto &r : t)
    if (r[0] == row) return r[static_cast<std::size_t>(h - t[0].begin())];
  FAIL("no row " << row);
  return "";
}

std::pair<unsigned, unsigned> png_size(const fs::path &p) {
  std::string b = testsupport::read_file(p);
  REQUIRE(b.size() > 33);
  REQUIRE(b.compare(0, 8, "\x89PNG\r\n\x1a\n") == 0);
  REQUIRE(b.compare(12, 4, "IHDR") == 0);
  auto be = [&](std::size_t at) {
    return (static_cast<unsigned>(static_cast<unsigned char>(b[at])) << 24) | (static_cast<unsigned>(static_cast<unsigned char>(b[at + 1])) << 16) |
           (static_cast<unsigned>(static_cast<unsigned char>(b[at + 2])) << 8) | static_cast<unsigned>(static_cast<unsigned char>(b[at + 3]));
  };
  return {be(16), be(20)};
}

}  // namespace

TEST_CASE("a whole experiment in seed-004 format: exact summary, invalid verdicts counted, all files", "[experiment]") {
  TestLlmServer server;
  script(server);
  Project p(server);
  RunResult r = chatbot::run_experiment(settings(p), registry());
  const fs::path d = r.run_dir;
  CHECK(d.parent_path() == p.root / "results");
  CHECK(d.filename().string().rfind("example__", 0) == 0);
  // 2 transformations x 2 non-empty rows x 2 replications = 8 records, none failed.
  CHECK(r.records == 8);
  CHECK(r.failed_records == 0);
  // Requests: the model transforms 2 rows in each of the 2 replications (independent samples, not one cached
  // answer) = 4; the judge: 3 LLM criteria x 8 records = 24.
  CHECK(server.request_count() == 28);
  for (const char *f : {"detailed_results.csv", "detailed_results.xlsx", "detailed_results.jsonl", "summary.md", "summary.csv",
                        "summary.xlsx", "summary.png", "summary_statistics_replications.csv",
                        "summary_statistics_replications.xlsx", "pipeline.yaml", "dataset.jsonl", "run.json", "report.json"})
    CHECK(fs::exists(d / f));
  for (auto &e : fs::directory_iterator(d)) CHECK(e.path().extension() != ".partial");

  // summary.csv (separator ';' from csv_separator), hand-computed (identical replications):
  //   GPT 4:    Prägnanz (1+1)/2 = 1; Konjunktiv (0+1)/2 = 0.5; Halluzinationen 1 (row 2 invalid, left out);
  //             Content Preservation: row 1 {orig,1,geehrt,kund,antrag,bearbeitet} vs {gpt,1,antrag,bearbeitung} = 2/6,
  //             row 2 {orig,2,frist,verlängert} vs {gpt,2,frist,verlängert} = 3/4 -> (1/3 + 3/4)/2 = 0.541667;
  //             Score (weights 2,1,1; Content Preservation unweighted): row 1 (2+0+1)/4 = 0.75, row 2 null -> 0.75
  //   Von Hand: Prägnanz (0+1)/2 = 0.5; Konjunktiv 0 (row 2 invalid); Halluzinationen 1;
  //             Content Preservation: row 1 3/6, row 2 3/4 -> 0.625; Score row 1 (0+0+1)/4 = 0.25, row 2 null
  auto s = read_csv(d / "summary.csv", ';');
  REQUIRE(s.size() == 3);
  CHECK(s[0] == std::vector<std::string>{"transformation", "Prägnanz", "Konjunktiv", "Halluzinationen", "Content Preservation",
                                         "Score", "Prägnanz invalid", "Konjunktiv invalid", "Halluzinationen invalid",
                                         "Content Preservation invalid", "rows", "failed_rows"});
  CHECK(s[1][0] == "GPT 4");  // order of the configuration
  CHECK(s[2][0] == "Von Hand");
  CHECK(cell(s, "GPT 4", "Prägnanz") == "1");
  CHECK(cell(s, "GPT 4", "Konjunktiv") == "0.5");
  CHECK(cell(s, "GPT 4", "Halluzinationen") == "1");
  CHECK(cell(s, "GPT 4", "Content Preservation") == "0.541667");
  CHECK(cell(s, "GPT 4", "Score") == "0.75");
  CHECK(cell(s, "GPT 4", "Halluzinationen invalid") == "2");
  CHECK(cell(s, "GPT 4", "Konjunktiv invalid") == "0");
  CHECK(cell(s, "Von Hand", "Prägnanz") == "0.5");
  CHECK(cell(s, "Von Hand", "Konjunktiv") == "0");
  CHECK(cell(s, "Von Hand", "Halluzinationen") == "1");
  CHECK(cell(s, "Von Hand", "Content Preservation") == "0.625");
  CHECK(cell(s, "Von Hand", "Score") == "0.25");
  CHECK(cell(s, "Von Hand", "Konjunktiv invalid") == "2");
  CHECK(cell(s, "Von Hand", "rows") == "4");

  // Statistics over the 2 replications: equal replication means -> sd 0 and a zero-width interval.
  auto st = read_csv(d / "summary_statistics_replications.csv", ';');
  REQUIRE(st.size() == 1 + 2 * 5);
  CHECK(st[0] == std::vector<std::string>{"transformation", "criterion", "n_replications", "mean", "std", "min", "max",
                                          "ci95_low", "ci95_high", "values", "invalid", "missing"});
  CHECK(st[2] == std::vector<std::string>{"GPT 4", "Konjunktiv", "2", "0.5", "0", "0.5", "0.5", "0.5", "0.5", "4", "0", "0"});
  CHECK(st[3] == std::vector<std::string>{"GPT 4", "Halluzinationen", "2", "1", "0", "1", "1", "1", "1", "2", "2", "0"});
  CHECK(st[5] == std::vector<std::string>{"GPT 4", "Score", "2", "0.75", "0", "0.75", "0.75", "0.75", "0.75", "2", "0", "2"});

  // summary.md: mean, min, max per transformation and criterion, invalid verdicts counted.
  std::string md = testsupport::read_file(d / "summary.md");
  CHECK(md.find("| Halluzinationen | 1.000 | 1.000 | 1.000 | 2 | 2 | 0 |") != std::string::npos);
  CHECK(md.find("| Konjunktiv | 0.000 | 0.000 | 0.000 | 2 | 2 | 0 |") != std::string::npos);
  CHECK(md.find("Invalid verdicts in total: 4") != std::string::npos);

  // detailed results: 8 rows, the raw invalid answers kept, invalid cells empty (never 0).
  auto det = read_csv(d / "detailed_results.csv", ';');
  REQUIRE(det.size() == 9);
  CHECK(det[0][5] == "Original");
  CHECK(det[0][6] == "Transformed");
  std::size_t with_raw = 0;
  for (const auto &row : det)
    if (row[row.size() - 2] == "Halluzinationen: Vielleicht") {
      ++with_raw;
      CHECK(row[6] == "GPT-2 Die Frist wird verlängert.");
      CHECK(row[9].empty());
    }
  CHECK(with_raw == 2);
  auto xl = chatbot::read_xlsx(d / "detailed_results.xlsx");
  CHECK(xl.size() == 9);
  CHECK(xl[0][7] == "Prägnanz");
  auto sx = chatbot::read_xlsx(d / "summary.xlsx");
  REQUIRE(sx.size() == 3);
  CHECK(sx[1][0] == "GPT 4");
  CHECK(std::stod(sx[1][2]) == Approx(0.5));

  // The chart: a PNG of the configured size.
  CHECK(png_size(d / "summary.png") == std::make_pair(1200u, 700u));

  // Transparency: the generated pipeline and dataset are in the run folder.
  std::string yaml = testsupport::read_file(d / "pipeline.yaml");
  CHECK(yaml.find("judge.task_comparison") != std::string::npos);
  CHECK(yaml.find("index.llm_hallucination") != std::string::npos);
  CHECK(yaml.find("sk-test-secret") == std::string::npos);
  CHECK(testsupport::read_jsonl(d / "dataset.jsonl").size() == 4);
}

TEST_CASE("bad configurations are refused with file and what to do, before any LLM call", "[experiment][errors]") {
  TestLlmServer server;
  script(server);
  auto expect_error = [&](Project &p, const std::vector<std::string> &parts) {
    try {
      chatbot::run_experiment(settings(p), registry());
      FAIL("no error");
    } catch (const ConfigError &e) {
      std::string all;
      for (const auto &d : e.diagnostics()) all += d.str() + "\n";
      INFO(all);
      for (const auto &x : parts) CHECK(all.find(x) != std::string::npos);
    }
    CHECK(server.request_count() == 0);
    CHECK_FALSE(fs::exists(p.root / "results"));
  };
  SECTION("a task of evaluation.yaml missing in llm_tasks.yaml") {
    Project p(server);
    p.dir.write("projekt/config/llm_tasks.yaml", "Prägnanz und Einfachheit: |\n  KRIT-P\n");
    expect_error(p, {"evaluation.yaml:", "task 'Vermeidung des Konjunktivs' is not defined in", "llm_tasks.yaml", "add `Vermeidung des Konjunktivs: |`"});
  }
  SECTION("a data file without the input column") {
    Project p(server);
    p.dir.write("projekt/data/example_data.csv", "Text;Manuell\na;b\n");
    expect_error(p, {"example_data.csv:1:1", "no input column 'Original'", "its columns: Text, Manuell", "set input_column_name"});
  }
  SECTION("an unknown transformation type") {
    Project p(server);
    p.write_evaluation("example", "  dritte:\n    type: chatgpt\n    label: X\n");
    expect_error(p, {"evaluation.yaml:", "transformation 'dritte': unknown type 'chatgpt'", "backend", "manual"});
  }
  SECTION("data_files and transformations missing, empty or not a list and a mapping") {
    struct Case {
      const char *data_files, *transformations, *data_files_at, *transformations_at;
    };
    for (const Case &c : {Case{"", "transformations: [gpt_4_o]\n", "evaluation.yaml:1:1", "evaluation.yaml:6:18"},
                          Case{"data_files: []\n", "transformations: {}\n", "evaluation.yaml:2:13", "evaluation.yaml:7:18"}}) {
      Project p(server);
      std::string ev = testsupport::read_file(p.config / "evaluation.yaml");
      ev = replace_all(ev, "data_files:\n  - example_data\n", c.data_files);
      ev = replace_all(ev,
                       "transformations:\n  gpt_4_o:\n    type: backend\n    model_name: gpt_4_o\n    label: GPT 4\n"
                       "  manuell:\n    type: manual\n    column: Manuell\n    label: Von Hand\n",
                       c.transformations);
      p.dir.write("projekt/config/evaluation.yaml", ev);
      expect_error(p, {std::string(c.data_files_at) +
                           ": error: data_files must list at least one file of the data folder (name without extension)",
                       std::string(c.transformations_at) +
                           ": error: transformations must map at least one id to {type, label, ...}"});
    }
  }
  SECTION("a missing secret file") {
    Project p(server);
    fs::remove(p.root / "secrets" / "llm_api.secret");
    expect_error(p, {"llm_parameters.yaml:", "secrets/llm_api.secret' does not exist", "put the API key into it"});
  }
  SECTION("a backend transformation without a model entry, an unknown index") {
    Project p(server);
    p.dir.write("projekt/config/evalgraph_models.yaml", "models: {}\n");
    std::string ev = testsupport::read_file(p.config / "evaluation.yaml");
    p.dir.write("projekt/config/evaluation.yaml", replace_all(ev, "  - Content Preservation\n", "  - Lesbarkeit XYZ\n"));
    expect_error(p, {"transformation 'gpt_4_o' (type backend, model_name gpt_4_o) has no entry", "evalgraph_models.yaml",
                     "index 'Lesbarkeit XYZ' is not a loaded index plugin", "index.lesbarkeit_xyz"});
  }
}

TEST_CASE("only-transform: the transformations run, then the run stops, http endpoints with a bounded retry", "[experiment]") {
  TestLlmServer server;
  // The http chatbot's first request for ORIG-1 gets a 503 (once per body): the plugin retries.
  Rule fault;
  fault.match = "HTTP-BOT[\\s\\S]*ORIG-1";
  fault.regex = true;
  fault.any_message = true;
  fault.fault = evalgraph::testing::Fault::http_503;
  fault.fault_times = 1;
  fault.reply = "HTTP-1 Antwort.";
  server.add_rule(fault);
  script(server);
  Project p(server);
  p.write_evaluation("example", "  bot:\n    type: http\n    label: Bot\n    url: " + server.base_url() +
                                    "/chat/completions\n    body: {messages: [{role: system, content: HTTP-BOT}, {role: user, "
                                    "content: \"{text}\"}]}\n    answer_pointer: /choices/0/message/content\n"
                                    "    retry_backoff_s: 0.01\n");
  RunResult r = chatbot::run_experiment(settings(p, true), registry());
  // llm: 2 rows x 2 replications; http: the same 4 plus the one retried 503; no judge.
  CHECK(server.request_count() == 9);
  CHECK(r.failed_records == 0);
  CHECK(fs::exists(r.run_dir / "detailed_results.csv"));
  CHECK_FALSE(fs::exists(r.run_dir / "summary.md"));
  auto det = read_csv(r.run_dir / "detailed_results.csv", ';');
  REQUIRE(det.size() == 13);
  CHECK(det[1][6] == "GPT-1 Ihr Antrag ist in Bearbeitung.");
  std::size_t bot = 0;
  for (const auto &row : det)
    if (row[3] == "Bot") {
      ++bot;
      CHECK((row[6] == "HTTP-1 Antwort." || row[6] == "GPT-2 Die Frist wird verlängert."));
    }
  CHECK(bot == 4);
  std::size_t manual = 0;
  for (const auto &row : det) manual += row[3] == "Von Hand" && row[6].rfind("MANU-", 0) == 0;
  CHECK(manual == 4);
}

TEST_CASE("combine-experiments merges result folders and refuses differing column names", "[combine]") {
  TestLlmServer server;
  script(server);
  Project p(server);
  RunResult a = chatbot::run_experiment(settings(p), registry());
  p.write_evaluation("zweites");
  RunResult b = chatbot::run_experiment(settings(p), registry());
  CHECK(server.request_count() == 28);  // the second run's calls all come from the cache
  fs::path c = chatbot::combine_experiments({}, p.root / "results", registry());
  CHECK(c.parent_path() == p.root / "results" / "combined_experiments");
  for (const char *f : {"detailed_results.csv", "detailed_results.xlsx", "summary.md", "summary.csv", "summary.xlsx", "summary.png",
                        "summary_statistics_replications.csv", "summary_statistics_replications.xlsx"})
    CHECK(fs::exists(c / f));
  // The combination is a run of the engine (no sink driven by hand): a results folder with its summary, whose
  // one sink, chatbot.report, got every row of both experiments (2 x 8).
  auto run = json::parse(testsupport::read_file(c / "run.json"));
  CHECK(run["records"] == 16);
  REQUIRE(run["sinks"].size() == 1);
  CHECK(run["sinks"].begin().value()["uses"] == "chatbot.report");
  CHECK(run["sinks"].begin().value()["errors"] == 0);
  CHECK(testsupport::read_jsonl(c / "combined_rows.jsonl").size() == 16);
  auto s = read_csv(c / "summary.csv", ';');
  REQUIRE(s.size() == 5);
  CHECK(s[1][0] == "example: GPT 4");
  CHECK(s[4][0] == "zweites: Von Hand");
  CHECK(cell(s, "zweites: GPT 4", "Score") == "0.75");
  CHECK(read_csv(c / "detailed_results.csv", ';').size() == 17);
  // Named folders only, and a folder with other column names is refused with both named.
  p.write_evaluation("dritte", "", "Vereinfacht");
  RunResult d3 = chatbot::run_experiment(settings(p), registry());
  try {
    chatbot::combine_experiments({a.run_dir, d3.run_dir}, p.root / "results", registry());
    FAIL("no error");
  } catch (const ConfigError &e) {
    std::string m = e.diagnostics().at(0).str();
    CHECK(m.find(d3.run_dir.string()) != std::string::npos);
    CHECK(m.find("'Original'/'Vereinfacht'") != std::string::npos);
    CHECK(m.find("'Original'/'Transformed'") != std::string::npos);
  }
  fs::path c2 = chatbot::combine_experiments({a.run_dir, b.run_dir}, p.root / "results", registry());
  CHECK(read_csv(c2 / "summary.csv", ';').size() == 5);
}

TEST_CASE("create-dataset: one request, the list parsed from prose, written as xlsx, count warning", "[create-dataset]") {
  TestLlmServer server;
  Rule r;
  r.match = "Negativbeispiele";
  r.reply = "Gern, hier die Beispiele:\n1. „Der Antragsteller muss erscheinen.“\n2. Jeder Mitarbeiter erhält einen Ausweis.\n"
            "3. Die Kunden/-innen werden informiert.\nIch hoffe, das hilft.";
  server.add_rule(r);
  Project p(server);
  std::vector<std::string> warnings;
  fs::path out = chatbot::create_dataset({p.config, true, ""}, warnings);
  CHECK(out == p.root / "data" / "gendering_example.xlsx");
  CHECK(server.request_count() == 1);
  auto req = json::parse(server.requests().at(0).body);
  CHECK(req["messages"][1]["content"].get<std::string>().find("Erzeuge 40 Negativbeispiele.") != std::string::npos);
  auto rows = chatbot::read_xlsx(out);
  REQUIRE(rows.size() == 4);
  CHECK(rows[0][0] == "Original");
  CHECK(rows[1][0] == "Der Antragsteller muss erscheinen.");
  CHECK(rows[3][0] == "Die Kunden/-innen werden informiert.");
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0] == "the model returned 3 examples, num_examples is 40");
}

TEST_CASE("the CLI: run --config-dir, combine-experiments, and a configuration error exits 2", "[cli]") {
  TestLlmServer server;
  script(server);
  Project p(server);
  std::string base = std::string("CI=true ") + EVALGRAPH_EXE + " ";
  auto r = testsupport::run_cmd(base + "run --config-dir " + p.config.string() + " -q --cache " + (p.dir.path / "c.sqlite").string());
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK(r.output.find((p.root / "results" / "example__").string()) != std::string::npos);
  CHECK(server.request_count() == 28);
  auto c = testsupport::run_cmd(base + "combine-experiments -o " + (p.root / "results").string());
  INFO(c.output);
  CHECK(c.exit_code == 0);
  CHECK(c.output.find("combined_experiments") != std::string::npos);
  p.dir.write("projekt/config/llm_tasks.yaml", "Prägnanz und Einfachheit: |\n  KRIT-P\n");
  auto bad = testsupport::run_cmd(base + "run --config-dir " + p.config.string());
  CHECK(bad.exit_code == 2);
  CHECK(bad.output.find("Vermeidung des Konjunktivs") != std::string::npos);
  CHECK(server.request_count() == 28);
}

TEST_CASE("the shipped seed-format fixture (pipelines/chatbot/config) is read as it is", "[config]") {
  TempDir t;
  fs::copy(fs::path(REPO_DIR) / "pipelines" / "chatbot", t.path / "p", fs::copy_options::recursive);
  t.write("p/secrets/llm_api.secret", "sk-x\n");
  chatbot::Experiment e = chatbot::load_experiment(t.path / "p" / "config", registry(), false);
  CHECK(e.experiment_name == "example");
  CHECK(e.replications == 3);
  REQUIRE(e.data_files.size() == 1);
  CHECK(e.data_files[0].path.filename() == "example_data.csv");
  REQUIRE(e.transformations.size() == 2);
  CHECK(e.transformations[0].plugin == "transform.llm");
  CHECK(e.transformations[0].label == "GPT 4");
  CHECK(e.transformations[1].plugin == "transform.http");
  REQUIRE(e.criteria.size() == 5);
  CHECK(e.criteria[0].name == "Prägnanz und Einfachheit");
  CHECK(e.criteria[0].display == "Prägnanz");
  CHECK(e.criteria[0].weight == 2);
  CHECK(e.criteria[2].display == "Inklusivität");
  CHECK(e.criteria[4].node_type == "index.llm_hallucination");
  CHECK(e.criteria[4].weight == 3);
  CHECK(e.judge_provider["model"] == "gpt-4o");
  CHECK(e.judge_inference["top_p"] == 0.5);
  CHECK(e.system_prompts.count("evaluate_task_comparison") == 1);
  CHECK(chatbot::write_dataset(e, t.path / "ds.jsonl") == 6);  // 3 rows x 2 transformations
}

// Found by fuzz_config_dir under ASan: the weight's text was a temporary that strtod's end pointer outlived
// (stack-use-after-scope on every score_weighting entry; a long weight made it a heap-use-after-free). In
// the sanitizer build this test fails on the old code; everywhere it pins what a weight may look like.
TEST_CASE("config: score_weighting reads weights as written (long ones too) and refuses junk after a number", "[config]") {
  TempDir t;
  fs::copy(fs::path(REPO_DIR) / "pipelines" / "chatbot", t.path / "p", fs::copy_options::recursive);
  t.write("p/secrets/llm_api.secret", "sk-x\n");
  const fs::path ev = t.path / "p" / "config" / "evaluation.yaml";
  const std::string text = testsupport::read_file(ev);
  auto with_weights = [&](const std::string &p, const std::string &k) {
    std::string s = replace_all(text, "  Prägnanz und Einfachheit: 2\n", "  Prägnanz und Einfachheit: " + p + "\n");
    t.write("p/config/evaluation.yaml", replace_all(s, "  Vermeidung des Konjunktivs: 1\n", "  Vermeidung des Konjunktivs: " + k + "\n"));
  };
  with_weights("2.00000000000000000000000000000000000000", "\"0.25\"");
  chatbot::Experiment e = chatbot::load_experiment(t.path / "p" / "config", registry(), false);
  REQUIRE(e.criteria.size() == 5);
  CHECK(e.criteria[0].weight == 2);
  CHECK(e.criteria[1].weight == 0.25);
  with_weights("1.5 kg", "1.00000000000000000000000000000000000000x");
  try {
    (void)chatbot::load_experiment(t.path / "p" / "config", registry(), false);
    FAIL("no error");
  } catch (const ConfigError &err) {
    REQUIRE(err.diagnostics().size() == 2);
    CHECK(err.diagnostics()[0].str().find("score_weighting 'Prägnanz und Einfachheit': the weight must be a number >= 0") != std::string::npos);
    CHECK(err.diagnostics()[1].str().find("score_weighting 'Vermeidung des Konjunktivs': the weight must be a number >= 0") != std::string::npos);
  }
}
