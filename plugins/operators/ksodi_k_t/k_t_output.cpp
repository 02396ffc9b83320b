// ksodi.k_t's output: one object per turn, built as nlohmann::json.
#include "k_t_output.hpp"

#include "ksodi_measures/sequence_output.hpp"

namespace ksodi {

using nlohmann::json;

nlohmann::json k_t_output(const std::vector<KTTurn> &res, const std::vector<KTInput> &turns,
                          const std::vector<json> &turn_ids, const std::vector<json> &scope_ids, const KTParams &p,
                          const json &provider) {
  std::string model;
  for (const auto &r : res)
    if (!r.embedding_model_id.empty()) model = r.embedding_model_id;
  json w = json::object();
  for (std::size_t d = 0; d < kK0Dims.size(); ++d) w[kK0Dims[d]] = p.k0.weights[d];
  const json params = full::parameters_json(
      {{"mu_fill", p.mu_fill}, {"nu_shift", p.nu_shift}, {"lambda_decay", p.lambda_decay}, {"tau_shift", p.tau_shift},
       {"shift_window", p.shift_window}, {"followup_exempt", p.followup_exempt}, {"shift_with_docs", p.shift_with_docs},
       {"shift_min_words", p.shift_min_words},
       {"k0", {{"dimension_weights", w}, {"interpretable_min", p.k0.interpretable_min}}}},
      provider, model);
  json out = json::array();
  for (std::size_t i = 0; i < res.size(); ++i) {
    const auto &r = res[i];
    json map = json::object(), ev = json::object();
    for (std::size_t d = 0; d < kK0Dims.size(); ++d) {
      map[kK0Dims[d]] = r.k0.present[d];
      ev[kK0Dims[d]] = r.k0.evidence[d];
    }
    json o = full::turn_json(i, turn_ids[i], res.size(),
                             {{"K", r.K}, {"K0", r.k0.K0}, {"fill", r.fill}, {"shift", r.shift}, {"decay", r.decay}});
    o["terms"] = {{"fill", full::term_json(r.fill, p.mu_fill, 1, r.fill_ev)},
                  {"shift", full::term_json(r.shift, p.nu_shift, -1, r.shift_ev)},
                  {"decay", full::term_json(r.decay, p.lambda_decay, -1, r.decay_ev)}};
    o["k0"] = {{"K0", r.k0.K0},
               {"context_map", map},
               {"context_evidence", ev},
               {"not_interpretable", r.k0.not_interpretable},
               {"label", r.k0.label},
               {"n_docs", turns[i].k0.n_docs},
               {"context_scope_id", scope_ids[i]},
               {"detector_version", detect::kDetectorVersion},
               {"dimension_weights", w}};
    o["parameters"] = params;
    out.push_back(std::move(o));
  }
  return out;
}

}  // namespace ksodi
