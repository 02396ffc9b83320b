// O0's default weights and threshold, per alignment measure, versioned. The seed calls tau and the weights
// "start values, to be calibrated empirically, stored versioned": this is where they are stored, and every
// result names the calibration it used (parameters.calibration).
#pragma once

namespace ksodi {

struct O0Calibration {
  const char *id;
  double alpha, beta, gamma, tau;
};

// The seed's start values (seed 002): the defaults of `alignment: cosine`, which reproduces the seed literally.
inline constexpr O0Calibration kSeedStartValues{"seed-start-values", 0.6, 0.2, 0.2, 0.35};

// Lexical support (ksodi-support-1.0), calibrated on the FaithDial development set (shared/validation/faithdial,
// 1,819 units of the binary split) with bench/validity.sh — only tau and the weights, the formula unchanged:
// tau and gamma/alpha by AUROC of O0, alpha by the scale (a fully supported answer without markers reaches
// O0 = alpha; see the README of ksodi.o0 for the grid and the figures).
inline constexpr O0Calibration kSupportCalibration{"faithdial-dev-2026-11-23", 1.0, 1.0 / 3, 1.0 / 3, 0.5};

}  // namespace ksodi
