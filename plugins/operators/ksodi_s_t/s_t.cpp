#include "s_t.hpp"

#include <algorithm>

#include "ksodi_measures/cues.hpp"
#include "ksodi/text.hpp"

namespace ksodi {

using nlohmann::json;

std::vector<std::string> structure_features(const std::string &answer, const S0Result &s0) {
  std::vector<std::string> f;
  std::string ev;
  if (s0.n_headings > 0) f.push_back("headings");
  if (s0.n_numbered > 0) f.push_back("numbered");
  if (s0.n_bullets > 0) f.push_back("bullets");
  if (check_table(answer, ev)) f.push_back("table");
  if (check_codeblock(answer, ev)) f.push_back("codeblock");
  if (check_json(answer, ev)) f.push_back("json");
  if (s0.n_paragraphs >= 2) f.push_back("paragraphs");
  return f;
}

std::vector<STTurn> compute_s_t(const std::vector<S0Input> &turns, const STParams &p, const EmbedFn &embed) {
  std::vector<STTurn> out(turns.size());
  for (std::size_t i = 0; i < turns.size(); ++i) {
    STTurn &r = out[i];
    r.s0 = compute_s0(turns[i], p.s0, embed);
    r.features = structure_features(turns[i].answer, r.s0);
    r.words = static_cast<int>(full::word_count(turns[i].answer));
    const int t = static_cast<int>(i) + 1;
    if (i == 0) {
      r.consistency_ev = {{"reason", "first turn"}};
      r.repair_ev = {{"reason", "first turn"}};
      r.decay_ev = {{"reason", "first turn"}};
      r.S = clip01(r.s0.S0);
      continue;
    }
    const STTurn &prev = out[i - 1];

    // Δconsistency: Jaccard of the structural feature sets of this and the previous answer, when the expected
    // formats did not change; 0 when they changed or neither answer has any structural feature.
    {
      std::vector<std::string> e_now = r.s0.expectations, e_prev = prev.s0.expectations;
      std::sort(e_now.begin(), e_now.end());
      std::sort(e_prev.begin(), e_prev.end());
      std::vector<std::string> shared, uni;
      std::vector<std::string> a = r.features, b = prev.features;
      std::sort(a.begin(), a.end());
      std::sort(b.begin(), b.end());
      std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(shared));
      std::set_union(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(uni));
      r.consistency_ev = {{"compared_with_t", t - 1}, {"features", r.features}, {"features_prev", prev.features},
                          {"shared", shared}, {"expected_formats", e_now}, {"expected_formats_prev", e_prev}};
      if (e_now != e_prev) {
        r.consistency = 0;
        r.consistency_ev["reason"] = "expected formats changed: consistency not applicable";
      } else if (uni.empty()) {
        r.consistency = 0;
        r.consistency_ev["reason"] = "no structural feature in either answer";
      } else {
        r.consistency = static_cast<double>(shared.size()) / static_cast<double>(uni.size());
        r.consistency_ev["reason"] = "jaccard of feature sets";
      }
    }

    // Δrepair: after a follow-up/complaint in this user turn, the improvement of S0 over the previous answer.
    {
      std::string cue = full::find_cue(full::cues_followup(), turns[i].user_text);
      r.repair_ev = {{"cue", cue.empty() ? json(nullptr) : json(cue)}, {"compared_with_t", t - 1},
                     {"S0_prev", prev.s0.S0}, {"S0", r.s0.S0}};
      if (cue.empty()) {
        r.repair = 0;
        r.repair_ev["reason"] = "no follow-up or complaint in the user turn";
      } else {
        r.repair = clip01(r.s0.S0 - prev.s0.S0);
        r.repair_ev["reason"] = r.repair > 0 ? "structure improved after the complaint" : "complaint, but structure did not improve";
      }
    }

    // Δdecay: the drop of G_str below its best value in earlier turns, scaled by the answer's length.
    {
      std::size_t peak = 0;
      for (std::size_t u = 1; u < i; ++u)
        if (out[u].s0.G_str > out[peak].s0.G_str) peak = u;
      double drop = clip01(out[peak].s0.G_str - r.s0.G_str);
      double len = clip01(static_cast<double>(r.words) / p.decay_words);
      r.decay = drop * len;
      r.decay_ev = {{"peak_t", static_cast<int>(peak) + 1}, {"G_str_peak", out[peak].s0.G_str}, {"G_str", r.s0.G_str},
                    {"drop", drop}, {"words", r.words}, {"length_factor", len}};
    }
    r.S = clip01(r.s0.S0 + p.w_consistency * r.consistency + p.w_repair * r.repair - p.lambda_decay * r.decay);
  }
  return out;
}

json s0_to_json(const S0Result &r) {
  json out;
  out["S0"] = r.S0;
  out["F"] = r.F;
  out["G_str"] = r.G_str;
  out["R_red"] = r.R_red;
  out["alpha"] = r.alpha;
  out["alpha_source"] = r.alpha_source;
  out["no_explicit_format"] = r.no_explicit_format;
  out["expectations_detected"] = r.expectations;
  out["expectation_evidence"] = r.expectation_evidence;
  out["format_passed_map"] = r.format_passed;
  out["format_evidence"] = r.format_evidence;
  out["n_paragraphs"] = r.n_paragraphs;
  out["n_bullets"] = r.n_bullets;
  out["n_numbered"] = r.n_numbered;
  out["n_headings"] = r.n_headings;
  out["n_sentences"] = r.n_sentences;
  out["short_answer_guardrail"] = r.short_answer_guardrail;
  out["paragraph_similarities"] = r.paragraph_similarities;
  out["embedding_model_id"] = r.similarity_model_id.empty() ? json(nullptr) : json(r.similarity_model_id);
  return out;
}

}  // namespace ksodi
