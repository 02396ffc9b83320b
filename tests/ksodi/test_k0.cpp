#include <catch2/catch.hpp>

#include "ksodi_measures/k0.hpp"
#include "ksodi/detect.hpp"


namespace {
ksodi::K0Result run(const std::string &sys, const std::string &tool, const std::string &user, std::size_t docs,
                    const ksodi::K0Params &p = {}) {
  ksodi::K0Input in;
  in.system_prompt = sys;
  in.tool_profile = tool;
  in.user_text = user;
  in.n_docs = docs;
  return ksodi::compute_k0(in, p);
}
}  // namespace

TEST_CASE("K0: all six dimensions present → 1.0", "[k0]") {
  auto r = run("Du bist ein Support-Assistent. Antworte nur auf Deutsch und gib das Ergebnis als Tabelle aus.",
               "search_kb(query): durchsucht die Wissensdatenbank", "Erkläre die Kündigungsfrist.", 2);
  for (bool b : r.present) CHECK(b);
  CHECK(r.K0 == Approx(1.0));
  CHECK(r.label == "complete");
  CHECK_FALSE(r.not_interpretable);
  CHECK(r.evidence[0] == "user_text: 'erkläre*'");
  CHECK(r.evidence[1] == "system_prompt: 'du bist'");
  CHECK(r.evidence[2] == "retrieved_docs: 2");
  CHECK(r.evidence[3] == "system_prompt: 'nur'");
  CHECK(r.evidence[4] == "system_prompt: 'als tabelle'");
  CHECK(r.evidence[5] == "tool_profile: non-empty");
}

TEST_CASE("K0: nothing present → 0, not interpretable", "[k0]") {
  auto r = run("", "none", "Hallo.", 0);
  for (bool b : r.present) CHECK_FALSE(b);
  CHECK(r.K0 == 0.0);
  CHECK(r.not_interpretable);
  CHECK(r.label == "not_interpretable");
}

TEST_CASE("K0: each dimension by its trigger", "[k0]") {
  auto only = [](const ksodi::K0Result &r, std::size_t dim) {
    INFO("dim " << dim << " evidence Z:" << r.evidence[0] << " R:" << r.evidence[1] << " D:" << r.evidence[2] << " C:" << r.evidence[3] << " E:" << r.evidence[4] << " T:" << r.evidence[5]);
    for (std::size_t i = 0; i < 6; ++i) CHECK(r.present[i] == (i == dim));
    CHECK(r.K0 == Approx(1.0 / 6.0));
  };
  only(run("", "", "Wie spät ist es?", 0), 0);                             // Z by question
  only(run("", "", "Summarize this.", 0), 0);                              // Z by English verb
  only(run("Antworte als erfahrener Steuerberater.", "", "Hallo", 0), 1);  // R: als + role noun in a compound
  only(run("You are a helpful agent.", "", "Hi", 0), 1);                   // R
  only(run("", "", "Beispiel: 4711", 0), 2);                               // D: explicit input
  only(run("", "", "hi\n> zitierter Text", 0), 2);                         // D: quoted input
  only(run("", "", "Höchstens drei Sätze.", 0), 3);                        // C
  only(run("", "", "Output: Markdown", 0), 4);                             // E
  only(run("", "", "Nutze das Tool.", 0), 5);                              // T named
  // T: a negated tool mention does not count; an empty-ish profile does not count.
  CHECK_FALSE(run("Du hast keine Tools.", "[]", "Hi", 0).present[5]);
}

TEST_CASE("K0: weights", "[k0]") {
  ksodi::K0Params p;
  p.weights = {2, 1, 2, 1, 1, 1};  // Z and D doubled
  auto r = run("", "", "Erkläre mir das.", 3, p);
  CHECK(r.present[0]);
  CHECK(r.present[2]);
  CHECK(r.K0 == Approx(4.0 / 8.0));
  CHECK(r.label == "gaps");
  p.weights = {1, 0, 0, 0, 0, 0};
  CHECK(run("", "", "Erkläre mir das.", 0, p).K0 == 1.0);
  p = {};
  p.interpretable_min = 0.5;
  CHECK(run("", "", "Erkläre mir das.", 3, p).not_interpretable);  // 2/6 < 0.5
}

TEST_CASE("K0: Z needs a named task, not a question mark", "[k0][z]") {
  // A question that names what it asks about.
  auto r = run("", "", "Wie kann ich meinen Vertrag kündigen?", 0);
  CHECK(r.present[0]);
  CHECK(r.evidence[0] == "user_text: question 'wie kann ich meinen vertrag kündigen?' names 'vertrag'");
  CHECK(run("", "", "Which tariff suits a family with four phones?", 0).present[0]);
  // Bare follow-ups name nothing: no Z (no system prompt, no docs).
  for (const char *u : {"Und was ist damit?", "What about that?", "Und jetzt?", "Why?", "Und wie?", "Was meinst du damit?",
                        "How about you?", "Really?", "Great. You?"}) {
    INFO(u);
    auto q = run("", "", u, 0);
    CHECK_FALSE(q.present[0]);
    CHECK(q.evidence[0].find("names nothing") != std::string::npos);
    CHECK(q.K0 == 0.0);
  }
  // A question whose subject the same user text names before it.
  auto ctx = run("", "", "Mein Router blinkt rot. Was soll ich tun?", 0);
  CHECK(ctx.present[0]);
  CHECK(ctx.evidence[0] == "user_text: question 'was soll ich tun?' about 'router', named before it in the user text");
  // Task verbs still name the goal without a question.
  CHECK(run("", "", "Erkläre mir die Kündigungsfrist.", 0).evidence[0] == "user_text: 'erkläre*'");
  // No question and no task verb.
  CHECK(run("", "", "router geht nicht", 0).evidence[0] == "no task verb or question in user_text/system_prompt");
  CHECK(std::string(ksodi::detect::kDetectorVersion) == "ksodi-detectors-1.3");
}

TEST_CASE("K0: E needs an output form asked for, not a form noun in passing", "[k0]") {
  auto e = [](const std::string &sys, const std::string &user) { return run(sys, "", user, 0).present[4]; };
  CHECK(e("Antworte als Liste.", ""));
  CHECK(e("", "Erkläre das bitte in Stichpunkten."));
  CHECK(e("You are a helper. Answer in JSON.", ""));
  CHECK(e("Output: one sentence.", ""));
  CHECK_FALSE(e("", "Die Liste der Änderungen war lang. Was ist neu?"));
  CHECK_FALSE(e("", "I took several steps to fix the router, but the table lamp still flickers."));
  auto r = run("", "", "Meine Einkaufsliste ist weg, die Liste war lang.", 0);
  CHECK(r.evidence[4].find("no output form") == 0);
}
