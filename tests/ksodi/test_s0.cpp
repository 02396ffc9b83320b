#include <catch2/catch.hpp>
#include <cmath>
#include <fstream>
#include <sstream>

#include "helpers.hpp"
#include "ksodi_measures/s0.hpp"
#include "ksodi_measures/s0_params.hpp"

using ksodi::S0Input;
using ksodi::S0Params;

namespace {
ksodi::S0Result run(const std::string &answer, const std::string &system = "", const std::string &user = "",
                    const S0Params &p = S0Params{}, int *calls = nullptr) {
  S0Input in;
  in.answer = answer;
  in.system_prompt = system;
  in.user_text = user;
  return ksodi::compute_s0(in, p, tfidf_fn(calls));
}
}  // namespace

TEST_CASE("S0: no expected format → F neutral 0.5, short-answer guardrail", "[s0]") {
  int calls = 0;
  auto r = run("Das ist eine kurze Antwort.", "Sei freundlich.", "Wie geht es?", S0Params{}, &calls);
  CHECK(r.no_explicit_format);
  CHECK(r.expectations.empty());
  CHECK(r.F == Approx(0.5));
  CHECK(r.n_paragraphs == 1);
  CHECK(r.n_sentences == 1);
  // Raw G_str would be min(1,3)/10 = 0.1; one sentence without markers is raised to short_answer_min = 0.2.
  CHECK(r.short_answer_guardrail);
  CHECK(r.G_str == Approx(0.2));
  CHECK(r.R_red == 0.0);
  CHECK(calls == 0);  // < 2 paragraphs: no embedding call
  CHECK(r.S0 == Approx(0.4 * 0.5 + 0.4 * 0.2));
  // Two sentences: no guardrail, G_str = 1/10.
  auto r2 = run("Das ist eine Antwort. Sie hat zwei Sätze.");
  CHECK_FALSE(r2.short_answer_guardrail);
  CHECK(r2.G_str == Approx(0.1));
  // Empty answer: G_str 0, no guardrail.
  auto r3 = run("");
  CHECK(r3.G_str == 0.0);
  CHECK(r3.S0 == Approx(0.2));
}

TEST_CASE("S0: JSON checks", "[s0]") {
  const std::string sys = "Antworte im JSON-Format.";
  auto fenced = run("Hier ist das Ergebnis:\n\n```json\n{\"status\": \"ok\", \"items\": [1, 2]}\n```\n\nViel Erfolg!", sys);
  REQUIRE(fenced.expectations == std::vector<std::string>{"JSON"});
  CHECK(fenced.format_passed.at("JSON"));
  CHECK(fenced.F == Approx(1.0));
  auto whole = run("  {\"a\": 1, \"b\": [true, null]}\n", sys);
  CHECK(whole.F == Approx(1.0));
  CHECK(whole.format_evidence.at("JSON") == "whole text parses as JSON");
  auto invalid = run("```json\n{\"a\": 1,}\n```", sys);
  CHECK_FALSE(invalid.format_passed.at("JSON"));
  CHECK(invalid.F == 0.0);
  auto scalar = run("\"just a string\"", sys);  // valid JSON but no object/array
  CHECK(scalar.F == 0.0);
  auto prose_json = run("Das Ergebnis lautet {\"ok\": true} wie gewünscht.", sys);
  CHECK(prose_json.F == Approx(1.0));
  // "schema" alone is not a JSON wish; with an inline structure it is.
  CHECK(run("x", "Erkläre das Datenbank schema kurz.").expectations.empty());
  CHECK(run("x", "Halte dich an dieses Schema: {\"a\": 1}").expectations == std::vector<std::string>{"JSON"});
}

TEST_CASE("S0: two formats expected, one met → partial credit 0.5", "[s0]") {
  auto r = run("| Plan | Preis |\n|---|---|\n| Basic | 5 € |\n\nJSON folgt später.", "",
               "Gib mir eine Tabelle und danach JSON.");
  REQUIRE(r.expectations == std::vector<std::string>{"JSON", "TABLE"});
  CHECK(r.format_passed.at("TABLE"));
  CHECK_FALSE(r.format_passed.at("JSON"));
  CHECK(r.F == Approx(0.5));
  // The user text can be switched off as a source.
  S0Params p;
  p.use_user_text = false;
  CHECK(run("x", "", "Gib mir eine Tabelle.", p).no_explicit_format);
}

TEST_CASE("S0: LIST, STEPS, TABLE, HEADINGS, CODEBLOCK checks", "[s0]") {
  std::string ev;
  double share = 0;
  CHECK(ksodi::check_list("Vorteile:\n- schnell\n- günstig\n- robust", 0.3, share, ev));
  CHECK(share == Approx(0.75));
  CHECK_FALSE(ksodi::check_list("Eine Zeile.\n- nur ein Punkt\nNoch Text.\nUnd mehr.", 0.3, share, ev));
  CHECK(share == Approx(0.25));
  CHECK_FALSE(ksodi::check_list("A\nB\nC\nD\nE\nF\nG\n- x\n- y", 0.3, share, ev));  // 2 of 9 < 0.3

  CHECK(ksodi::check_steps("1. Öffnen\n2. Klicken", ev));
  CHECK(ksodi::check_steps("Schritt 1: App öffnen. Dann Schritt 2: speichern.", ev));
  CHECK(ksodi::check_steps("Gehe so vor: 1) öffnen 2) speichern", ev));
  CHECK_FALSE(ksodi::check_steps("Am 3. Mai ist es so weit. Nichts weiter.", ev));
  CHECK_FALSE(ksodi::check_steps("2. Zweiter\n5. Fünfter", ev));

  CHECK(ksodi::check_table("| A | B |\n|---|:--:|\n| 1 | 2 |", ev));
  CHECK(ksodi::check_table("Name;Alter\nAnna;30\nBen;25", ev));
  CHECK_FALSE(ksodi::check_table("| A | B |\n| 1 | 2 |", ev));  // no separator row
  CHECK_FALSE(ksodi::check_table("Äpfel, Birnen und Pflaumen.\nRot, grün und blau.\nEins, zwei und drei.", ev));

  CHECK(ksodi::check_headings("## Titel\nText", ev));
  CHECK(ksodi::check_headings("**Ergebnis**\nText", ev));
  CHECK_FALSE(ksodi::check_headings("Nur Text ohne Titel.", ev));

  CHECK(ksodi::check_codeblock("So:\n```python\nprint(1)\n```", ev));
  CHECK_FALSE(ksodi::check_codeblock("So:\n```python\nprint(1)\n", ev));  // not closed
  CHECK_FALSE(ksodi::check_codeblock("```\n\n```", ev));                 // empty

  auto r = run("## Installation\n\n```bash\npip install x\n```", "Nutze Überschriften und einen Codeblock.");
  CHECK(r.expectations == std::vector<std::string>{"CODEBLOCK", "HEADINGS"});
  CHECK(r.F == Approx(1.0));
  // Markdown used inside a prompt is not a format wish; mentioned inline it is.
  CHECK(run("x", "## Rolle\nDu hilfst.").expectations.empty());
  CHECK(run("x", "Setze Code in ``` Zäune.").expectations == std::vector<std::string>{"CODEBLOCK"});
  // Negated wishes do not count.
  CHECK(run("x", "Bitte keine Tabelle, nur Fließtext.").expectations.empty());
}

TEST_CASE("S0: G_str counts", "[s0]") {
  auto r = run("## Überblick\n\nSo geht es:\n\n1. Öffnen\n2. Speichern\n\n- Tipp A\n- Tipp B");
  CHECK(r.n_headings == 2);  // "## Überblick" and the label line "So geht es:"
  CHECK(r.n_numbered == 2);
  CHECK(r.n_bullets == 2);
  CHECK(r.n_paragraphs == 4);
  CHECK(r.G_str == Approx((2 + 2 + 2 + 3) / 10.0));
  S0Params p;
  p.K = 5;
  CHECK(run("## Überblick\n\nSo geht es:\n\n1. Öffnen\n2. Speichern\n\n- Tipp A\n- Tipp B", "", "", p).G_str == 1.0);
}

TEST_CASE("S0: R_red is an exact TF-IDF cosine for two paragraphs", "[s0]") {
  int calls = 0;
  auto r = run("Apple banana.\n\nApple cherry.", "", "", S0Params{}, &calls);
  CHECK(calls == 1);
  const double idf1 = std::log(3.0 / 3.0) + 1, idf2 = std::log(3.0 / 2.0) + 1;
  const double cos = idf1 * idf1 / (idf1 * idf1 + idf2 * idf2);
  CHECK(r.R_red == Approx(cos).epsilon(1e-6));
  CHECK(r.similarity_model_id == "tfidf-v1");
  CHECK(r.G_str == Approx(0.2));
  CHECK(r.S0 == Approx(0.4 * 0.5 + 0.4 * 0.2 - 0.2 * cos).epsilon(1e-6));
  // Jaccard variant: {apple, banana} vs {apple, cherry} = 1/3; no embedding call.
  S0Params p;
  p.redundancy = ksodi::Redundancy::Jaccard;
  calls = 0;
  auto j = run("Apple banana.\n\nApple cherry.", "", "", p, &calls);
  CHECK(calls == 0);
  CHECK(j.R_red == Approx(1.0 / 3.0));
  // Identical paragraphs: full redundancy.
  CHECK(run("Gleicher Text hier.\n\nGleicher Text hier.").R_red == Approx(1.0));
}

TEST_CASE("S0: weights, clipping and alpha per tool profile", "[s0]") {
  S0Params p;
  p.alpha_by_tool_profile["strict-json"] = 0.8;
  S0Input in;
  in.answer = "{\"ok\": true}";
  in.tool_profile = "Output: valid JSON only.";
  in.tool_profile_id = "strict-json";
  auto r = ksodi::compute_s0(in, p, tfidf_fn());
  CHECK(r.alpha == Approx(0.8));
  CHECK(r.alpha_source == "tool_profile:strict-json");
  CHECK(r.F == 1.0);
  CHECK(r.G_str == Approx(0.2));  // guardrail (one unit, no markers)
  CHECK(r.S0 == Approx(0.8 * 1.0 + 0.4 * 0.2));
  p.alpha_by_tool_profile["strict-json"] = 2.0;
  CHECK(ksodi::compute_s0(in, p, tfidf_fn()).S0 == 1.0);  // clipped
}

// ---- detector 1.1: a list block anywhere, ordered steps, requested counts, "asked for, not mentioned" ----------

namespace {
std::vector<std::string> expected(const std::string &user, const std::string &system = "") {
  return run("x", system, user).expectations;
}
const ksodi::CountCheck &only_count(const ksodi::S0Result &r, const std::string &fmt) {
  REQUIRE(r.format_counts.count(fmt) == 1);
  REQUIRE(r.format_counts.at(fmt).size() == 1);
  return r.format_counts.at(fmt).front();
}
}  // namespace

TEST_CASE("S0: a list inside a dialogue satisfies LIST (a list block of >= 2 items anywhere)", "[s0][list]") {
  const std::string answer =
      "Gerne helfe ich Ihnen weiter. Ihre Rechnung wird jeden Monat automatisch erstellt.\n"
      "Sie finden sie im Kundenportal, sobald sie bereitsteht.\n"
      "Hier die wichtigsten Punkte:\n"
      "- Erstellung: am 3. Werktag\n"
      "- Ablage: im Kundenportal\n"
      "- Einwände: acht Wochen lang\n"
      "Wenn Sie Fragen zu einzelnen Posten haben, melden Sie sich gern.\n"
      "Ich kann Ihnen auch erklären, wie sich der Betrag zusammensetzt.\n"
      "Außerdem lässt sich die Rechnung als PDF herunterladen.\n"
      "Einen schönen Tag noch!\n"
      "Ihr NordNetz-Team";
  auto r = run(answer, "", "Wann wird meine Rechnung erstellt? Antworte in Stichpunkten.");
  REQUIRE(r.expectations == std::vector<std::string>{"LIST"});
  CHECK(r.expectation_evidence.at("LIST") == "user_text: 'in stichpunkten'");
  CHECK(r.format_passed.at("LIST"));  // 3 of 11 lines are items: fails the old 30 % share rule
  const ksodi::FormatItems &it = r.format_items.at("LIST");
  CHECK(it.n_items == 3);
  CHECK(it.first_line == 4);
  CHECK(it.last_line == 6);
  CHECK(it.first_item == "Erstellung: am 3. Werktag");
  CHECK(it.n_blocks == 1);
  CHECK(r.format_evidence.at("LIST").find("3 item(s), lines 4-6") != std::string::npos);
  // One item is no list; the old share rule is still available as an option.
  CHECK_FALSE(run("Text.\n- nur ein Punkt\nMehr Text.", "", "Antworte in Stichpunkten.").format_passed.at("LIST"));
  S0Params p;
  p.list_min_share = 0.3;
  CHECK_FALSE(run(answer, "", "Antworte in Stichpunkten.", p).format_passed.at("LIST"));
}

TEST_CASE("S0: list blocks — nesting, loose items, continuation, interrupted numbering", "[s0][list]") {
  auto b = ksodi::list_blocks("Intro\n- a\n  - a1\n  - a2\n- b\n\n- c\n  more about c\n\nText\n\n1. x\n2. y");
  REQUIRE(b.size() == 2);
  CHECK(b[0].n_items == 3);  // a, b, c: nested a1/a2 and the indented line belong to their items
  CHECK(b[0].first_line == 1);
  CHECK(b[0].last_line == 6);  // the line of "- c": the last top-level item
  CHECK(b[0].first_item == "a");
  CHECK(b[1].n_items == 2);
  // Numbered items separated by unindented explanations stay one list when the numbering continues.
  auto n = ksodi::list_blocks("1. **Router neu starten**\n\nZiehen Sie den Stecker.\n\n2. **Kabel prüfen**\n\nDas Kabel muss fest sitzen.\n\n3. **Störung melden**");
  REQUIRE(n.size() == 1);
  CHECK(n[0].n_items == 3);
  // Lazy continuation (no blank line, no indentation) keeps the item open; a blank line and prose end the list.
  auto l = ksodi::list_blocks("- a\nweiter a\n- b\n\nProsa danach.\n- c");
  REQUIRE(l.size() == 2);
  CHECK(l[0].n_items == 2);
  CHECK(l[1].n_items == 1);
  std::string ev;
  double share = 0;
  CHECK(ksodi::check_list("A\nB\nC\nD\nE\nF\nG\n- x\n- y", 0.0, share, ev));  // no share rule by default
}

TEST_CASE("S0: a requested count is checked against the largest list block", "[s0][count]") {
  const std::string three = "Kurz:\n- eins\n- zwei\n- drei\nDas war's.";
  const std::string four = "Kurz:\n- eins\n- zwei\n- drei\n- vier";
  SECTION("exactly 4 bullet points, 3 given") {
    auto r = run(three, "", "Summarize the policy. Use exactly 4 bullet points.");
    REQUIRE(r.expectations == std::vector<std::string>{"LIST"});
    CHECK(r.expectation_evidence.at("LIST") == "user_text: 'use exactly 4 bullet points'");
    CHECK_FALSE(r.format_passed.at("LIST"));
    CHECK(r.F == 0.0);
    const auto &c = only_count(r, "LIST");
    CHECK(c.relation == "exactly");
    CHECK(c.requested == 4);
    CHECK(c.found == 3);
    CHECK_FALSE(c.passed);
    CHECK(c.phrase == "exactly 4 bullet points");
    CHECK(c.source == "user_text");
    CHECK(r.format_evidence.at("LIST").find("requested exactly 4") != std::string::npos);
    CHECK(run(four, "", "Summarize the policy. Use exactly 4 bullet points.").format_passed.at("LIST"));
  }
  SECTION("genau drei Punkte, 4 given") {
    auto r = run(four, "", "Fasse die Regeln in genau drei Punkten zusammen.");
    REQUIRE(r.expectations == std::vector<std::string>{"LIST"});
    const auto &c = only_count(r, "LIST");
    CHECK(c.relation == "exactly");
    CHECK(c.requested == 3);
    CHECK(c.found == 4);
    CHECK(c.phrase == "genau drei punkten");
    CHECK_FALSE(r.format_passed.at("LIST"));
    CHECK(run(three, "", "Fasse die Regeln in genau drei Punkten zusammen.").format_passed.at("LIST"));
  }
  SECTION("Nenne genau drei Punkte / tell me exactly 3 points: an explain verb with counted points") {
    for (const char *prompt : {"Nenne genau drei Punkte, warum der Router blinkt.", "Tell me exactly 3 points about the policy."}) {
      INFO(prompt);
      auto r = run(four, "", prompt);
      REQUIRE(r.expectations == std::vector<std::string>{"LIST"});
      CHECK(only_count(r, "LIST").requested == 3);
      CHECK(only_count(r, "LIST").found == 4);
      CHECK_FALSE(r.format_passed.at("LIST"));
      CHECK(run(three, "", prompt).format_passed.at("LIST"));
    }
    // uncounted points name no list ("Nenne die wichtigsten Punkte" asks for content, not a form)
    CHECK(run(four, "", "Nenne die wichtigsten Punkte des Vertrags.").expectations.empty());
  }
  SECTION("the largest block decides, not a smaller one that happens to fit") {
    auto r = run("Optionen:\n- a\n- b\n- c\n- d\n- e\n\nHinweise:\n- x\n- y\n- z", "", "List exactly three options.");
    CHECK(only_count(r, "LIST").found == 5);
    CHECK_FALSE(r.format_passed.at("LIST"));
  }
  SECTION("a single requested item lowers the minimum to one") {
    CHECK(run("- nur das", "", "Answer in exactly one bullet point.").format_passed.at("LIST"));
  }
}

TEST_CASE("S0: at least / at most / up to / more than, DE and EN", "[s0][count]") {
  auto list_of = [](int n) {
    std::string s = "Antwort:\n";
    for (int i = 1; i <= n; ++i) s += "- Punkt " + std::to_string(i) + "\n";
    return s;
  };
  struct Case {
    std::string prompt, relation;
    int requested = 0, pass_with = 0, fail_with = 0;
  };
  std::vector<Case> cases;
  std::ifstream table(EVALGRAPH_SOURCE_DIR "/tests/ksodi/data/count_requests.tsv");
  REQUIRE(table);
  for (std::string line; std::getline(table, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    Case c;
    std::getline(fields, c.prompt, '\t');
    std::getline(fields, c.relation, '\t');
    fields >> c.requested >> c.pass_with >> c.fail_with;
    REQUIRE(fields);
    cases.push_back(c);
  }
  REQUIRE(cases.size() == 13);
  for (const Case &c : cases) {
    INFO(c.prompt);
    auto ok = run(list_of(c.pass_with), "", c.prompt);
    REQUIRE(ok.expectations == std::vector<std::string>{"LIST"});
    const auto &k = only_count(ok, "LIST");
    CHECK(k.relation == c.relation);
    CHECK(k.requested == c.requested);
    CHECK(ok.format_passed.at("LIST"));
    auto bad = run(list_of(c.fail_with), "", c.prompt);
    CHECK_FALSE(bad.format_passed.at("LIST"));
    CHECK(only_count(bad, "LIST").found == c.fail_with);
  }
  // "one"/"ein" is a number only with a modifier: "a list" asks for no count.
  CHECK(run(list_of(4), "", "Give me a list of the tariffs.").format_counts.empty());
  CHECK(run(list_of(4), "", "Gib mir eine Liste der Tarife.").format_counts.empty());
}

TEST_CASE("S0: STEPS needs ordered steps, counts of steps", "[s0][steps]") {
  std::string ev;
  int n = 0;
  CHECK(ksodi::check_steps("1. Öffnen\n2. Klicken\n3. Speichern", ev, n));
  CHECK(n == 3);
  CHECK(ev.find("3 numbered steps in ascending order (1-3), lines 1-3") != std::string::npos);
  CHECK_FALSE(ksodi::check_steps("1. Öffnen\n3. Speichern\n2. Klicken", ev, n));  // not monotone
  CHECK(ev.find("not in ascending order (1, 3, 2") != std::string::npos);
  CHECK_FALSE(ksodi::check_steps("2. Zwei\n1. Eins", ev, n));
  CHECK_FALSE(ksodi::check_steps("- erst das\n- dann das", ev, n));  // bullets are not ordered steps
  CHECK(ksodi::check_steps("1) Öffnen\n2) Klicken", ev, n));
  CHECK(ksodi::check_steps("Schritt 1: Öffnen\nSchritt 2: Klicken", ev, n));
  CHECK(ksodi::check_steps("Step 1 - open\nStep 2 - click\nStep 3 - save", ev, n));
  CHECK(n == 3);
  CHECK(ksodi::check_steps("1. a\n   1. sub\n   2. sub\n2. b\n3. c", ev, n));  // sub-steps do not break the run
  CHECK(n == 3);
  CHECK(ksodi::check_steps("1. a\n1. b\n1. c", ev, n));  // markdown's lazy numbering
  CHECK(ksodi::check_steps("Erst Schritt 1: öffnen, dann Schritt 2: speichern.", ev, n));
  CHECK_FALSE(ksodi::check_steps("Erst Schritt 2: speichern, dann Schritt 1: öffnen.", ev, n));
  // A second list that starts again at 1 is a new run; the longest ordered run counts.
  CHECK(ksodi::check_steps("1. a\n2. b\n\nAlternativ:\n\n1. x\n2. y\n3. z", ev, n));
  CHECK(n == 3);

  const std::string four = "So geht's:\n1. a\n2. b\n3. c\n4. d";
  auto r = run(four, "", "Erkläre das bitte in drei Schritten.");
  REQUIRE(r.expectations == std::vector<std::string>{"STEPS"});
  const auto &c = only_count(r, "STEPS");
  CHECK(c.requested == 3);
  CHECK(c.found == 4);
  CHECK_FALSE(r.format_passed.at("STEPS"));
  CHECK(r.format_items.at("STEPS").n_items == 4);
  CHECK(r.format_items.at("STEPS").first_item == "a");
  CHECK(run(four, "", "Explain it in at most 5 steps.").format_passed.at("STEPS"));
  CHECK_FALSE(run("1. a\n3. b\n2. c", "", "Give me step-by-step instructions.").format_passed.at("STEPS"));
}

TEST_CASE("S0: a noun in passing raises no expectation (DE and EN)", "[s0][false-expectation]") {
  const char *ordinary[] = {
      "The list of changes was long, so I stopped reading.",
      "My shopping list is on the fridge.",
      "I took steps to fix it, but the router still blinks.",
      "The next steps were unclear after the call.",
      "Die Liste ist lang.",
      "Meine Einkaufsliste liegt auf dem Tisch.",
      "Die nächsten Schritte waren unklar.",
      "Ich habe alle Schritte aus der Anleitung befolgt.",
      "Ich habe das Schritt für Schritt gelernt.",
      "I learned it step by step.",
      "We sat at the kitchen table and talked.",
      "I love table tennis.",
      "The periodic table has 118 elements.",
      "Laut Tabelle im Handbuch kostet es 5 Euro.",
      "In the table below you can see the prices.",
      "Create a table in Postgres with an id column.",
      "Is Python hard to learn?",
      "I saw a python at the zoo.",
      "How do I parse JSON in Go?",
      "The heading of the article was misleading.",
      "Data structures such as lists and tables are useful.",
      "Ich mag Tabellen lieber als Listen.",
      "Did you list the flat on the website?",
      "I want to list my flat online.",
      "Please note the list of changes.",
      "What steps did you take?",
      "It was in the top 10 of the charts.",
      "Ich habe drei Punkte bekommen.",
      "Show me the table from yesterday.",
      "I need a table for four at 8 pm.",
      "I put the results in a table yesterday.",
      "Bitte keine Tabelle, nur Fließtext.",
      "Don't use bullet points.",
  };
  for (const char *u : ordinary) {
    INFO(u);
    auto r = run("Antwort.", "", u);
    CHECK(r.expectations.empty());
    CHECK(r.no_explicit_format);
  }
}

TEST_CASE("S0: format requests raise expectations, with the words that asked (DE and EN)", "[s0][requests]") {
  struct Case {
    const char *prompt, *format, *evidence;
  };
  const Case cases[] = {
      {"List three reasons why cats purr.", "LIST", "user_text: 'list three reasons why'"},
      {"Liste alle Tarife auf.", "LIST", "user_text: 'liste alle tarife auf'"},
      {"Use bullet points.", "LIST", "user_text: 'use bullet points'"},
      {"Please answer as a bulleted list.", "LIST", "user_text: 'as a bulleted list'"},
      {"Bitte als Liste.", "LIST", "user_text: 'als liste'"},
      {"Kannst du mir eine Liste geben?", "LIST", "user_text: 'liste geben'"},
      {"Could you list the options?", "LIST", "user_text: 'list the options'"},
      {"Kannst du die Tarife auflisten?", "LIST", "user_text: 'kannst du die tarife auflisten'"},
      {"Erkläre es Schritt für Schritt.", "STEPS", "user_text: 'schritt für schritt'"},
      {"Give me step-by-step instructions to reset the router.", "STEPS", "user_text: 'step-by-step'"},
      {"Give me the steps.", "STEPS", "user_text: 'give me the steps'"},
      {"What are the steps to reset my router?", "STEPS", "user_text: 'what are the steps'"},
      {"Mein Router blinkt rot. Bitte in Schritten.", "STEPS", "user_text: 'in schritten'"},
      {"Return the result as JSON.", "JSON", "user_text: 'as json'"},
      {"Output: valid JSON only.", "JSON", "user_text: 'output: valid json'"},
      {"Compare them in a table.", "TABLE", "user_text: 'in a table'"},
      {"Stelle das tabellarisch dar.", "TABLE", "user_text: 'tabellarisch'"},
      {"I'd like it as a table.", "TABLE", "user_text: 'as a table'"},
      {"Write a Python script that renames files.", "CODEBLOCK", "user_text: 'python'"},
      {"Zeig mir den Bash-Befehl dafür.", "CODEBLOCK", "user_text: 'bash'"},
      {"Use headings for each topic.", "HEADINGS", "user_text: 'use headings'"},
      {"Gliedere mit Überschriften.", "HEADINGS", "user_text: 'mit überschriften'"},
  };
  for (const Case &c : cases) {
    INFO(c.prompt);
    auto r = run("Antwort.", "", c.prompt);
    REQUIRE(r.expectations == std::vector<std::string>{c.format});
    CHECK(r.expectation_evidence.at(c.format) == c.evidence);
  }
  // System prompt and tool profile are read by the same rules.
  CHECK(expected("", "Erkläre Lösungen in nummerierten Schritten und zeige danach Code in einem Codeblock.") ==
        std::vector<std::string>{"STEPS", "CODEBLOCK"});
  CHECK(expected("", "Output: a JSON object with the keys \"answer\" and \"sections\".") == std::vector<std::string>{"JSON"});
  CHECK(expected("", "Answer with a markdown table when the user asks for settings.") == std::vector<std::string>{"TABLE"});
  CHECK(expected("", "You are a Python developer.").empty());  // the language alone asks for no code block
}

TEST_CASE("S0: any counted noun of a sentence that asks for a list counts its items, units do not", "[s0][count]") {
  const std::string three = "- sauber\n- günstig\n- leise";
  const std::string four = three + "\n- modern";
  auto r = run(four, "", "Nenne genau drei Vorteile von Solarenergie in Stichpunkten.");
  REQUIRE(r.expectations == std::vector<std::string>{"LIST"});
  const auto &c = only_count(r, "LIST");
  CHECK(c.requested == 3);
  CHECK(c.phrase == "genau drei vorteile");
  CHECK_FALSE(r.format_passed.at("LIST"));
  CHECK(run(three, "", "Nenne genau drei Vorteile von Solarenergie in Stichpunkten.").format_passed.at("LIST"));
  CHECK(only_count(run(four, "", "Give me 5 tips for the next 2 weeks as a bulleted list."), "LIST").requested == 5);
  // a unit or a qualifying count is not the number of items
  CHECK(run(three, "", "Fasse die 2 Jahre Garantie in Stichpunkten zusammen.").format_counts.empty());
  CHECK(run(three, "", "Write at most 100 words as a bulleted list.").format_counts.empty());
  CHECK(run(three, "", "List the planets with more than 2 moons as bullet points.").format_counts.empty());
}

TEST_CASE("S0: a list verb names the task where JSON or a table is asked for", "[s0]") {
  auto r = run("```json\n{\"planets\": [\"Mercury\", \"Venus\"]}\n```", "", "List the planets. Entire output should be wrapped in JSON format.");
  CHECK(r.expectations == std::vector<std::string>{"JSON"});
  CHECK(r.F == 1.0);
  auto t = run("| Tarif | Preis |\n|---|---|\n| S | 10 |", "", "Liste die Tarife als Tabelle auf.");
  CHECK(t.expectations == std::vector<std::string>{"TABLE"});
  // a list asked for by its form stays a list
  CHECK(run("- a\n- b", "", "List the planets as bullet points and add a JSON summary.").expectations ==
        std::vector<std::string>{"JSON", "LIST"});
}

namespace {
std::string unescape_newlines(const std::string &s) {
  std::string o;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 1 < s.size() && s[i + 1] == 'n') {
      o += '\n';
      ++i;
    } else {
      o += s[i];
    }
  }
  return o;
}
std::vector<std::string> split_tabs(const std::string &line) {
  std::vector<std::string> f;
  std::size_t a = 0;
  for (std::size_t b; (b = line.find('\t', a)) != std::string::npos; a = b + 1) f.push_back(line.substr(a, b - a));
  f.push_back(line.substr(a));
  return f;
}
}  // namespace

TEST_CASE("S0: list requests as people write them — counts, markers, examples (table, DE and EN)", "[s0][list-requests]") {
  std::ifstream table(EVALGRAPH_SOURCE_DIR "/tests/ksodi/data/list_requests.tsv");
  REQUIRE(table);
  int n_rows = 0, n_detected = 0, n_not = 0, n_de = 0;
  for (std::string line; std::getline(table, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> f = split_tabs(line);
    REQUIRE(f.size() == 10);
    ++n_rows;
    n_de += f[0] == "de" ? 1 : 0;
    f.erase(f.begin());  // the language
    const std::string prompt = unescape_newlines(f[0]);
    INFO("prompt: " << f[0] << "\nanswer: " << f[6]);
    const auto r = run(unescape_newlines(f[6]), "", prompt);
    if (f[1] == "-") {  // no list asked for: no LIST, whatever the answer
      ++n_not;
      CHECK(std::find(r.expectations.begin(), r.expectations.end(), "LIST") == r.expectations.end());
      CHECK(r.format_counts.count("LIST") == 0);
      continue;
    }
    ++n_detected;
    REQUIRE(std::find(r.expectations.begin(), r.expectations.end(), "LIST") != r.expectations.end());
    CHECK(r.expectation_evidence.at("LIST") == "user_text: '" + f[2] + "'");  // the phrase that raised it
    // The counts read, in order: "exactly 4" / "at least 2; at most 4" / "-".
    std::string counts;
    if (r.format_counts.count("LIST"))
      for (const auto &c : r.format_counts.at("LIST")) {
        counts += (counts.empty() ? "" : "; ") + c.relation + " " + std::to_string(c.requested);
        CHECK(c.phrase == f[4]);
        CHECK(c.found == std::stoi(f[8]));
        CHECK(c.source == "user_text");
      }
    CHECK(counts == (f[3] == "-" ? "" : f[3]));
    const ksodi::FormatItems &it = r.format_items.at("LIST");
    CHECK(it.marker_requested == f[5]);
    CHECK(it.n_items == std::stoi(f[8]));
    CHECK(r.format_passed.at("LIST") == (f[7] == "yes"));
    // The audit says what was counted and why it failed.
    const std::string &ev = r.format_evidence.at("LIST");
    if (counts.find("exactly") != std::string::npos && f[7] == "no" && it.n_items > 0) CHECK(ev.find("count not met") != std::string::npos);
    if (it.marker_mismatch) CHECK(ev.find("marker mismatch") != std::string::npos);
  }
  CHECK(n_rows >= 60);
  CHECK(n_detected >= 30);
  CHECK(n_not >= 20);
  CHECK(n_de >= 25);
}

TEST_CASE("S0: a marker mismatch fails or counts as the parameter says, and the audit names it", "[s0][list-requests]") {
  const std::string prompt = "Summarize the meeting. Your answer must contain exactly 3 bullet points.";
  const std::string numbered = "1. Budget\n2. Hiring\n3. Launch";
  auto strict = run(numbered, "", prompt);
  REQUIRE(strict.expectations == std::vector<std::string>{"LIST"});
  CHECK_FALSE(strict.format_passed.at("LIST"));
  const ksodi::FormatItems &it = strict.format_items.at("LIST");
  CHECK(it.marker_requested == "bullet");
  CHECK(it.marker_phrase == "bullet points");
  CHECK(it.marker_mismatch);
  CHECK(it.n_other_marker == 3);
  CHECK(it.n_items == 0);
  CHECK(it.counted_over == "whole answer");
  CHECK(strict.format_evidence.at("LIST").find("marker mismatch: 3 top-level item(s) numbered, requested bullet ('bullet points'), not counted") !=
        std::string::npos);
  // list_marker_mismatch = count: the numbered items count; the mismatch is still reported.
  ksodi::S0Config c;
  c.list_marker_mismatch_name = "count";
  const S0Params lenient = ksodi::resolve(c);
  CHECK_FALSE(lenient.list_marker_mismatch_fails);
  CHECK(ksodi::resolve(ksodi::S0Config{}).list_marker_mismatch_fails);  // the default is fail
  auto counted = run(numbered, "", prompt, lenient);
  CHECK(counted.format_passed.at("LIST"));
  CHECK(counted.format_items.at("LIST").n_items == 3);
  CHECK(counted.format_items.at("LIST").marker_mismatch);
  CHECK(counted.format_evidence.at("LIST").find("counted (list_marker_mismatch = count)") != std::string::npos);
  // The parameter is declared with its two values.
  CHECK(std::string(ksodi::s0_params().schema()).find("\"list_marker_mismatch\"") != std::string::npos);
  // A request that names no marker ("a list") takes any marker: no mismatch.
  auto any = run(numbered, "", "Give me a list of the three topics.");
  CHECK(any.format_items.at("LIST").marker_requested == "any");
  CHECK_FALSE(any.format_items.at("LIST").marker_mismatch);
  CHECK(any.format_passed.at("LIST"));
}

TEST_CASE("S0: an example inside the request is part of the instruction", "[s0][list-requests]") {
  // Its bullets are no list request of their own, hold no count, and name the marker.
  auto r = run("- a\n- b", "", "Describe the tool. Format each line like this:\n- list the key fact\n- list another fact");
  CHECK(r.expectations.empty());
  auto n = run("* a\n* b\n* c", "", "Give exactly 3 bullet points such as:\n1. first\n2. second");
  REQUIRE(n.expectations == std::vector<std::string>{"LIST"});
  CHECK(n.format_items.at("LIST").marker_requested == "numbered");
  CHECK(n.format_items.at("LIST").marker_phrase == "3 bullet points such as: 1. first");
  CHECK(only_count(n, "LIST").requested == 3);
  CHECK_FALSE(n.format_passed.at("LIST"));  // bullets where the example showed numbers
  // Content after a colon that no introducer presents as an example is not one.
  auto c = run("1. a\n2. b", "", "Answer these questions as a numbered list:\n- Why?\n- How?");
  CHECK(c.format_items.at("LIST").marker_requested == "numbered");
  CHECK(c.format_passed.at("LIST"));
  // JSON requests read as before, inside an example too.
  CHECK(expected("Use this format:\n- the answer as JSON") == std::vector<std::string>{"JSON"});
  CHECK(expected("Reply in JSON such as:\n* {\"a\": 1}") == std::vector<std::string>{"JSON"});
}

TEST_CASE("S0: counts of bullet points are counted over the whole answer, list lengths over the largest block", "[s0][list-requests]") {
  const std::string two_sections = "## Pros\n- cheap\n- quiet\n\n## Cons\n- slow\n  - very slow\n- small";
  auto whole = run(two_sections, "", "Compare the two options. Use exactly 4 bullet points.");
  CHECK(whole.format_items.at("LIST").counted_over == "whole answer");
  CHECK(whole.format_items.at("LIST").n_items == 4);  // the nested item does not count
  CHECK(whole.format_items.at("LIST").first_line == 2);
  CHECK(whole.format_items.at("LIST").last_line == 8);
  CHECK(whole.format_passed.at("LIST"));
  auto block = run(two_sections, "", "Give me a list of 4 options.");
  CHECK(block.format_items.at("LIST").counted_over == "largest list block");
  CHECK(block.format_items.at("LIST").n_items == 2);
  CHECK_FALSE(block.format_passed.at("LIST"));
}
