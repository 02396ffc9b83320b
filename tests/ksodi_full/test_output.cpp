// The outputs of ksodi.s_t, ksodi.k_t and ksodi.o_t (part of the operators' contract): one object per turn with
// its position, its Δ terms, the embedded standard operator's output and the shared parameters block.
#include <catch2/catch.hpp>

#include "../ksodi/helpers.hpp"  // tfidf_fn(), shared with the KSODI-Standard tests
#include "ksodi_measures/cues.hpp"
#include "k_t_output.hpp"
#include "o_t_output.hpp"
#include "s_t_output.hpp"

using namespace ksodi;
using nlohmann::json;

namespace {
const std::vector<json> kTurnIds{"u-1", 2};
}  // namespace

TEST_CASE("S(t) output: position, terms, parameters with the model of the last turn", "[s_t][output]") {
  S0Input a, b;
  a.answer = "Erster Absatz.\n\nZweiter Absatz mit mehr Text.";
  b.answer = "Das war falsch, hier die Korrektur:\n\n- erstens\n- zweitens";
  b.user_text = "Das ist falsch, bitte als Liste.";
  STParams p;
  const auto res = compute_s_t({a, b}, p, tfidf_fn());
  const json out = s_t_output(res, kTurnIds, p, json("openai"));
  REQUIRE(out.size() == 2);
  for (std::size_t i = 0; i < 2; ++i) {
    CHECK(out[i]["t"] == i + 1);
    CHECK(out[i]["turn"] == kTurnIds[i]);
    CHECK(out[i]["n_turns"] == 2);
    CHECK(out[i]["S"] == res[i].S);
    CHECK(out[i]["s0"] == s0_to_json(res[i].s0));
  }
  const json &decay = out[1]["terms"]["decay"];
  CHECK(decay["contribution"] == -p.lambda_decay * res[1].decay);
  CHECK(decay["weight"] == p.lambda_decay);
  const json &params = out[1]["parameters"];
  CHECK(params["w0"] == 1.0);
  CHECK(params["embedding_provider"] == "openai");
  CHECK(params["cue_version"] == full::kFullCueVersion);
  CHECK(params["embedding_model_id"] == res[0].s0.similarity_model_id);
  CHECK(params["s0"]["redundancy"] == "embedding");
}

TEST_CASE("K(t) output: the embedded K0 with n_docs and the scope id as they came", "[k_t][output]") {
  KTInput a, b;
  a.k0.user_text = "Wie kündige ich meinen Vertrag?";
  a.k0.n_docs = 2;
  b.k0.user_text = "Und was kostet das Wetter in Paris morgen früh?";
  KTParams p;
  const auto res = compute_k_t({a, b}, p, tfidf_fn());
  const json out = k_t_output(res, {a, b}, kTurnIds, {json("scope-a"), json(nullptr)}, p, json(nullptr));
  REQUIRE(out.size() == 2);
  CHECK(out[0]["k0"]["n_docs"] == 2);
  CHECK(out[0]["k0"]["context_scope_id"] == "scope-a");
  CHECK(out[1]["k0"]["context_scope_id"].is_null());
  CHECK(out[1]["turn"] == 2);
  CHECK(out[1]["terms"]["shift"]["contribution"] == -p.nu_shift * res[1].shift);
  CHECK(out[1]["terms"]["fill"]["contribution"] == p.mu_fill * res[1].fill);
  CHECK(out[0]["k0"]["dimension_weights"] == out[0]["parameters"]["k0"]["dimension_weights"]);
  CHECK(out[0]["parameters"]["embedding_provider"].is_null());
  CHECK(out[0]["parameters"]["embedding_model_id"] == (res[1].embedding_model_id.empty() ? json(nullptr) : json(res[1].embedding_model_id)));
}

TEST_CASE("O(t) output: null O without docs, quantities, sentence text cut to text_max", "[o_t][output]") {
  OTInput a, b;
  a.o0.answer = "Die Frist beträgt 30 Tage.";
  b.o0.answer = "Die Frist beträgt 30 Tage zum Monatsende.";
  b.o0.docs = {{"kb-1", "Die Kündigungsfrist beträgt 30 Tage zum Monatsende."}};
  OTParams p;
  const auto res = compute_o_t({a, b}, p, tfidf_fn());
  const json out = o_t_output(res, {a, b}, kTurnIds, p, json(nullptr), 4);
  REQUIRE(out.size() == 2);
  CHECK(out[0]["O"].is_null());
  CHECK(out[0]["computed"] == false);
  CHECK(out[0]["flags"] == json::array({"no_retrieved_docs"}));
  CHECK(out[0]["o0"]["sentences"][0]["text"] == "Die ");
  CHECK(out[1]["computed"] == true);
  CHECK(out[1]["flags"].empty());
  CHECK(out[1]["o0"]["doc_ids"] == json::array({"kb-1"}));
  CHECK(out[1]["quantities"].size() == res[1].quantities.size());
  CHECK(out[1]["terms"]["drift"]["contribution"] == -p.lambda_drift * res[1].drift);
  CHECK(out[1]["parameters"]["o0"]["alignment"] == (p.o0.alignment == Alignment::Cosine ? "cosine" : "support"));
  const json no_text = o_t_output(res, {a, b}, kTurnIds, p, json(nullptr), 0);
  CHECK_FALSE(no_text[0]["o0"]["sentences"][0].contains("text"));
}
