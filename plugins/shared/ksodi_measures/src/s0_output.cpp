// ksodi.s0's output, written by the SDK's builder (no DOM; evalgraph/json_writer.hpp).
#include "ksodi_measures/s0_output.hpp"

#include "evalgraph/json_writer.hpp"
#include "ksodi/detect.hpp"

namespace ksodi {

std::string s0_output(const S0Result &r, const S0Params &p, const std::optional<std::string> &provider) {
  std::string text;
  text.reserve(2048);
  evalgraph::JsonWriter w(text);
  w.begin_object();
  w.members("F", r.F, "G_str", r.G_str, "R_red", r.R_red, "S0", r.S0, "expectation_evidence", r.expectation_evidence,
            "expectations_detected", r.expectations);
  w.key("format_counts");  // LIST / STEPS → the requested counts checked
  w.begin_object();
  for (const auto &[f, checks] : r.format_counts) {
    w.key(f);
    w.begin_array();
    for (const auto &c : checks)
      w.object("found", c.found, "passed", c.passed, "phrase", c.phrase, "relation", c.relation,
               "requested", c.requested, "source", c.source);
    w.end_array();
  }
  w.end_object();
  w.member("format_evidence", r.format_evidence);
  w.key("format_items");  // LIST / STEPS → the items counted
  w.begin_object();
  for (const auto &[f, it] : r.format_items) {
    w.key(f);
    if (f == "LIST")
      w.object("counted_over", it.counted_over, "first_item", it.first_item, "first_line", it.first_line,
               "last_line", it.last_line, "marker_mismatch", it.marker_mismatch, "marker_phrase", it.marker_phrase,
               "marker_requested", it.marker_requested, "n_blocks", it.n_blocks, "n_items", it.n_items,
               "n_other_marker", it.n_other_marker);
    else
      w.object("first_item", it.first_item, "first_line", it.first_line, "last_line", it.last_line,
               "n_blocks", it.n_blocks, "n_items", it.n_items);
  }
  w.end_object();
  w.members("format_passed_map", r.format_passed, "n_bullets", r.n_bullets, "n_headings", r.n_headings,
            "n_numbered", r.n_numbered, "n_paragraphs", r.n_paragraphs, "n_sentences", r.n_sentences,
            "no_explicit_format", r.no_explicit_format, "paragraph_similarities", r.paragraph_similarities);
  w.key("parameters");
  w.object("K", p.K, "alpha", r.alpha, "alpha_source", r.alpha_source, "beta", p.beta,
           "detector_version", detect::kDetectorVersion,
           "embedding_model_id", evalgraph::or_null(r.similarity_model_id), "embedding_provider", provider,
           "f_neutral", p.f_neutral, "gamma", p.gamma, "list_marker_mismatch", p.list_marker_mismatch_fails ? "fail" : "count",
           "list_min_share", p.list_min_share,
           "redundancy", p.redundancy == Redundancy::Jaccard ? "jaccard" : "embedding",
           "short_answer_min", p.short_answer_min, "use_user_text", p.use_user_text);
  w.member("short_answer_guardrail", r.short_answer_guardrail);
  w.end_object();
  return text;
}

}  // namespace ksodi
