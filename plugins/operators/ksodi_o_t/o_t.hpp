// O(t) — dynamic objectivity over a conversation (KSODI-Full). Pure computation; glue in plugin.cpp.
//   O(t) = clip(O0(t) + w_consistency·C_turn(t) + w_correction·R_corr(t) + w_verify·V_ext(t) − lambda_drift·Δdrift(t), 0, 1)
// O(t) is null where O0(t) is (no retrieved docs). C_turn, R_corr and Δdrift are 0 at t = 1 and w_verify
// defaults to 0, so O(1) = O0(1) exactly (see README.md).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ksodi/embed.hpp"
#include "ksodi_measures/o0.hpp"

namespace ksodi {

// A number with a unit stated in a text: "30 Tage", "29,99 €", "5 GB", "12 %".
struct Quantity {
  std::string key;   // last content word before the number in the same clause ("" if none)
  std::string unit;  // normalised unit (see README)
  double value = 0;
  std::string text;  // the matched span, for the audit
  bool unit_unique = false;  // the only quantity with this unit in its text
};
std::vector<Quantity> extract_quantities(std::string_view text);
// Same referent: same unit, and the same non-empty key — or, when one key is empty, the unit occurs once in each text.
bool same_referent(const Quantity &a, const Quantity &b);

struct OTInput {
  O0Input o0;
  std::string user_text;
  std::optional<double> verification;  // external verifier's score in [0,1] for this turn, if any
};

struct OTParams {
  O0Params o0;
  double w_consistency = 0.1;  // weight of C_turn
  double w_correction = 0.3;   // weight of R_corr
  double w_verify = 0.0;       // weight of V_ext: off unless a verifier is configured
  double lambda_drift = 0.5;   // weight of Δdrift
  int drift_window = 3;        // earlier computed turns whose mean A_ret is the reference
  double drift_margin = 0.1;   // a fall up to this much is normal variation between turns
};

struct OTTurn {
  O0Result o0;
  std::optional<double> O;  // null when O0 is not computed
  double C_turn = 0, R_corr = 0, V_ext = 0, drift = 0;
  nlohmann::json consistency_ev, correction_ev, verify_ev, drift_ev;
  std::vector<Quantity> quantities;
};

std::vector<OTTurn> compute_o_t(const std::vector<OTInput> &turns, const OTParams &p, const EmbedFn &embed);

nlohmann::json quantity_json(const Quantity &q);

}  // namespace ksodi
