// Plugin glue of ksodi.o0: parameters, ports, JSON in/out. The computation is in o0.cpp.
#include "evalgraph/input.hpp"
#include "evalgraph/json_writer.hpp"
#include "evalgraph/plugin.hpp"
#include "ksodi/detect.hpp"
#include "ksodi/plugin_util.hpp"
#include "ksodi/text.hpp"
#include "o0.hpp"
#include "o0_calibration.hpp"
#include "o0_params.hpp"
#include "ksodi/support.hpp"

namespace {

using evalgraph::json;

struct Config : ksodi::O0Config {
  std::optional<std::string> embedding_provider;
  std::size_t sentence_text_max = 200;
};
const evalgraph::Params<Config> kParams{"", ksodi::o0_params(), {
  evalgraph::param(&Config::embedding_provider, "embedding_provider", "Embedding provider of the pipeline; null = host default (offline TF-IDF)").nullable(),
  evalgraph::param(&Config::sentence_text_max, "sentence_text_max", "Bytes of each sentence's text kept in the audit list (0 = offsets only)").range(0, 100000).unit("bytes"),
}};

class O0Node : public evalgraph::RawNode {
 public:
  O0Node(const evalgraph::Host &host, const json &params) : host_(host) {
    const Config c = kParams.parse(params);
    p_ = ksodi::resolve(c);
    calibration_ = ksodi::calibration_id(c);
    provider_ = c.embedding_provider;
    limits_ = ksodi::input_limits(params);
    text_max_ = c.sentence_text_max;
  }

  std::string process_raw(evalgraph::Call &call, std::string_view input) override {
    return evalgraph::for_each_record(input, "ksodi.o0", [&](std::string_view text) {
      const evalgraph::Record in(text, "ksodi.o0", {"answer", "retrieved_docs", "tool_outputs", "user_text"});
      ksodi::O0Input x;
      x.answer = in.required_text(0, "the assistant text");
      x.docs = in.docs(1, "doc_", limits_.nesting_depth);
      x.tool_outputs = in.docs(2, "tool_", limits_.nesting_depth);
      x.user_text = in.text(3);
      return compute(call, x);
    });
  }

  // The output, written by the SDK's builder (members in sorted order; evalgraph/json_writer.hpp).
  std::string compute(evalgraph::Call &call, const ksodi::O0Input &x) const {
    ksodi::check_sentences(x.answer, limits_.sentences_per_answer, "ksodi.o0");
    ksodi::O0Result r = ksodi::compute_o0(x, p_, ksodi::host_embedder(host_, call, provider_));
    auto doc_id = [&](int i) -> const std::string * { return i >= 0 ? &r.doc_ids[static_cast<std::size_t>(i)] : nullptr; };
    std::string text;
    text.reserve(1024 + 256 * r.sentences.size());
    evalgraph::JsonWriter w(text);
    auto opt = [&](std::string_view k, double v) {
      if (r.computed) w.member(k, v);
      else w.member_null(k);
    };
    auto str_or_null = [&](std::string_view k, const std::string *v) {
      if (v != nullptr) w.member(k, *v);
      else w.member_null(k);
    };
    w.begin_object();
    opt("A_ret", r.A_ret);
    opt("O0", r.O0);
    w.member("T", r.T);
    opt("U", r.U);
    str_or_null("best_doc_id", doc_id(r.best_doc));
    w.member("computed", r.computed);
    w.key("doc_alignment");
    w.begin_array();
    for (double a : r.doc_alignment) w.number(a);
    w.end_array();
    str_or_null("embedding_model_id", r.embedding_model_id.empty() ? nullptr : &r.embedding_model_id);
    w.member("empty_docs_skipped", r.empty_docs_skipped);
    w.key("flags");
    w.begin_array();
    if (!r.computed) w.string("no_retrieved_docs");
    if (r.no_content_terms) w.string("no_content_terms");
    w.end_array();
    w.key("marker_kinds");
    w.begin_array();
    for (const auto &k : r.marker_kinds) w.string(k);
    w.end_array();
    w.member("n_attrib", r.n_attrib);
    w.member("n_sent", r.n_sent);
    w.member("n_unsupported", r.n_unsupported);
    const bool support = p_.alignment == ksodi::Alignment::Support;
    w.key("parameters");
    w.begin_object();
    w.member("alignment", support ? "support" : "cosine");
    w.member("alpha", p_.alpha);
    w.member("beta", p_.beta);
    w.member("calibration", calibration_);
    w.member("detector_version", ksodi::detect::kDetectorVersion);
    w.member("doc_sentences", p_.doc_sentences);
    str_or_null("embedding_model_id", r.embedding_model_id.empty() ? nullptr : &r.embedding_model_id);
    str_or_null("embedding_provider", provider_ ? &*provider_ : nullptr);
    w.member("gamma", p_.gamma);
    w.member("include_tool_outputs", p_.include_tool_outputs);
    if (support) {
      str_or_null("language", r.language.empty() ? nullptr : &r.language);
      w.member("support_version", ksodi::support::kSupportVersion);
    }
    w.member("tau", p_.tau);
    if (support) w.member("user_words_given", p_.user_words_given);
    w.end_object();
    w.key("retrieval_doc_ids");
    w.begin_array();
    for (std::size_t i = 0; i < r.doc_ids.size(); ++i)
      if (r.doc_kinds[i] == "retrieved") w.string(r.doc_ids[i]);
    w.end_array();
    w.key("sentences");
    w.begin_array();
    auto strings = [&](std::string_view k, const std::vector<std::string> &v) {
      w.key(k);
      w.begin_array();
      for (const auto &item : v) w.string(item);
      w.end_array();
    };
    for (const auto &s : r.sentences) {
      w.begin_object();
      if (r.computed && s.has_terms) w.member("align", s.align);
      else w.member_null("align");
      w.member("attrib", s.markers > 0);
      str_or_null("best_doc_id", doc_id(s.best_doc));
      if (support) strings("exact_missing", s.exact_missing);
      if (support && p_.user_words_given) strings("given", s.given);
      w.member("length", s.length);
      w.member("markers", s.markers);
      if (support) {
        strings("matched", s.matched);
        strings("missing", s.missing);
      }
      w.member("start", s.start);
      if (text_max_ > 0) w.member("text", ksodi::text::utf8_prefix(std::string_view(x.answer).substr(s.start, s.length), text_max_));
      if (r.computed) w.member("unsupported", s.unsupported);
      else w.member_null("unsupported");
      w.end_object();
    }
    w.end_array();
    w.member("tau", p_.tau);
    // Everything that is not "retrieved" (as the DOM version sorted them).
    w.key("tool_output_ids");
    w.begin_array();
    for (std::size_t i = 0; i < r.doc_ids.size(); ++i)
      if (r.doc_kinds[i] != "retrieved") w.string(r.doc_ids[i]);
    w.end_array();
    w.key("weights");
    w.begin_object();
    w.member("alpha", p_.alpha);
    w.member("beta", p_.beta);
    w.member("gamma", p_.gamma);
    w.end_object();
    w.end_object();
    return text;
  }

 private:
  evalgraph::Host host_;
  ksodi::O0Params p_;
  std::optional<std::string> provider_;
  ksodi::InputLimits limits_;
  std::string calibration_;
  std::size_t text_max_ = 200;
};

}  // namespace

EVALGRAPH_PLUGIN("ksodi_o0", "1.0.0", "KSODI-Standard O0: grounding relative to retrieval",
                 evalgraph::node_type<O0Node>({EG_KIND_OPERATOR, "ksodi.o0",
                                               "KSODI O0: retrieval alignment, traceability and unsupported sentences",
                                               kParams.schema(), {"answer"}, {"retrieved_docs", "tool_outputs", "user_text"},
                                               {"O0", "A_ret", "T", "U", "computed", "flags", "n_sent", "n_attrib",
                                                "n_unsupported", "retrieval_doc_ids", "tool_output_ids", "doc_alignment",
                                                "best_doc_id", "empty_docs_skipped", "marker_kinds", "sentences",
                                                "embedding_model_id", "tau", "weights", "parameters"},
                                               EG_FLAG_THREAD_SAFE | EG_FLAG_USES_EMBEDDINGS}))
