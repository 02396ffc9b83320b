// ksodi.o0's parameters, declared once (evalgraph/params.hpp): used by ksodi.o0 and, nested as `o0`, by ksodi.o_t.
#pragma once

#include <optional>
#include <string>

#include "evalgraph/params.hpp"
#include "ksodi_measures/o0.hpp"
#include "ksodi_measures/o0_calibration.hpp"

namespace ksodi {

// As given in `with:`; the weights and tau default to the alignment's calibration (o0_calibration.hpp).
struct O0Config {
  std::string alignment = "support";
  std::optional<double> alpha, beta, gamma, tau;
  bool include_tool_outputs = true;
  bool doc_sentences = true;
  bool user_words_given = true;
};

inline const evalgraph::Params<O0Config> &o0_params() {
  using evalgraph::param;
  static const evalgraph::Params<O0Config> p{{
    param(&O0Config::alignment, "alignment", "How a sentence's alignment with the docs is measured: support = lexical support (share of its content terms its best doc states, stemmed, numbers and names exact; validated against human labels), cosine = the seed-literal embedding cosine with the seed's start values").one_of({"support", "cosine"}),
    param(&O0Config::alpha, "alpha", "Weight of retrieval alignment A_ret (default: the alignment's calibration; seed and cosine: 0.6)").range(0, 10).shown_default(kSupportCalibration.alpha),
    param(&O0Config::beta, "beta", "Weight of traceability T (default: the alignment's calibration; seed and cosine: 0.2)").range(0, 10).shown_default(kSupportCalibration.beta),
    param(&O0Config::gamma, "gamma", "Weight of the unsupported-claim penalty U (default: the alignment's calibration; seed and cosine: 0.2)").range(0, 10).shown_default(kSupportCalibration.gamma),
    param(&O0Config::tau, "tau", "A sentence is unsupported when its alignment is below tau (with support: or a number/name of it is missing) and it has no attribution marker (default: the alignment's calibration; seed and cosine: 0.35)").range(0, 1).shown_default(kSupportCalibration.tau),
    param(&O0Config::include_tool_outputs, "include_tool_outputs", "Treat tool outputs (port tool_outputs) as extra docs"),
    param(&O0Config::user_words_given, "user_words_given", "Support only: an answer word that the user's message (port user_text) holds is given by the conversation, neither found nor missing; false = scored against the docs like any other word"),
    param(&O0Config::doc_sentences, "doc_sentences", "U alignment: max over whole docs AND each doc's sentences; false = whole docs only, as in the seed"),
  }};
  return p;
}

// The computation's parameters: what was given, the rest from the alignment's calibration.
inline O0Params resolve(const O0Config &c) {
  const bool cosine = c.alignment == "cosine";
  const O0Calibration &cal = cosine ? kSeedStartValues : kSupportCalibration;
  O0Params p;
  p.alignment = cosine ? Alignment::Cosine : Alignment::Support;
  p.alpha = c.alpha.value_or(cal.alpha);
  p.beta = c.beta.value_or(cal.beta);
  p.gamma = c.gamma.value_or(cal.gamma);
  p.tau = c.tau.value_or(cal.tau);
  p.include_tool_outputs = c.include_tool_outputs;
  p.doc_sentences = c.doc_sentences;
  p.user_words_given = c.user_words_given;
  return p;
}
inline const char *calibration_id(const O0Config &c) {
  return c.alignment == "cosine" ? kSeedStartValues.id : kSupportCalibration.id;
}

}  // namespace ksodi
