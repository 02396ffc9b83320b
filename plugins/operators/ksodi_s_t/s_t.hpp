// S(t) — dynamic structure over a conversation (KSODI-Full). Pure computation; plugin glue in plugin.cpp.
//   S(t) = clip(S0(t) + w_consistency·Δconsistency(t) + w_repair·Δrepair(t) − lambda_decay·Δdecay(t), 0, 1)
// Every Δ term is 0 at t = 1, so S(1) = S0(1) exactly (see README.md).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ksodi/embed.hpp"
#include "ksodi_measures/s0.hpp"

namespace ksodi {

struct STParams {
  S0Params s0;                  // parameters of the embedded standard operator
  double w_consistency = 0.1;   // weight of Δconsistency
  double w_repair = 0.5;        // weight of Δrepair
  double lambda_decay = 0.3;    // weight of Δdecay
  double decay_words = 150;     // answer length (words) at which Δdecay counts in full
};

struct STTurn {
  S0Result s0;
  double S = 0, consistency = 0, repair = 0, decay = 0;
  int words = 0;
  std::vector<std::string> features;  // structural features of the answer (see structure_features)
  nlohmann::json consistency_ev, repair_ev, decay_ev;  // what triggered each term
};

// Structural features present in an answer, in this fixed order: headings, numbered, bullets, table,
// codeblock, json, paragraphs (>= 2 paragraphs).
std::vector<std::string> structure_features(const std::string &answer, const S0Result &s0);

// Turns in conversation order (t = 1..n). `embed` is passed to the standard operator (R_red).
std::vector<STTurn> compute_s_t(const std::vector<S0Input> &turns, const STParams &p, const EmbedFn &embed);

// The standard operator's output as ksodi.s0 writes it (without its parameters block).
nlohmann::json s0_to_json(const S0Result &r);

}  // namespace ksodi
