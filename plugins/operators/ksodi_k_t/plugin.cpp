// Plugin glue of ksodi.k_t (sequence node): parameters, ports, JSON in/out. The computation is in k_t.cpp.
#include "cues.hpp"
#include "evalgraph/input.hpp"
#include "evalgraph/plugin.hpp"
#include "k0_params.hpp"
#include "k_t.hpp"
#include "ksodi/detect.hpp"
#include "ksodi/plugin_util.hpp"
#include "ksodi/text.hpp"

namespace {

using evalgraph::json;

struct Config : ksodi::KTParams {
  ksodi::K0Config k0_given;
  std::optional<std::string> embedding_provider;
};
const evalgraph::Params<Config> kParams{"", {
  evalgraph::param<Config>(&Config::mu_fill, "mu_fill", "Weight of ΔK_fill").range(0, 10),
  evalgraph::param<Config>(&Config::nu_shift, "nu_shift", "Weight of ΔK_shift").range(0, 10),
  evalgraph::param<Config>(&Config::lambda_decay, "lambda_decay", "Weight of ΔK_decay").range(0, 10),
  evalgraph::param<Config>(&Config::tau_shift, "tau_shift", "Max cosine below which a user turn counts as a topic shift: ΔK_shift = clip(1 - sim/tau_shift)").range(0, 1),
  evalgraph::param<Config>(&Config::shift_window, "shift_window", "Previous turns a user turn is compared with").range(1, 100).unit("turns"),
  evalgraph::param<Config>(&Config::followup_exempt, "followup_exempt", "A user turn with a back-reference cue (and no topic-change cue) is never a shift"),
  evalgraph::param<Config>(&Config::shift_with_docs, "shift_with_docs", "Represent each turn with its retrieved docs in the ΔK_shift comparison"),
  evalgraph::param<Config>(&Config::shift_min_words, "shift_min_words", "User turns with fewer words are not judged for a topic shift").range(0, 1000).unit("words"),
  evalgraph::param(&Config::k0_given, "k0", "Parameters of the embedded standard operator ksodi.k0, with its defaults", ksodi::k0_params()),
  evalgraph::param(&Config::embedding_provider, "embedding_provider", "Embedding provider for ΔK_shift; null = host default (offline TF-IDF)").nullable(),
}};

class KTNode : public ksodi::SequenceNode {
 public:
  KTNode(const evalgraph::Host &host, const json &params) : KTNode(host, params, kParams.parse(params)) {}
  KTNode(const evalgraph::Host &host, const json &params, const Config &c) : SequenceNode(host, params, c.embedding_provider) {
    p_ = c;
    p_.k0 = ksodi::resolve(c.k0_given, "k0.weights");
  }

  // Input ports, in this order.
  enum Port { kSystemPrompt, kToolProfile, kUserText, kAnswer, kDocs, kTurn, kScope };

  std::string process_raw(evalgraph::Call &call, std::string_view input) override {
    bool group = false;
    const std::vector<evalgraph::Record> records =
        evalgraph::read_sequence(input, "ksodi.k_t", {"system_prompt", "tool_profile", "user_text", "answer", "retrieved_docs", "turn", "context_scope_id"}, &group);
    std::vector<ksodi::KTInput> turns;
    for (const auto &in : records) {
      ksodi::KTInput x;
      x.k0.system_prompt = in.text(kSystemPrompt);
      x.k0.tool_profile = in.text(kToolProfile);
      x.k0.user_text = in.text(kUserText);
      x.assistant_text = in.text(kAnswer);
      for (const auto &d : in.docs(kDocs, "doc_", limits_.nesting_depth)) {
        x.k0.n_docs += ksodi::text::trim(d.text).empty() ? 0 : 1;
        x.docs_text += d.text + "\n";
      }
      turns.push_back(std::move(x));
    }
    auto res = ksodi::compute_k_t(turns, p_, embedder(call));
    std::string model;
    for (const auto &r : res)
      if (!r.embedding_model_id.empty()) model = r.embedding_model_id;
    json w = json::object();
    for (std::size_t d = 0; d < ksodi::kK0Dims.size(); ++d) w[ksodi::kK0Dims[d]] = p_.k0.weights[d];
    json params = {{"w0", 1.0},
                   {"mu_fill", p_.mu_fill},
                   {"nu_shift", p_.nu_shift},
                   {"lambda_decay", p_.lambda_decay},
                   {"tau_shift", p_.tau_shift},
                   {"shift_window", p_.shift_window},
                   {"followup_exempt", p_.followup_exempt},
                   {"shift_with_docs", p_.shift_with_docs},
                   {"shift_min_words", p_.shift_min_words},
                   {"k0", {{"dimension_weights", w}, {"interpretable_min", p_.k0.interpretable_min}}},
                   {"embedding_provider", provider_json()},
                   {"embedding_model_id", model.empty() ? json(nullptr) : json(model)},
                   {"detector_version", ksodi::detect::kDetectorVersion},
                   {"cue_version", ksodi::full::kFullCueVersion}};
    json out = json::array();
    for (std::size_t i = 0; i < res.size(); ++i) {
      const auto &r = res[i];
      const evalgraph::Record &in = records[i];
      json map = json::object(), ev = json::object();
      for (std::size_t d = 0; d < ksodi::kK0Dims.size(); ++d) {
        map[ksodi::kK0Dims[d]] = r.k0.present[d];
        ev[ksodi::kK0Dims[d]] = r.k0.evidence[d];
      }
      json o;
      o["K"] = r.K;
      o["K0"] = r.k0.K0;
      o["t"] = i + 1;
      o["turn"] = in.json(kTurn);
      o["n_turns"] = res.size();
      o["fill"] = r.fill;
      o["shift"] = r.shift;
      o["decay"] = r.decay;
      o["terms"] = {{"fill", term(r.fill, p_.mu_fill, 1, r.fill_ev)},
                    {"shift", term(r.shift, p_.nu_shift, -1, r.shift_ev)},
                    {"decay", term(r.decay, p_.lambda_decay, -1, r.decay_ev)}};
      o["k0"] = {{"K0", r.k0.K0},
                 {"context_map", map},
                 {"context_evidence", ev},
                 {"not_interpretable", r.k0.not_interpretable},
                 {"label", r.k0.label},
                 {"n_docs", turns[i].k0.n_docs},
                 {"context_scope_id", in.json(kScope)},
                 {"detector_version", ksodi::detect::kDetectorVersion},
                 {"dimension_weights", w}};
      o["parameters"] = params;
      out.push_back(std::move(o));
    }
    return output(out, group);
  }

 private:
  ksodi::KTParams p_;
};

}  // namespace

EVALGRAPH_PLUGIN("ksodi_k_t", "1.0.0", "KSODI-Full K(t): dynamic context coherence over a conversation",
                 evalgraph::node_type<KTNode>({EG_KIND_OPERATOR, "ksodi.k_t",
                                               "KSODI K(t): K0 per turn plus gaps closed, topic shift and context lost",
                                               kParams.schema(), {"user_text"},
                                               {"system_prompt", "tool_profile", "retrieved_docs", "answer", "turn",
                                                "context_scope_id"},
                                               {"K", "K0", "t", "turn", "n_turns", "fill", "shift", "decay", "terms", "k0",
                                                "parameters"},
                                               EG_FLAG_THREAD_SAFE | EG_FLAG_SEQUENCE | EG_FLAG_USES_EMBEDDINGS}))
