// Plugin glue of ksodi.s0: parameters, ports, JSON in/out. The computation is in s0.cpp.
#include "evalgraph/input.hpp"
#include "evalgraph/json_writer.hpp"
#include "evalgraph/plugin.hpp"
#include "s0_params.hpp"
#include "ksodi/detect.hpp"
#include "ksodi/plugin_util.hpp"
#include "s0.hpp"

namespace {

using evalgraph::json;

struct Config : ksodi::S0Config {
  std::optional<std::string> embedding_provider;
};
const evalgraph::Params<Config> kParams{"", ksodi::s0_params(), {
  evalgraph::param(&Config::embedding_provider, "embedding_provider", "Embedding provider of the pipeline for R_red; null = host default (offline TF-IDF)").nullable(),
}};

class S0Node : public evalgraph::RawNode {
 public:
  S0Node(const evalgraph::Host &host, const json &params) : host_(host) {
    const Config c = kParams.parse(params);
    p_ = ksodi::resolve(c);
    provider_ = c.embedding_provider;
    limits_ = ksodi::input_limits(params);
  }

  std::string process_raw(evalgraph::Call &call, std::string_view input) override {
    return evalgraph::for_each_record(input, "ksodi.s0", [&](std::string_view text) {
      const evalgraph::Record in(text, "ksodi.s0", {"answer", "system_prompt", "tool_profile", "user_text", "tool_profile_id"});
      ksodi::S0Input x;
      x.answer = in.required_text(0, "the assistant text");
      x.system_prompt = in.text(1);
      x.tool_profile = in.text(2);
      x.user_text = in.text(3);
      x.tool_profile_id = in.text(4);
      return compute(call, x);
    });
  }

  // The output, written by the SDK's builder (members in sorted order; evalgraph/json_writer.hpp).
  std::string compute(evalgraph::Call &call, const ksodi::S0Input &x) const {
    ksodi::check_sentences(x.answer, limits_.sentences_per_answer, "ksodi.s0");
    ksodi::S0Result r = ksodi::compute_s0(x, p_, ksodi::host_embedder(host_, call, provider_));

    std::string text;
    text.reserve(2048);
    evalgraph::JsonWriter w(text);
    auto string_map = [&](std::string_view k, const auto &m) {  // a std::map: already in sorted order
      w.key(k);
      w.begin_object();
      for (const auto &[mk, mv] : m) w.member(mk, mv);
      w.end_object();
    };
    w.begin_object();
    w.member("F", r.F);
    w.member("G_str", r.G_str);
    w.member("R_red", r.R_red);
    w.member("S0", r.S0);
    string_map("expectation_evidence", r.expectation_evidence);
    w.key("expectations_detected");
    w.begin_array();
    for (const auto &e : r.expectations) w.string(e);
    w.end_array();
    w.key("format_counts");  // LIST / STEPS → [{found, passed, phrase, relation, requested, source}]
    w.begin_object();
    for (const auto &[f, checks] : r.format_counts) {
      w.key(f);
      w.begin_array();
      for (const auto &c : checks) {
        w.begin_object();
        w.member("found", c.found);
        w.member("passed", c.passed);
        w.member("phrase", c.phrase);
        w.member("relation", c.relation);
        w.member("requested", c.requested);
        w.member("source", c.source);
        w.end_object();
      }
      w.end_array();
    }
    w.end_object();
    string_map("format_evidence", r.format_evidence);
    w.key("format_items");  // LIST / STEPS → the items counted
    w.begin_object();
    for (const auto &[f, it] : r.format_items) {
      w.key(f);
      w.begin_object();
      w.member("first_item", it.first_item);
      w.member("first_line", it.first_line);
      w.member("last_line", it.last_line);
      w.member("n_blocks", it.n_blocks);
      w.member("n_items", it.n_items);
      w.end_object();
    }
    w.end_object();
    string_map("format_passed_map", r.format_passed);
    w.member("n_bullets", r.n_bullets);
    w.member("n_headings", r.n_headings);
    w.member("n_numbered", r.n_numbered);
    w.member("n_paragraphs", r.n_paragraphs);
    w.member("n_sentences", r.n_sentences);
    w.member("no_explicit_format", r.no_explicit_format);
    w.key("paragraph_similarities");
    w.begin_array();
    for (double v : r.paragraph_similarities) w.number(v);
    w.end_array();
    w.key("parameters");
    w.begin_object();
    w.member("K", p_.K);
    w.member("alpha", r.alpha);
    w.member("alpha_source", r.alpha_source);
    w.member("beta", p_.beta);
    w.member("detector_version", ksodi::detect::kDetectorVersion);
    if (r.similarity_model_id.empty()) w.member_null("embedding_model_id");
    else w.member("embedding_model_id", r.similarity_model_id);
    if (provider_) w.member("embedding_provider", *provider_);
    else w.member_null("embedding_provider");
    w.member("f_neutral", p_.f_neutral);
    w.member("gamma", p_.gamma);
    w.member("list_min_share", p_.list_min_share);
    w.member("redundancy", p_.redundancy == ksodi::Redundancy::Jaccard ? "jaccard" : "embedding");
    w.member("short_answer_min", p_.short_answer_min);
    w.member("use_user_text", p_.use_user_text);
    w.end_object();
    w.member("short_answer_guardrail", r.short_answer_guardrail);
    w.end_object();
    return text;
  }

 private:
  evalgraph::Host host_;
  ksodi::S0Params p_;
  std::optional<std::string> provider_;
  ksodi::InputLimits limits_;
};

}  // namespace

EVALGRAPH_PLUGIN("ksodi_s0", "1.0.0", "KSODI-Standard S0: observable structure",
                 evalgraph::node_type<S0Node>({EG_KIND_OPERATOR, "ksodi.s0",
                                               "KSODI S0: format conformance, structure and redundancy of an answer",
                                               kParams.schema(), {"answer"},
                                               {"system_prompt", "tool_profile", "user_text", "tool_profile_id"},
                                               {"S0", "F", "G_str", "R_red", "no_explicit_format", "expectations_detected",
                                                "expectation_evidence", "format_passed_map", "format_evidence", "format_items", "format_counts",
                                                "n_paragraphs", "n_bullets", "n_numbered", "n_headings", "n_sentences",
                                                "short_answer_guardrail", "paragraph_similarities", "parameters"},
                                               EG_FLAG_THREAD_SAFE | EG_FLAG_USES_EMBEDDINGS}))
