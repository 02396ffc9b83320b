#include <catch2/catch.hpp>
#include <cmath>

#include "helpers.hpp"
#include "ksodi_measures/o0.hpp"

using nlohmann::json;

// The seed-literal alignment (TF-IDF cosine, seed start values): these tests pin its exact values, which must not
// change when the default measure does.
static ksodi::O0Params cosine() {
  ksodi::O0Params p;
  p.alignment = ksodi::Alignment::Cosine;
  return p;
}

TEST_CASE("O0: no docs → not computed (null + flag), T still reported", "[o0]") {
  const ksodi::O0Input in = o0_unit("Laut Handbuch geht das. Sonst nichts.");
  int calls = 0;
  auto r = ksodi::compute_o0(in, cosine(), tfidf_fn(&calls));
  CHECK_FALSE(r.computed);
  CHECK(calls == 0);
  CHECK(r.n_sent == 2);
  CHECK(r.n_attrib == 1);
  CHECK(r.T == Approx(1.0 / 3.0));
}

TEST_CASE("O0: no sentences → T = U = 0", "[o0]") {
  const ksodi::O0Input in = o0_unit("", {{"d1", "Die Frist beträgt drei Monate."}});
  auto r = ksodi::compute_o0(in, cosine(), tfidf_fn());
  CHECK(r.computed);
  CHECK(r.n_sent == 0);
  CHECK(r.T == 0.0);
  CHECK(r.U == 0.0);
  CHECK(r.A_ret == 0.0);
  CHECK(r.O0 == 0.0);
}

TEST_CASE("O0: exact A_ret, T, U and the tau branch per sentence", "[o0]") {
  const ksodi::O0Input in = o0_unit(
      "Die Kündigungsfrist beträgt drei Monate. Pinguine leben in der Antarktis. Laut Handbuch gilt das auch für Altverträge.",
      {{"d1", "Die Kündigungsfrist beträgt drei Monate zum Monatsende."}});
  auto r = ksodi::compute_o0(in, cosine(), tfidf_fn());
  REQUIRE(r.computed);
  REQUIRE(r.n_sent == 3);
  // One call with 5 texts: answer, doc, 3 sentences. df: 4 shared terms 3, the other answer terms 2, monatsende 1.
  const double a = std::log(6.0 / 4.0) + 1, c = std::log(6.0 / 3.0) + 1, b = std::log(6.0 / 2.0) + 1;
  const double doc_norm = std::sqrt(4 * a * a + b * b);
  const double s1 = 4 * a * a / (std::sqrt(4 * a * a) * doc_norm);
  const double A = 4 * a * a / (std::sqrt(4 * a * a + 7 * c * c) * doc_norm);
  CHECK(r.sentences[0].align == Approx(s1).epsilon(1e-6));
  CHECK_FALSE(r.sentences[0].unsupported);  // align >= tau
  CHECK(r.sentences[1].align == 0.0);
  CHECK(r.sentences[1].unsupported);        // align < tau, no marker
  CHECK(r.sentences[2].align == 0.0);
  CHECK(r.sentences[2].markers == 1);
  CHECK_FALSE(r.sentences[2].unsupported);  // align < tau but "Laut" is an attribution marker
  CHECK(r.A_ret == Approx(A).epsilon(1e-6));
  CHECK(r.T == Approx(1.0 / 4.0));
  CHECK(r.U == Approx(1.0 / 3.0));
  CHECK(r.O0 == Approx(0.6 * A + 0.2 * 0.25 - 0.2 / 3.0).epsilon(1e-6));
  CHECK(r.embedding_model_id == "tfidf-v1");
  // tau above the first sentence's alignment flips it to unsupported.
  ksodi::O0Params p = cosine();
  p.tau = 0.9;
  auto r2 = ksodi::compute_o0(in, p, tfidf_fn());
  CHECK(r2.sentences[0].unsupported);
  CHECK(r2.U == Approx(2.0 / 3.0));
}

TEST_CASE("O0: tool outputs count as docs", "[o0]") {
  const ksodi::O0Input in =
      o0_unit("Kunde 4711 hat den Tarif Premium.", {}, {{"crm_lookup", "Kunde 4711 hat den Tarif Premium seit 2021."}});
  auto r = ksodi::compute_o0(in, cosine(), tfidf_fn());
  REQUIRE(r.computed);
  CHECK(r.doc_ids == std::vector<std::string>{"crm_lookup"});
  CHECK(r.doc_kinds == std::vector<std::string>{"tool_output"});
  // Texts: answer, tool output, the one sentence (= answer). 4 shared terms (df 3, idf 1), "seit"/"2021" df 1.
  const double c = std::log(4.0 / 2.0) + 1;
  CHECK(r.A_ret == Approx(4.0 / (2.0 * std::sqrt(4.0 + 2 * c * c))).epsilon(1e-6));
  CHECK(r.U == 0.0);
  ksodi::O0Params p = cosine();
  p.include_tool_outputs = false;
  CHECK_FALSE(ksodi::compute_o0(in, p, tfidf_fn()).computed);
}

TEST_CASE("O0: attribution markers", "[o0]") {
  CHECK(ksodi::count_attribution_markers("Laut Dokument gilt das gemäß Abschnitt 2.") == 2);
  CHECK(ksodi::count_attribution_markers("According to [1], see section 4 (p. 7).") == 4);
  CHECK(ksodi::count_attribution_markers("Das ist einfach so.") == 0);
}

TEST_CASE("O0: doc sentences as alignment units (default) vs whole docs only", "[o0]") {
  const ksodi::O0Input in = o0_unit(
      "Pinguine leben in der Antarktis.",
      {{"d1", "Pinguine leben in der Antarktis. Eisbären leben dagegen in der Arktis und fressen Robben."}});
  auto r = ksodi::compute_o0(in, cosine(), tfidf_fn());
  // Texts: answer, doc, answer sentence, doc sentence 1, doc sentence 2. The answer sentence equals doc sentence 1.
  CHECK(r.sentences[0].align == Approx(1.0).epsilon(1e-6));
  CHECK_FALSE(r.sentences[0].unsupported);
  ksodi::O0Params p = cosine();
  p.doc_sentences = false;  // seed-literal: whole docs only (3 texts: answer, doc, sentence)
  auto w = ksodi::compute_o0(in, p, tfidf_fn());
  // Shared terms pinguine/leben/antarktis: df 3 → idf 1; doc-only terms eisbären/dagegen/arktis/fressen/robben: df 1,
  // idf ln(4/2)+1; "leben" occurs twice in the doc (tf 2).
  const double c = std::log(2.0) + 1;
  const double dot = 1 + 2 + 1, ns = std::sqrt(3.0), nd = std::sqrt(1 + 4 + 1 + 5 * c * c);
  CHECK(w.sentences[0].align == Approx(dot / (ns * nd)).epsilon(1e-6));
  CHECK(w.sentences[0].unsupported == (dot / (ns * nd) < 0.35));
}
