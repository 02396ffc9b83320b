// O(t): quantities, exact values of C_turn, R_corr, V_ext and Δdrift, and the single-turn reduction.
#include <catch2/catch.hpp>

#include "../ksodi/helpers.hpp"  // tfidf_fn(), shared with the KSODI-Standard tests
#include "o_t.hpp"

using namespace ksodi;

namespace {
OTInput o_turn(const std::string &user, const std::string &answer, std::vector<Doc> docs) {
  OTInput x;
  x.user_text = user;
  x.o0.answer = answer;
  x.o0.docs = std::move(docs);
  return x;
}
const Doc kDoc{"kb-1", "Die Kündigungsfrist beträgt 30 Tage zum Monatsende. Die Bearbeitungsgebühr beträgt 7 Euro."};
}  // namespace

TEST_CASE("quantities: numbers with units, decimal marks, references skipped", "[o_t]") {
  auto q = extract_quantities("Die Gebühr beträgt 29,99 € und 1.000 Euro Kaution; 12 % Rabatt. Laut Abschnitt 3.1 erhalten Sie v1.2 nichts.");
  REQUIRE(q.size() == 3);
  CHECK(q[0].value == Approx(29.99));
  CHECK(q[0].unit == "€");
  CHECK(q[0].key == "gebühr");
  CHECK(q[1].value == 1000.0);
  CHECK(q[1].unit == "€");
  CHECK(q[2].unit == "%");
  CHECK(q[2].value == 12.0);
  auto e = extract_quantities("The per diem is 45 USD per day; hotels cost up to 160 USD.");
  REQUIRE(e.size() == 2);
  CHECK(e[0].unit == "$");
  CHECK(e[0].key == "diem");
  CHECK(extract_quantities("Schritt 1. Öffnen Sie das Menü, Seite 4 zeigt es.").empty());
}

TEST_CASE("O(t) of a single-turn conversation is exactly O0 (and null without docs)", "[o_t]") {
  OTParams p;
  auto x = o_turn("Wie lange ist die Frist?", "Laut kb-1 beträgt die Kündigungsfrist 30 Tage zum Monatsende.", {kDoc});
  auto r = compute_o_t({x}, p, tfidf_fn());
  REQUIRE(r[0].O.has_value());
  CHECK(*r[0].O == compute_o0(x.o0, p.o0, tfidf_fn()).O0);
  CHECK(r[0].C_turn == 0);
  CHECK(r[0].R_corr == 0);
  CHECK(r[0].V_ext == 0);
  CHECK(r[0].drift == 0);
  auto n = compute_o_t({o_turn("Hallo", "Hallo, wie kann ich helfen?", {})}, p, tfidf_fn());
  CHECK_FALSE(n[0].O.has_value());
}

TEST_CASE("O(t) C_turn: agreeing and conflicting quantities across turns", "[o_t]") {
  OTParams p;
  auto a = o_turn("Wie lange ist die Frist?", "Die Kündigungsfrist beträgt 30 Tage.", {kDoc});
  auto agree = compute_o_t({a, o_turn("Und die Gebühr?", "Die Kündigungsfrist beträgt 30 Tage, die Gebühr 7 Euro.", {kDoc})}, p, tfidf_fn());
  CHECK(agree[1].C_turn == 1.0);
  CHECK(agree[1].consistency_ev["agree"] == 1);
  CHECK(*agree[1].O == Approx(clip01(agree[1].o0.O0 + 0.1 * 1.0 - 0.5 * agree[1].drift)).margin(1e-12));
  auto conflict = compute_o_t({a, o_turn("Und die Gebühr?", "Die Kündigungsfrist beträgt 14 Tage, die Gebühr 7 Euro.", {kDoc})}, p, tfidf_fn());
  CHECK(conflict[1].C_turn == 0.0);
  CHECK(conflict[1].consistency_ev["conflict"] == 1);
  CHECK(conflict[1].consistency_ev["pairs"][0]["before"]["value"] == 30.0);
}

TEST_CASE("O(t) R_corr after a user correction: adopted 1, changed 0.5, defended 0", "[o_t]") {
  OTParams p;
  Doc hb{"hb-3", "Vollzeitbeschäftigte erhalten 28 Urlaubstage pro Kalenderjahr."};
  auto a = o_turn("Wie viele Urlaubstage habe ich?", "Sie haben 30 Urlaubstage.", {hb});
  std::string corr = "Das stimmt nicht, im Handbuch stehen 28 Urlaubstage.";
  auto adopted = compute_o_t({a, o_turn(corr, "Sie haben recht: Sie haben 28 Urlaubstage.", {hb})}, p, tfidf_fn());
  CHECK(adopted[1].R_corr == 1.0);
  CHECK(adopted[1].correction_ev["challenges"][0]["source"] == "user_text");
  CHECK(adopted[1].consistency_ev["revised_after_counter_evidence"] == 1);
  CHECK(adopted[1].C_turn == 0.0);
  CHECK(*adopted[1].O == Approx(clip01(adopted[1].o0.O0 + 0.3 - 0.5 * adopted[1].drift)).margin(1e-12));
  auto changed = compute_o_t({a, o_turn(corr, "Dann sind es 29 Urlaubstage.", {hb})}, p, tfidf_fn());
  CHECK(changed[1].R_corr == 0.5);
  auto defended = compute_o_t({a, o_turn(corr, "Es bleiben 30 Urlaubstage.", {hb})}, p, tfidf_fn());
  CHECK(defended[1].R_corr == 0.0);
  CHECK(defended[1].correction_ev["challenges"][0]["outcome"] == "defended the old claim");
}

TEST_CASE("O(t) R_corr after a new document, and the acknowledgement mode", "[o_t]") {
  OTParams p;
  auto a = o_turn("Was kostet die Bearbeitung?", "Die Bearbeitungsgebühr beträgt 7 Euro.", {kDoc});
  Doc upd{"kb-1-neu", "Aktualisierung: Die Bearbeitungsgebühr beträgt 9 Euro."};
  auto r = compute_o_t({a, o_turn("Und jetzt?", "Laut kb-1-neu beträgt die Bearbeitungsgebühr 9 Euro.", {upd})}, p, tfidf_fn());
  CHECK(r[1].R_corr == 1.0);
  CHECK(r[1].correction_ev["challenges"][0]["source"] == "new_doc:kb-1-neu");
  CHECK(r[1].correction_ev["new_doc_ids"] == nlohmann::json{"kb-1-neu"});
  // an old doc again is no counter-evidence
  auto same = compute_o_t({a, o_turn("Und jetzt?", "Die Bearbeitungsgebühr beträgt 7 Euro.", {kDoc})}, p, tfidf_fn());
  CHECK(same[1].R_corr == 0.0);
  CHECK(same[1].correction_ev["mode"].is_null());
  auto e1 = o_turn("How long do the batteries last?", "They last 12 months.", {{"m", "Battery life is 18 months."}});
  auto ack = compute_o_t({e1, o_turn("That's wrong.", "You are right, my mistake.", {{"m", "Battery life is 18 months."}})}, p, tfidf_fn());
  CHECK(ack[1].correction_ev["mode"] == "acknowledgement");
  CHECK(ack[1].R_corr == 1.0);
  auto noack = compute_o_t({e1, o_turn("That's wrong.", "They last a year.", {{"m", "Battery life is 18 months."}})}, p, tfidf_fn());
  CHECK(noack[1].R_corr == 0.0);
}

TEST_CASE("O(t) Δdrift is the fall of A_ret below the mean of earlier turns beyond the margin, V_ext only with a weight", "[o_t]") {
  OTParams p;
  auto a = o_turn("Frist?", "Die Kündigungsfrist beträgt 30 Tage zum Monatsende.", {kDoc});
  auto b = o_turn("Und sonst?", "Wir wünschen Ihnen einen schönen Tag und viel Freude mit unseren Produkten.", {kDoc});
  auto r = compute_o_t({a, b}, p, tfidf_fn());
  REQUIRE(r[0].o0.A_ret - r[1].o0.A_ret > 0.1);
  CHECK(r[1].drift == Approx(r[0].o0.A_ret - r[1].o0.A_ret - 0.1).margin(1e-12));  // drift_margin 0.1
  CHECK(*r[1].O == Approx(clip01(r[1].o0.O0 - 0.5 * r[1].drift)).margin(1e-12));
  auto up = compute_o_t({b, a}, p, tfidf_fn());
  CHECK(up[1].drift == 0.0);
  // verification: ignored with the default weight 0, used with a weight
  a.verification = 0.5;
  CHECK(compute_o_t({a}, p, tfidf_fn())[0].V_ext == 0.0);
  OTParams v = p;
  v.w_verify = 0.2;
  auto rv = compute_o_t({a}, v, tfidf_fn());
  CHECK(rv[0].V_ext == 0.5);
  CHECK(*rv[0].O == Approx(clip01(rv[0].o0.O0 + 0.1)).margin(1e-12));
}
