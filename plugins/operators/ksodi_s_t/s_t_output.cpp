// ksodi.s_t's output: one object per turn, built as nlohmann::json.
#include "s_t_output.hpp"

#include "ksodi_measures/sequence_output.hpp"

namespace ksodi {

using nlohmann::json;

nlohmann::json s_t_output(const std::vector<STTurn> &res, const std::vector<json> &turn_ids, const STParams &p,
                          const json &provider) {
  std::string model;
  for (const auto &r : res)
    if (!r.s0.similarity_model_id.empty()) model = r.s0.similarity_model_id;
  const auto &s = p.s0;
  const json params = full::parameters_json(
      {{"w_consistency", p.w_consistency}, {"w_repair", p.w_repair}, {"lambda_decay", p.lambda_decay},
       {"decay_words", p.decay_words},
       {"s0", {{"alpha", s.alpha}, {"beta", s.beta}, {"gamma", s.gamma}, {"K", s.K}, {"f_neutral", s.f_neutral},
               {"list_min_share", s.list_min_share}, {"short_answer_min", s.short_answer_min},
               {"use_user_text", s.use_user_text},
               {"redundancy", s.redundancy == Redundancy::Jaccard ? "jaccard" : "embedding"},
               {"alpha_by_tool_profile", s.alpha_by_tool_profile}}}},
      provider, model);
  json out = json::array();
  for (std::size_t i = 0; i < res.size(); ++i) {
    const auto &r = res[i];
    json o = full::turn_json(i, turn_ids[i], res.size(),
                             {{"S", r.S}, {"S0", r.s0.S0}, {"consistency", r.consistency}, {"repair", r.repair},
                              {"decay", r.decay}, {"structure_features", r.features}, {"words", r.words}});
    o["terms"] = {{"consistency", full::term_json(r.consistency, p.w_consistency, 1, r.consistency_ev)},
                  {"repair", full::term_json(r.repair, p.w_repair, 1, r.repair_ev)},
                  {"decay", full::term_json(r.decay, p.lambda_decay, -1, r.decay_ev)}};
    o["s0"] = s0_to_json(r.s0);
    o["parameters"] = params;
    out.push_back(std::move(o));
  }
  return out;
}

}  // namespace ksodi
