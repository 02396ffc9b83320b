// ksodi.k0's parameters, declared once (evalgraph/params.hpp): used by ksodi.k0 and, nested as `k0`, by ksodi.k_t.
#pragma once

#include <stdexcept>
#include <string>

#include "evalgraph/params.hpp"
#include "ksodi_measures/k0.hpp"

namespace ksodi {

struct K0Weights {
  double Z = 1, R = 1, D = 1, C = 1, E = 1, T = 1;
};
struct K0Config {
  K0Weights weights;
  double interpretable_min = 0.4;
};

inline const evalgraph::Params<K0Config> &k0_params() {
  using evalgraph::param;
  using W = K0Weights;
  static const evalgraph::Params<W> weights{{
    param(&W::Z, "Z", "Goal / task named").range(0, 100),
    param(&W::R, "R", "Role / perspective").range(0, 100),
    param(&W::D, "D", "Data: retrieved docs or explicit inputs/examples").range(0, 100),
    param(&W::C, "C", "Constraints: rules, limits, bans").range(0, 100),
    param(&W::E, "E", "Expected output form").range(0, 100),
    param(&W::T, "T", "Tools available").range(0, 100),
  }};
  static const evalgraph::Params<K0Config> p{{
    param(&K0Config::weights, "weights", "Dimension weights (1 each = the seed's equal weighting); K0 = sum(w_i * present_i) / sum(w_i)", weights),
    param(&K0Config::interpretable_min, "interpretable_min", "Below this K0 the answer scores are flagged not interpretable (seed: 0.4)").range(0, 1),
  }};
  return p;
}

// `what` names the parameter in the error ("weights" or "k0.weights").
inline K0Params resolve(const K0Config &c, const char *what) {
  const K0Weights &w = c.weights;
  K0Params p;
  p.weights = {w.Z, w.R, w.D, w.C, w.E, w.T};
  p.interpretable_min = c.interpretable_min;
  double sum = 0;
  for (double x : p.weights) sum += x;
  if (sum <= 0) throw std::invalid_argument(std::string("parameter '") + what + "': at least one dimension needs a weight > 0");
  return p;
}

}  // namespace ksodi
