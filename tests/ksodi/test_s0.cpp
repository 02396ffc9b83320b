#include <catch2/catch.hpp>
#include <cmath>

#include "helpers.hpp"
#include "s0.hpp"

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
