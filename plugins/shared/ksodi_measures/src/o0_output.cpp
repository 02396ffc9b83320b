// ksodi.o0's output, written by the SDK's builder (no DOM; evalgraph/json_writer.hpp).
#include "ksodi_measures/o0_output.hpp"

#include "evalgraph/json_writer.hpp"
#include "ksodi/detect.hpp"
#include "ksodi/support.hpp"
#include "ksodi/text.hpp"

namespace ksodi {

std::string o0_output(const O0Result &r, const O0Params &p, const O0OutputOptions &o, std::string_view answer) {
  // A doc's id, or null (no doc: index -1).
  auto doc_id = [&](int i) -> std::optional<std::string_view> {
    if (i < 0) return std::nullopt;
    return r.doc_ids[static_cast<std::size_t>(i)];
  };
  // A value that is null where the unit is not computed (no retrieved docs).
  auto if_computed = [&](auto v) { return r.computed ? std::optional(v) : std::nullopt; };
  std::string out;
  out.reserve(1024 + 256 * r.sentences.size());
  evalgraph::JsonWriter w(out);
  // The ids of the docs that are (not) "retrieved": tool outputs are everything else, as the DOM version sorted them.
  auto ids = [&](std::string_view k, bool retrieved) {
    w.key(k);
    w.begin_array();
    for (std::size_t i = 0; i < r.doc_ids.size(); ++i)
      if ((r.doc_kinds[i] == "retrieved") == retrieved) w.string(r.doc_ids[i]);
    w.end_array();
  };
  const std::optional<std::string_view> model = evalgraph::or_null(r.embedding_model_id);
  w.begin_object();
  w.members("A_ret", if_computed(r.A_ret), "O0", if_computed(r.O0), "T", r.T, "U", if_computed(r.U),
            "best_doc_id", doc_id(r.best_doc), "computed", r.computed, "doc_alignment", r.doc_alignment,
            "embedding_model_id", model, "empty_docs_skipped", r.empty_docs_skipped);
  w.key("flags");
  w.begin_array();
  if (!r.computed) w.string("no_retrieved_docs");
  if (r.no_content_terms) w.string("no_content_terms");
  w.end_array();
  w.members("marker_kinds", r.marker_kinds, "n_attrib", r.n_attrib, "n_sent", r.n_sent, "n_unsupported", r.n_unsupported);
  const bool support = p.alignment == Alignment::Support;
  w.key("parameters");
  w.begin_object();
  w.members("alignment", support ? "support" : "cosine", "alpha", p.alpha, "beta", p.beta, "calibration", o.calibration,
            "detector_version", detect::kDetectorVersion, "doc_sentences", p.doc_sentences,
            "embedding_model_id", model, "embedding_provider", o.provider,
            "gamma", p.gamma, "include_tool_outputs", p.include_tool_outputs);
  if (support) w.members("language", evalgraph::or_null(r.language), "support_version", support::kSupportVersion);
  w.member("tau", p.tau);
  if (support) w.member("user_words_given", p.user_words_given);
  w.end_object();
  ids("retrieval_doc_ids", true);
  w.key("sentences");
  w.begin_array();
  for (const auto &s : r.sentences) {
    w.begin_object();
    w.members("align", r.computed && s.has_terms ? std::optional(s.align) : std::nullopt, "attrib", s.markers > 0,
              "best_doc_id", doc_id(s.best_doc));
    if (support) w.member("exact_missing", s.exact_missing);
    if (support && p.user_words_given) w.member("given", s.given);
    w.members("length", s.length, "markers", s.markers);
    if (support) w.members("matched", s.matched, "missing", s.missing);
    w.member("start", s.start);
    if (o.text_max > 0) w.member("text", text::utf8_prefix(answer.substr(s.start, s.length), o.text_max));
    w.member("unsupported", if_computed(s.unsupported));
    w.end_object();
  }
  w.end_array();
  w.member("tau", p.tau);
  ids("tool_output_ids", false);
  w.key("weights");
  w.object("alpha", p.alpha, "beta", p.beta, "gamma", p.gamma);
  w.end_object();
  return out;
}

}  // namespace ksodi
