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

// Lexical support (ksodi-support-1.0; 1.1 only adds data-size units), calibrated on the FaithDial development set (shared/validation/faithdial,
// 1,819 units of the binary split) with bench/o0_calibrate.py (CALIBRATE=1 bash bench/validity.sh) — only tau
// and the weights, the formula unchanged (clip included): alpha = 1 sets the scale (a fully supported answer
// without markers reaches 1); beta = gamma keeps the seed's ratio between T and U; tau = 0.5 (a sentence is
// unsupported when its best document states less than half of it); gamma/alpha = the largest ratio whose O0
// AUROC stays within 0.005 of A_ret's alone (0.902 vs 0.905; 1/3 cost 0.010, most of it in answers clipped to 0).
// Earlier: faithdial-dev-2026-11-23 = {1, 1/3, 1/3, 0.5}, chosen on a grid that did not clip.
inline constexpr O0Calibration kSupportCalibration{"faithdial-dev-2026-11-24", 1.0, 0.2, 0.2, 0.5};

}  // namespace ksodi
