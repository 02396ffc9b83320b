// S(t): exact values of each Δ term on hand-built two-turn conversations, and the single-turn reduction.
#include <catch2/catch.hpp>

#include "../ksodi/helpers.hpp"  // tfidf_fn(), shared with the KSODI-Standard tests
#include "s_t.hpp"

using namespace ksodi;

namespace {
S0Input turn(const std::string &user, const std::string &answer, const std::string &sp = "Antworte als Liste.") {
  S0Input x;
  x.system_prompt = sp;
  x.user_text = user;
  x.answer = answer;
  return x;
}
const std::string kStructured = "## Kündigung\n\n- Frist prüfen\n- Formular ausfüllen\n- Brief senden";
const std::string kBullets = "- Frist prüfen\n- Formular ausfüllen\n- Brief senden";
std::string long_prose(int words) {
  std::string s;
  for (int i = 0; i < words; ++i) s += (i % 12 == 11 ? "satz. " : "wort" + std::to_string(i % 7) + " ");
  return s;
}
}  // namespace

TEST_CASE("S(t) of a single-turn conversation is exactly S0", "[s_t]") {
  STParams p;
  for (const auto &a : {kStructured, std::string("Nur ein Satz."), long_prose(200)}) {
    auto x = turn("Wie kündige ich?", a);
    auto r = compute_s_t({x}, p, tfidf_fn());
    REQUIRE(r.size() == 1);
    CHECK(r[0].S == compute_s0(x, p.s0, tfidf_fn()).S0);
    CHECK(r[0].consistency == 0);
    CHECK(r[0].repair == 0);
    CHECK(r[0].decay == 0);
  }
}

TEST_CASE("S(t) Δconsistency is the Jaccard of structural features when the expected formats stay", "[s_t]") {
  STParams p;
  auto r = compute_s_t({turn("Wie kündige ich?", kStructured), turn("Und wie widerrufe ich?", kBullets)}, p, tfidf_fn());
  REQUIRE(r[0].features == std::vector<std::string>{"headings", "bullets", "paragraphs"});
  REQUIRE(r[1].features == std::vector<std::string>{"bullets"});
  CHECK(r[1].consistency == Approx(1.0 / 3.0).margin(1e-12));
  CHECK(r[1].S == Approx(clip01(r[1].s0.S0 + 0.1 / 3.0 - 0.3 * r[1].decay)).margin(1e-12));
  CHECK(r[1].consistency_ev["shared"] == nlohmann::json{"bullets"});
  // the same structure twice: 1
  auto same = compute_s_t({turn("Wie kündige ich?", kStructured), turn("Und wie widerrufe ich?", kStructured)}, p, tfidf_fn());
  CHECK(same[1].consistency == 1.0);
  // a changed format expectation: consistency does not apply
  auto changed = compute_s_t({turn("Wie kündige ich?", kStructured), turn("Bitte als JSON.", kBullets)}, p, tfidf_fn());
  CHECK(changed[1].consistency == 0.0);
  CHECK(changed[1].consistency_ev["reason"] == "expected formats changed: consistency not applicable");
}

TEST_CASE("S(t) Δrepair is the S0 gain after a complaint, 0 without one", "[s_t]") {
  STParams p;
  auto x1 = turn("Wie kündige ich?", "Frist prüfen, Formular ausfüllen und den Brief senden, dann ist es erledigt.", "");
  auto x2 = turn("Das ist unübersichtlich, bitte als Liste.", kStructured, "");
  auto r = compute_s_t({x1, x2}, p, tfidf_fn());
  REQUIRE(r[1].s0.S0 > r[0].s0.S0);
  CHECK(r[1].repair_ev["cue"] == "unübersichtlich");
  CHECK(r[1].repair == Approx(r[1].s0.S0 - r[0].s0.S0).margin(1e-12));
  CHECK(r[1].S == Approx(clip01(r[1].s0.S0 + 0.1 * r[1].consistency + 0.5 * r[1].repair)).margin(1e-12));
  auto x2b = turn("Wie lange dauert das?", kStructured, "");
  auto n = compute_s_t({x1, x2b}, p, tfidf_fn());
  CHECK(n[1].repair == 0.0);
  CHECK(n[1].repair_ev["cue"].is_null());
}

TEST_CASE("S(t) Δdecay is the G_str drop below the earlier peak, scaled by length", "[s_t]") {
  STParams p;
  auto x1 = turn("Wie kündige ich?", kStructured, "");
  auto r = compute_s_t({x1, turn("Und dann?", long_prose(150), "")}, p, tfidf_fn());
  REQUIRE(r[1].words == 150);
  double drop = r[0].s0.G_str - r[1].s0.G_str;
  REQUIRE(drop > 0);
  CHECK(r[1].decay == Approx(drop).margin(1e-12));
  CHECK(r[1].decay_ev["peak_t"] == 1);
  // half the length: half the decay
  auto h = compute_s_t({x1, turn("Und dann?", long_prose(75), "")}, p, tfidf_fn());
  CHECK(h[1].decay == Approx((h[0].s0.G_str - h[1].s0.G_str) * 0.5).margin(1e-12));
  CHECK(r[1].S == Approx(clip01(r[1].s0.S0 + 0.1 * r[1].consistency - 0.3 * r[1].decay)).margin(1e-12));
}
