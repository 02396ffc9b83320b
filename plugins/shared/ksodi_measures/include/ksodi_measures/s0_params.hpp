// ksodi.s0's parameters, declared once (evalgraph/params.hpp): used by ksodi.s0 and, nested as `s0`, by ksodi.s_t.
#pragma once

#include <string>

#include "evalgraph/params.hpp"
#include "ksodi_measures/s0.hpp"

namespace ksodi {

struct S0Config : S0Params {
  std::string redundancy_name = "embedding";
  std::string list_marker_mismatch_name = "fail";
};

inline const evalgraph::Params<S0Config> &s0_params() {
  using evalgraph::param;
  using C = S0Config;
  static const evalgraph::Params<C> p{{
    param<C>(&C::alpha, "alpha", "Weight of format conformance F (seed: 0.4)").range(0, 10),
    param<C>(&C::beta, "beta", "Weight of structure G_str (seed: 0.4)").range(0, 10),
    param<C>(&C::gamma, "gamma", "Weight of the redundancy penalty R_red (seed: 0.2)").range(0, 10),
    param<C>(&C::K, "K", "G_str normaliser: G_str = clip((headings + numbered + bullets + min(paragraphs,3)) / K) (seed: 10)").above(0).with_schema({{"maximum", 1000}}),
    param<C>(&C::f_neutral, "f_neutral", "F when no output format is expected (seed: 0.5)").range(0, 1),
    param<C>(&C::list_min_share, "list_min_share", "Optional extra LIST condition: list items make up at least this share of the non-blank lines (0 = off: a list block of >= 2 items anywhere passes)").range(0, 1),
    param<C>(&C::list_marker_mismatch_name, "list_marker_mismatch", "LIST where the request names a marker (bullet points, a numbered list, an example bullet): fail = top-level items of another marker are not counted (a numbered list where bullet points were asked fails); count = they count, the mismatch is only reported").one_of({"fail", "count"}),
    param<C>(&C::short_answer_min, "short_answer_min", "Guardrail: G_str floor for a non-empty answer of at most one sentence without structure markers").range(0, 1),
    param<C>(&C::use_user_text, "use_user_text", "Also read format wishes from the user text"),
    param<C>(&C::redundancy_name, "redundancy", "R_red similarity: cosine of paragraph embeddings (host service; default provider TF-IDF) or token-set Jaccard").one_of({"embedding", "jaccard"}),
    param<C>(&C::alpha_by_tool_profile, "alpha_by_tool_profile", "Per tool_profile_id alpha overrides, e.g. a strict-JSON tool profile that makes F dominant").items_range(0, 10),
  }};
  return p;
}

inline S0Params resolve(const S0Config &c) {
  S0Params p = c;
  p.redundancy = c.redundancy_name == "jaccard" ? Redundancy::Jaccard : Redundancy::Embedding;
  p.list_marker_mismatch_fails = c.list_marker_mismatch_name != "count";
  return p;
}

}  // namespace ksodi
