// The output texts of ksodi.s0, ksodi.o0 and ksodi.k0 (part of the operators' contract): the text is what the
// SDK would dump for the same values (members sorted, parsed and dumped again it is unchanged), and the members
// that depend on the parameters and the result.
#include <catch2/catch.hpp>

#include "helpers.hpp"
#include "ksodi_measures/k0.hpp"
#include "ksodi_measures/k0_output.hpp"
#include "ksodi_measures/o0.hpp"
#include "ksodi_measures/o0_output.hpp"
#include "ksodi_measures/s0.hpp"
#include "ksodi_measures/s0_output.hpp"

using nlohmann::json;

namespace {
// The parsed output, after checking that the text is the SDK's dump of its own parse.
json parsed(const std::string &text) {
  const json j = json::parse(text);
  CHECK(j.dump(-1, ' ', false, json::error_handler_t::replace) == text);
  return j;
}
}  // namespace

TEST_CASE("S0 output: result members, parameters and the embedding provider", "[s0][output]") {
  ksodi::S0Input in;
  in.answer = "Erster Absatz über Fristen.\n\nZweiter Absatz über Gebühren.";
  in.user_text = "Bitte als Liste mit 3 Punkten.";
  ksodi::S0Params p;
  const ksodi::S0Result r = ksodi::compute_s0(in, p, tfidf_fn());
  const json j = parsed(ksodi::s0_output(r, p, std::nullopt));
  CHECK(j["S0"] == r.S0);
  CHECK(j["expectations_detected"] == json(r.expectations));
  CHECK(j["format_passed_map"] == json(r.format_passed));
  CHECK(j["format_counts"].size() == r.format_counts.size());
  CHECK(j["paragraph_similarities"].size() == r.paragraph_similarities.size());
  CHECK(j["n_paragraphs"] == 2);
  CHECK(j["parameters"]["embedding_provider"].is_null());
  CHECK(j["parameters"]["embedding_model_id"] == r.similarity_model_id);
  CHECK(j["parameters"]["redundancy"] == "embedding");
  p.redundancy = ksodi::Redundancy::Jaccard;
  const json k = parsed(ksodi::s0_output(r, p, std::string("openai")));
  CHECK(k["parameters"]["embedding_provider"] == "openai");
  CHECK(k["parameters"]["redundancy"] == "jaccard");
}

TEST_CASE("O0 output: not computed without docs, nulls and the no_retrieved_docs flag", "[o0][output]") {
  const ksodi::O0Input in = o0_unit("Laut Handbuch geht das. Sonst nichts.");
  ksodi::O0Params p;
  const ksodi::O0Result r = ksodi::compute_o0(in, p, tfidf_fn());
  const json j = parsed(ksodi::o0_output(r, p, {"cal-1", std::nullopt, 200}, in.answer));
  CHECK(j["O0"].is_null());
  CHECK(j["A_ret"].is_null());
  CHECK(j["U"].is_null());
  CHECK(j["best_doc_id"].is_null());
  CHECK(j["flags"] == json::array({"no_retrieved_docs"}));
  CHECK(j["parameters"]["calibration"] == "cal-1");
  CHECK(j["parameters"]["embedding_provider"].is_null());
  REQUIRE(j["sentences"].size() == 2);
  CHECK(j["sentences"][0]["align"].is_null());
  CHECK(j["sentences"][0]["unsupported"].is_null());
  CHECK(j["sentences"][0]["attrib"] == true);
  CHECK(j["sentences"][0]["text"] == "Laut Handbuch geht das.");
}

TEST_CASE("O0 output: doc ids split by kind, sentence text cut or left out, support audit", "[o0][output]") {
  const ksodi::O0Input in = o0_unit("Die Frist beträgt drei Monate zum Quartalsende.",
                                    {{"d1", "Die Frist beträgt drei Monate."}}, {{"t1", "Quartalsende ist der 31. März."}});
  ksodi::O0Params p;
  p.alignment = ksodi::Alignment::Support;
  const ksodi::O0Result r = ksodi::compute_o0(in, p, tfidf_fn());
  REQUIRE(r.computed);
  const json j = parsed(ksodi::o0_output(r, p, {"cal", std::string("tfidf"), 8}, in.answer));
  CHECK(j["retrieval_doc_ids"] == json::array({"d1"}));
  CHECK(j["tool_output_ids"] == json::array({"t1"}));
  CHECK(j["O0"] == r.O0);
  CHECK(j["flags"].empty());
  CHECK(j["parameters"]["alignment"] == "support");
  CHECK(j["parameters"]["embedding_provider"] == "tfidf");
  CHECK(j["parameters"].contains("support_version"));
  REQUIRE(j["sentences"].size() == 1);
  const json &s = j["sentences"][0];
  CHECK(s["text"] == "Die Fris");  // 8 bytes
  CHECK(s["matched"] == json(r.sentences[0].matched));
  CHECK(s["missing"] == json(r.sentences[0].missing));
  CHECK(s.contains("given") == p.user_words_given);
  p.alignment = ksodi::Alignment::Cosine;
  const json k = parsed(ksodi::o0_output(r, p, {"cal", std::nullopt, 0}, in.answer));
  CHECK_FALSE(k["sentences"][0].contains("text"));
  CHECK_FALSE(k["sentences"][0].contains("matched"));
  CHECK_FALSE(k["parameters"].contains("support_version"));
}

TEST_CASE("K0 output: dimensions in sorted order, n_docs and the pass-through members", "[k0][output]") {
  ksodi::K0Input x;
  x.system_prompt = "Du bist Support-Assistent. Antworte nur auf Deutsch.";
  x.user_text = "Wie kündige ich meinen Vertrag?";
  ksodi::K0Params p;
  p.weights = {1, 2, 3, 4, 5, 6};
  const ksodi::K0Result r = ksodi::compute_k0(x, p);
  const std::string text = ksodi::k0_output(r, p, 3, [](std::size_t i, evalgraph::JsonWriter &w) {
    if (i == 0) w.null();
    else w.string(ksodi::kK0Meta[i]);
  });
  const json j = parsed(text);
  CHECK(j["K0"] == r.K0);
  CHECK(j["n_docs"] == 3);
  CHECK(j["chunk_range"].is_null());
  CHECK(j["context_scope_id"] == "context_scope_id");
  CHECK(j["tool_profile_id"] == "tool_profile_id");
  CHECK(j["dimension_weights"] == json({{"Z", 1.0}, {"R", 2.0}, {"D", 3.0}, {"C", 4.0}, {"E", 5.0}, {"T", 6.0}}));
  CHECK(j["parameters"]["dimension_weights"] == j["dimension_weights"]);
  for (std::size_t d = 0; d < ksodi::kK0Dims.size(); ++d) {
    CHECK(j["context_map"][ksodi::kK0Dims[d]] == r.present[d]);
    CHECK(j["context_evidence"][ksodi::kK0Dims[d]] == r.evidence[d]);
  }
}
