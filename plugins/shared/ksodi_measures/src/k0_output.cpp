// ksodi.k0's output, written by the SDK's builder (no DOM; evalgraph/json_writer.hpp).
#include "ksodi_measures/k0_output.hpp"

#include "ksodi/detect.hpp"

namespace ksodi {

std::string k0_output(const K0Result &r, const K0Params &p, std::size_t n_docs, const K0Meta &meta) {
  // The dimensions Z R D C E T in sorted (output) order: C D E R T Z.
  static constexpr std::size_t kSorted[] = {3, 2, 4, 1, 5, 0};
  std::string text;
  text.reserve(1024);
  evalgraph::JsonWriter w(text);
  auto dims = [&](std::string_view k, auto &&value) {
    w.key(k);
    w.begin_object();
    for (std::size_t i : kSorted) w.member(kK0Dims[i], value(i));
    w.end_object();
  };
  auto weights = [&] { dims("dimension_weights", [&](std::size_t i) { return p.weights[i]; }); };
  auto pass_through = [&](std::size_t i) {
    w.key(kK0Meta[i]);
    meta(i, w);
  };
  w.begin_object();
  w.member("K0", r.K0);
  pass_through(0);  // chunk_range
  dims("context_evidence", [&](std::size_t i) -> const std::string & { return r.evidence[i]; });
  dims("context_map", [&](std::size_t i) { return r.present[i]; });
  pass_through(1);  // context_scope_id
  w.member("detector_version", detect::kDetectorVersion);
  weights();
  w.member("label", r.label);
  w.member("n_docs", n_docs);
  w.member("not_interpretable", r.not_interpretable);
  w.key("parameters");
  w.begin_object();
  w.member("detector_version", detect::kDetectorVersion);
  weights();
  w.member("interpretable_min", p.interpretable_min);
  w.end_object();
  pass_through(2);  // system_prompt_id
  pass_through(3);  // tool_profile_id
  w.end_object();
  return text;
}

}  // namespace ksodi
