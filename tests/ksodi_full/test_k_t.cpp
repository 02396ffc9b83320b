// K(t): exact values of ΔK_fill, ΔK_shift, ΔK_decay on hand-built conversations, and the single-turn reduction.
#include <catch2/catch.hpp>

#include "../ksodi/helpers.hpp"  // tfidf_fn(), shared with the KSODI-Standard tests
#include "k_t.hpp"

using namespace ksodi;

namespace {
KTInput k_turn(const std::string &user, std::size_t docs, const std::string &answer = "Antwort.") {
  KTInput x;
  x.k0.system_prompt = "Du bist Support-Assistent. Antworte nur auf Deutsch.";
  x.k0.user_text = user;
  x.k0.n_docs = docs;
  x.assistant_text = answer;
  return x;
}
}  // namespace

TEST_CASE("K(t) of a single-turn conversation is exactly K0", "[k_t]") {
  KTParams p;
  int calls = 0;
  for (std::size_t docs : {0u, 2u}) {
    auto x = k_turn("Wie kündige ich meinen Vertrag?", docs);
    auto r = compute_k_t({x}, p, tfidf_fn(&calls));
    REQUIRE(r.size() == 1);
    CHECK(r[0].K == compute_k0(x.k0, p.k0).K0);
    CHECK(r[0].fill == 0);
    CHECK(r[0].shift == 0);
    CHECK(r[0].decay == 0);
  }
  CHECK(calls == 0);  // nothing to compare with: no embedding call
}

TEST_CASE("K(t) ΔK_fill counts the dimensions that appear, ΔK_decay those that disappear", "[k_t]") {
  KTParams p;
  auto a = k_turn("Hallo.", 0, "Hallo! Worum geht es?");
  auto b = k_turn("Erkläre mir die Kündigungsfrist im Vertrag.", 1, "Die Frist beträgt einen Monat.");
  auto r = compute_k_t({a, b, a}, p, tfidf_fn());
  REQUIRE(r[1].fill_ev["dimensions_gained"] == nlohmann::json{"Z", "D"});
  CHECK(r[1].fill == Approx(2.0 / 6.0).margin(1e-12));
  CHECK(r[1].decay == 0);
  REQUIRE(r[2].decay_ev["dimensions_lost"] == nlohmann::json{"Z", "D"});
  CHECK(r[2].decay == Approx(2.0 / 6.0).margin(1e-12));
  CHECK(r[2].fill == 0);
  CHECK(r[1].K == Approx(clip01(r[1].k0.K0 + 0.5 * r[1].fill - 0.3 * r[1].shift)).margin(1e-12));
  CHECK(r[2].K == Approx(clip01(r[2].k0.K0 - 0.3 * r[2].shift - 0.5 * r[2].decay)).margin(1e-12));
  // weights: a D weight of 4 makes D alone 4/9
  KTParams w;
  w.k0.weights = {1, 1, 4, 1, 1, 1};
  auto rw = compute_k_t({k_turn("Erkläre die Frist.", 0), k_turn("Erkläre die Frist.", 3)}, w, tfidf_fn());
  CHECK(rw[1].fill == Approx(4.0 / 9.0).margin(1e-12));
}

TEST_CASE("K(t) ΔK_shift: a user turn with no overlap with the previous turns is a full shift", "[k_t]") {
  KTParams p;
  auto a = k_turn("Wie lange ist die Kündigungsfrist für meinen Mobilfunkvertrag?", 1, "Die Kündigungsfrist beträgt einen Monat.");
  auto b = k_turn("Welche Roaming Preise gelten in der Schweiz für Datenpakete?", 1, "Datenpakete kosten 4,99 Euro.");
  int calls = 0;
  auto r = compute_k_t({a, b}, p, tfidf_fn(&calls));
  CHECK(calls == 1);  // one call holding the user turn and the turns it is compared with
  CHECK(r[1].similarity == 0.0);
  CHECK(r[1].shift == 1.0);
  CHECK(r[1].shift_ev["most_similar_t"] == 1);
  // partial overlap: shift = clip(1 - sim / tau_shift)
  auto c = k_turn("Gilt die Kündigungsfrist auch für Roaming?", 1);
  auto r2 = compute_k_t({a, c}, p, tfidf_fn());
  REQUIRE(r2[1].similarity > 0);
  CHECK(r2[1].shift == Approx(clip01(1 - r2[1].similarity / 0.1)).margin(1e-12));
  // a follow-up that refers back is exempt, even without shared words
  auto d = k_turn("Zeig mir das bitte nochmal kürzer.", 0);
  auto r3 = compute_k_t({a, d}, p, tfidf_fn());
  CHECK(r3[1].shift_ev["raw"] == 1.0);
  CHECK(r3[1].shift == 0.0);
  CHECK(r3[1].shift_ev["backref_cue"] == "nochmal");
}

TEST_CASE("K(t) ΔK_shift: a short user turn is not judged and makes no embedding call", "[k_t]") {
  KTParams p;
  int calls = 0;
  auto r = compute_k_t({k_turn("Wie lange ist die Kündigungsfrist für meinen Vertrag?", 1), k_turn("Okay, danke.", 0)}, p, tfidf_fn(&calls));
  CHECK(calls == 0);
  CHECK(r[1].shift == 0.0);
  CHECK(r[1].shift_ev["user_words"] == 2);
  p.shift_min_words = 0;
  auto all = compute_k_t({k_turn("Wie lange ist die Kündigungsfrist für meinen Vertrag?", 1), k_turn("Okay, danke.", 0)}, p, tfidf_fn(&calls));
  CHECK(calls == 1);
  CHECK(all[1].shift == 1.0);
}
