// ksodi.o_t's output: one object per turn, built as nlohmann::json.
#include "o_t_output.hpp"

#include "ksodi/text.hpp"
#include "ksodi_measures/sequence_output.hpp"

namespace ksodi {

using nlohmann::json;

namespace {

// The embedded standard operator's output (its own shape, not ksodi.o0's text).
json o0_json(const O0Result &r, const std::string &answer, const OTParams &p, std::size_t text_max) {
  auto opt = [&](double v) { return r.computed ? json(v) : json(nullptr); };
  json out;
  out["O0"] = opt(r.O0);
  out["A_ret"] = opt(r.A_ret);
  out["T"] = r.T;
  out["U"] = opt(r.U);
  out["computed"] = r.computed;
  out["n_sent"] = r.n_sent;
  out["n_attrib"] = r.n_attrib;
  out["n_unsupported"] = r.n_unsupported;
  out["doc_ids"] = r.doc_ids;
  out["doc_kinds"] = r.doc_kinds;
  out["doc_alignment"] = r.doc_alignment;
  out["best_doc_id"] = r.best_doc >= 0 ? json(r.doc_ids[static_cast<std::size_t>(r.best_doc)]) : json(nullptr);
  out["empty_docs_skipped"] = r.empty_docs_skipped;
  out["marker_kinds"] = r.marker_kinds;
  json sents = json::array();
  for (const auto &s : r.sentences) {
    json j = {{"start", s.start}, {"length", s.length}, {"markers", s.markers}};
    if (text_max > 0) j["text"] = std::string(text::utf8_prefix(std::string_view(answer).substr(s.start, s.length), text_max));
    j["align"] = r.computed ? json(s.align) : json(nullptr);
    j["best_doc_id"] = s.best_doc >= 0 ? json(r.doc_ids[static_cast<std::size_t>(s.best_doc)]) : json(nullptr);
    j["unsupported"] = r.computed ? json(s.unsupported) : json(nullptr);
    if (p.o0.alignment == Alignment::Support) {  // the same audit as ksodi.o0's sentences
      j["matched"] = s.matched;
      j["missing"] = s.missing;
      j["exact_missing"] = s.exact_missing;
      if (p.o0.user_words_given) j["given"] = s.given;
    }
    sents.push_back(std::move(j));
  }
  out["sentences"] = std::move(sents);
  out["tau"] = p.o0.tau;
  out["weights"] = {{"alpha", p.o0.alpha}, {"beta", p.o0.beta}, {"gamma", p.o0.gamma}};
  out["embedding_model_id"] = r.embedding_model_id.empty() ? json(nullptr) : json(r.embedding_model_id);
  return out;
}

}  // namespace

nlohmann::json o_t_output(const std::vector<OTTurn> &res, const std::vector<OTInput> &turns,
                          const std::vector<json> &turn_ids, const OTParams &p, const json &provider,
                          std::size_t text_max) {
  std::string model;
  for (const auto &r : res)
    if (!r.o0.embedding_model_id.empty()) model = r.o0.embedding_model_id;
  const json params = full::parameters_json(
      {{"w_consistency", p.w_consistency}, {"w_correction", p.w_correction}, {"w_verify", p.w_verify},
       {"lambda_drift", p.lambda_drift}, {"drift_window", p.drift_window}, {"drift_margin", p.drift_margin},
       {"o0", {{"alignment", p.o0.alignment == Alignment::Cosine ? "cosine" : "support"}, {"alpha", p.o0.alpha},
               {"beta", p.o0.beta}, {"gamma", p.o0.gamma}, {"tau", p.o0.tau},
               {"include_tool_outputs", p.o0.include_tool_outputs}, {"doc_sentences", p.o0.doc_sentences}}}},
      provider, model);
  json out = json::array();
  for (std::size_t i = 0; i < res.size(); ++i) {
    const auto &r = res[i];
    json o = full::turn_json(i, turn_ids[i], res.size(),
                             {{"O", r.O ? json(*r.O) : json(nullptr)}, {"O0", r.o0.computed ? json(r.o0.O0) : json(nullptr)},
                              {"computed", r.o0.computed},
                              {"flags", r.o0.computed ? json::array() : json::array({"no_retrieved_docs"})},
                              {"C_turn", r.C_turn}, {"R_corr", r.R_corr}, {"V_ext", r.V_ext}, {"drift", r.drift}});
    o["terms"] = {{"C_turn", full::term_json(r.C_turn, p.w_consistency, 1, r.consistency_ev)},
                  {"R_corr", full::term_json(r.R_corr, p.w_correction, 1, r.correction_ev)},
                  {"V_ext", full::term_json(r.V_ext, p.w_verify, 1, r.verify_ev)},
                  {"drift", full::term_json(r.drift, p.lambda_drift, -1, r.drift_ev)}};
    json qs = json::array();
    for (const auto &q : r.quantities) qs.push_back(quantity_json(q));
    o["quantities"] = qs;
    o["o0"] = o0_json(r.o0, turns[i].o0.answer, p, text_max);
    o["parameters"] = params;
    out.push_back(std::move(o));
  }
  return out;
}

}  // namespace ksodi
