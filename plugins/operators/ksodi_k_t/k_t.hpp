// K(t) — dynamic context coherence over a conversation (KSODI-Full). Pure computation; glue in plugin.cpp.
//   K(t) = clip(K0(t) + mu_fill·ΔK_fill(t) − nu_shift·ΔK_shift(t) − lambda_decay·ΔK_decay(t), 0, 1)
// Every Δ term is 0 at t = 1, so K(1) = K0(1) exactly (see README.md).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ksodi_measures/k0.hpp"
#include "ksodi/embed.hpp"

namespace ksodi {

struct KTInput {
  K0Input k0;                  // this turn's scope (system prompt, tool profile, user text, doc count)
  std::string assistant_text;  // this turn's answer (context of later turns for ΔK_shift)
  std::string docs_text;       // this turn's retrieved docs, joined (topic evidence for ΔK_shift)
};

struct KTParams {
  K0Params k0;
  double mu_fill = 0.5;        // weight of ΔK_fill
  double nu_shift = 0.3;       // weight of ΔK_shift
  double lambda_decay = 0.5;   // weight of ΔK_decay
  double tau_shift = 0.1;      // similarity below which a user turn counts as (partly) off-topic
  int shift_window = 2;        // previous turns the user turn is compared with
  bool followup_exempt = true; // a user turn with a back-reference cue is never a topic shift
  bool shift_with_docs = true; // the user turn is represented with its retrieved docs, earlier turns with theirs
  int shift_min_words = 5;     // shorter user turns ("ok", "Danke!") are not judged for a topic shift
};

struct KTTurn {
  K0Result k0;
  double K = 0, fill = 0, shift = 0, decay = 0;
  double similarity = -1;  // max cosine with the window (-1: not computed)
  nlohmann::json fill_ev, shift_ev, decay_ev;
  std::string embedding_model_id;
};

// One embedding call per turn t >= 2 holding [query(t), turn(t-W), …, turn(t-1)]: query = user text (+ docs of t),
// turn = user text + answer (+ docs of that turn).
std::vector<KTTurn> compute_k_t(const std::vector<KTInput> &turns, const KTParams &p, const EmbedFn &embed);

}  // namespace ksodi
