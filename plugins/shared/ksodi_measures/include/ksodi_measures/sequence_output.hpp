// What the outputs of the three KSODI-Full sequence operators (ksodi.s_t, ksodi.k_t, ksodi.o_t) share: their Δ
// terms, each turn's position in the conversation and the tail of their parameters block (header-only).
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "ksodi_measures/cues.hpp"
#include "ksodi/detect.hpp"

namespace ksodi::full {

// One Δ term: {value, weight, contribution = sign·weight·value, trigger}.
inline nlohmann::json term_json(double value, double weight, int sign, nlohmann::json trigger) {
  return {{"value", value}, {"weight", weight}, {"contribution", sign * weight * value}, {"trigger", std::move(trigger)}};
}

// Turn i (0-based) of n: the operator's members `o` plus t (1-based), the input's turn id as it came, and n_turns.
inline nlohmann::json turn_json(std::size_t i, nlohmann::json turn, std::size_t n, nlohmann::json o) {
  o["t"] = i + 1;
  o["turn"] = std::move(turn);
  o["n_turns"] = n;
  return o;
}

// The parameters block: the operator's own members `own`, w0 = 1 (the standard operator's weight), the embedding
// provider (null = host default), the embedding model of the last turn that used one (null: none did) and the
// detector and cue versions.
inline nlohmann::json parameters_json(nlohmann::json own, nlohmann::json provider, const std::string &model) {
  own["w0"] = 1.0;
  own["embedding_provider"] = std::move(provider);
  own["embedding_model_id"] = model.empty() ? nlohmann::json(nullptr) : nlohmann::json(model);
  own["detector_version"] = detect::kDetectorVersion;
  own["cue_version"] = kFullCueVersion;
  return own;
}

}  // namespace ksodi::full
