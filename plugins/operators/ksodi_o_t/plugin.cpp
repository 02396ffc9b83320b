// Plugin glue of ksodi.o_t (sequence node): parameters, ports, JSON in/out. The computation is in o_t.cpp.
#include "cues.hpp"
#include "evalgraph/input.hpp"
#include "evalgraph/plugin.hpp"
#include "ksodi/detect.hpp"
#include "ksodi/plugin_util.hpp"
#include "ksodi/text.hpp"
#include "o0_calibration.hpp"
#include "o0_params.hpp"
#include "o_t.hpp"

namespace {

using evalgraph::json;

struct Config : ksodi::OTParams {
  ksodi::O0Config o0_given;
  std::optional<std::string> embedding_provider;
  std::size_t sentence_text_max = 120;
};
const evalgraph::Params<Config> kParams{"", {
  evalgraph::param<Config>(&Config::w_consistency, "w_consistency", "Weight of C_turn").range(0, 10),
  evalgraph::param<Config>(&Config::w_correction, "w_correction", "Weight of R_corr").range(0, 10),
  evalgraph::param<Config>(&Config::w_verify, "w_verify", "Weight of V_ext (0 = off; set > 0 only with a verifier mapped to port 'verification')").range(0, 10),
  evalgraph::param<Config>(&Config::lambda_drift, "lambda_drift", "Weight of Δdrift").range(0, 10),
  evalgraph::param<Config>(&Config::drift_window, "drift_window", "Earlier turns with docs whose mean A_ret is the drift reference").range(1, 100).unit("turns"),
  evalgraph::param<Config>(&Config::drift_margin, "drift_margin", "Δdrift = clip(mean A_ret of the reference turns - A_ret - drift_margin)").range(0, 1),
  evalgraph::param(&Config::o0_given, "o0", "Parameters of the embedded standard operator ksodi.o0, with its defaults", ksodi::o0_params()),
  evalgraph::param(&Config::embedding_provider, "embedding_provider", "Embedding provider for O0; null = host default (offline TF-IDF)").nullable(),
  evalgraph::param(&Config::sentence_text_max, "sentence_text_max", "Bytes of each sentence's text kept in the embedded O0 audit (0 = offsets only)").range(0, 100000).unit("bytes"),
}};

class OTNode : public ksodi::SequenceNode {
 public:
  OTNode(const evalgraph::Host &host, const json &params) : OTNode(host, params, kParams.parse(params)) {}
  OTNode(const evalgraph::Host &host, const json &params, const Config &c) : SequenceNode(host, params, c.embedding_provider) {
    p_ = c;
    p_.o0 = ksodi::resolve(c.o0_given);
    text_max_ = c.sentence_text_max;
  }

  std::string process_raw(evalgraph::Call &call, std::string_view input) override {
    bool group = false;
    const std::vector<evalgraph::Record> records =
        evalgraph::read_sequence(input, "ksodi.o_t", {"answer", "user_text", "retrieved_docs", "tool_outputs", "verification", "turn"}, &group);
    std::vector<ksodi::OTInput> turns;
    for (const auto &in : records) {
      ksodi::OTInput x;
      x.o0.answer = in.required_text(0, "the assistant text");
      ksodi::check_sentences(x.o0.answer, limits_.sentences_per_answer, "ksodi.o_t");
      x.user_text = in.text(1);
      x.o0.user_text = x.user_text;  // O0's given words (user_words_given)
      x.o0.docs = in.docs(2, "doc_", limits_.nesting_depth);
      x.o0.tool_outputs = in.docs(3, "tool_", limits_.nesting_depth);
      if (auto v = in.number(4, "a number in [0,1] or null")) x.verification = *v;
      turns.push_back(std::move(x));
    }
    auto res = ksodi::compute_o_t(turns, p_, embedder(call));
    std::string model;
    for (const auto &r : res)
      if (!r.o0.embedding_model_id.empty()) model = r.o0.embedding_model_id;
    json params = {{"w0", 1.0},
                   {"w_consistency", p_.w_consistency},
                   {"w_correction", p_.w_correction},
                   {"w_verify", p_.w_verify},
                   {"lambda_drift", p_.lambda_drift},
                   {"drift_window", p_.drift_window},
                   {"drift_margin", p_.drift_margin},
                   {"o0", {{"alignment", p_.o0.alignment == ksodi::Alignment::Cosine ? "cosine" : "support"}, {"alpha", p_.o0.alpha}, {"beta", p_.o0.beta}, {"gamma", p_.o0.gamma}, {"tau", p_.o0.tau},
                           {"include_tool_outputs", p_.o0.include_tool_outputs}, {"doc_sentences", p_.o0.doc_sentences}}},
                   {"embedding_provider", provider_json()},
                   {"embedding_model_id", model.empty() ? json(nullptr) : json(model)},
                   {"detector_version", ksodi::detect::kDetectorVersion},
                   {"cue_version", ksodi::full::kFullCueVersion}};
    json out = json::array();
    for (std::size_t i = 0; i < res.size(); ++i) {
      const auto &r = res[i];
      json o;
      o["O"] = r.O ? json(*r.O) : json(nullptr);
      o["O0"] = r.o0.computed ? json(r.o0.O0) : json(nullptr);
      o["computed"] = r.o0.computed;
      o["flags"] = r.o0.computed ? json::array() : json::array({"no_retrieved_docs"});
      o["t"] = i + 1;
      o["turn"] = records[i].json(5);
      o["n_turns"] = res.size();
      o["C_turn"] = r.C_turn;
      o["R_corr"] = r.R_corr;
      o["V_ext"] = r.V_ext;
      o["drift"] = r.drift;
      o["terms"] = {{"C_turn", term(r.C_turn, p_.w_consistency, 1, r.consistency_ev)},
                    {"R_corr", term(r.R_corr, p_.w_correction, 1, r.correction_ev)},
                    {"V_ext", term(r.V_ext, p_.w_verify, 1, r.verify_ev)},
                    {"drift", term(r.drift, p_.lambda_drift, -1, r.drift_ev)}};
      json qs = json::array();
      for (const auto &q : r.quantities) qs.push_back(ksodi::quantity_json(q));
      o["quantities"] = qs;
      o["o0"] = o0_json(r.o0, turns[i].o0.answer);
      o["parameters"] = params;
      out.push_back(std::move(o));
    }
    return output(out, group);
  }

 private:
  json o0_json(const ksodi::O0Result &r, const std::string &answer) const {
    auto opt = [&](double v) { return r.computed ? json(v) : json(nullptr); };
    json out;
    out["O0"] = opt(r.O0);
    out["A_ret"] = opt(r.A_ret);
    out["T"] = r.T;
    out["U"] = opt(r.U);
    out["computed"] = r.computed;
    out["n_sent"] = r.n_sent;
    out["n_attrib"] = r.n_attrib;
    out["n_unsupported"] = r.n_unsupported;
    out["doc_ids"] = r.doc_ids;
    out["doc_kinds"] = r.doc_kinds;
    out["doc_alignment"] = r.doc_alignment;
    out["best_doc_id"] = r.best_doc >= 0 ? json(r.doc_ids[static_cast<std::size_t>(r.best_doc)]) : json(nullptr);
    out["empty_docs_skipped"] = r.empty_docs_skipped;
    out["marker_kinds"] = r.marker_kinds;
    json sents = json::array();
    for (const auto &s : r.sentences) {
      json j = {{"start", s.start}, {"length", s.length}, {"markers", s.markers}};
      if (text_max_ > 0) j["text"] = std::string(ksodi::text::utf8_prefix(std::string_view(answer).substr(s.start, s.length), text_max_));
      j["align"] = r.computed ? json(s.align) : json(nullptr);
      j["best_doc_id"] = s.best_doc >= 0 ? json(r.doc_ids[static_cast<std::size_t>(s.best_doc)]) : json(nullptr);
      j["unsupported"] = r.computed ? json(s.unsupported) : json(nullptr);
      if (p_.o0.alignment == ksodi::Alignment::Support) {  // the same audit as ksodi.o0's sentences
        j["matched"] = s.matched;
        j["missing"] = s.missing;
        j["exact_missing"] = s.exact_missing;
        if (p_.o0.user_words_given) j["given"] = s.given;
      }
      sents.push_back(std::move(j));
    }
    out["sentences"] = std::move(sents);
    out["tau"] = p_.o0.tau;
    out["weights"] = {{"alpha", p_.o0.alpha}, {"beta", p_.o0.beta}, {"gamma", p_.o0.gamma}};
    out["embedding_model_id"] = r.embedding_model_id.empty() ? json(nullptr) : json(r.embedding_model_id);
    return out;
  }

  ksodi::OTParams p_;
  std::size_t text_max_ = 120;
};

}  // namespace

EVALGRAPH_PLUGIN("ksodi_o_t", "1.0.0", "KSODI-Full O(t): dynamic objectivity over a conversation",
                 evalgraph::node_type<OTNode>({EG_KIND_OPERATOR, "ksodi.o_t",
                                               "KSODI O(t): O0 per turn plus cross-turn consistency, correction, verification and drift",
                                               kParams.schema(), {"answer"},
                                               {"retrieved_docs", "tool_outputs", "user_text", "turn", "verification"},
                                               {"O", "O0", "computed", "flags", "t", "turn", "n_turns", "C_turn", "R_corr",
                                                "V_ext", "drift", "terms", "quantities", "o0", "parameters"},
                                               EG_FLAG_THREAD_SAFE | EG_FLAG_SEQUENCE | EG_FLAG_USES_EMBEDDINGS}))
