// K0 — observable context completeness (KSODI-Standard-Eval). Pure computation.
#pragma once

#include <array>
#include <string>

namespace ksodi {

// The six fixed, versioned dimensions, in this order.
inline constexpr std::array<const char *, 6> kK0Dims{"Z", "R", "D", "C", "E", "T"};

struct K0Input {
  std::string system_prompt;
  std::string tool_profile;
  std::string user_text;
  std::size_t n_docs = 0;  // non-empty retrieved docs of this unit
};

struct K0Params {
  std::array<double, 6> weights{1, 1, 1, 1, 1, 1};  // Z R D C E T
  double interpretable_min = 0.4;                   // K0 below this: answer scores not interpretable
};

struct K0Result {
  double K0 = 0;
  std::array<bool, 6> present{};
  std::array<std::string, 6> evidence;  // "user_text: 'erkläre*'" or why the dimension is missing
  bool not_interpretable = false;
  std::string label;  // "complete" (K0 = 1), "gaps", or "not_interpretable" (K0 < interpretable_min)
};

K0Result compute_k0(const K0Input &in, const K0Params &p);

}  // namespace ksodi
