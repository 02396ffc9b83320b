// Plugin glue of ksodi.s_t (sequence node): parameters, ports, JSON in/out. The computation is in s_t.cpp.
#include "cues.hpp"
#include "evalgraph/input.hpp"
#include "evalgraph/plugin.hpp"
#include "s0_params.hpp"
#include "ksodi/detect.hpp"
#include "ksodi/plugin_util.hpp"
#include "s_t.hpp"

namespace {

using evalgraph::json;

struct Config : ksodi::STParams {
  ksodi::S0Config s0_given;
  std::optional<std::string> embedding_provider;
};
const evalgraph::Params<Config> kParams{"", {
  evalgraph::param<Config>(&Config::w_consistency, "w_consistency", "Weight of Δconsistency").range(0, 10),
  evalgraph::param<Config>(&Config::w_repair, "w_repair", "Weight of Δrepair").range(0, 10),
  evalgraph::param<Config>(&Config::lambda_decay, "lambda_decay", "Weight of Δdecay").range(0, 10),
  evalgraph::param<Config>(&Config::decay_words, "decay_words", "Answer length in words at which Δdecay counts in full").above(0).with_schema({{"maximum", 100000}}).unit("words"),
  evalgraph::param(&Config::s0_given, "s0", "Parameters of the embedded standard operator ksodi.s0, with its defaults", ksodi::s0_params()),
  evalgraph::param(&Config::embedding_provider, "embedding_provider", "Embedding provider for S0's R_red; null = host default (offline TF-IDF)").nullable(),
}};

class STNode : public ksodi::SequenceNode {
 public:
  STNode(const evalgraph::Host &host, const json &params) : STNode(host, params, kParams.parse(params)) {}
  STNode(const evalgraph::Host &host, const json &params, const Config &c) : SequenceNode(host, params, c.embedding_provider) {
    p_ = c;
    p_.s0 = ksodi::resolve(c.s0_given);
  }

  std::string process_raw(evalgraph::Call &call, std::string_view input) override {
    bool group = false;
    const std::vector<evalgraph::Record> records =
        evalgraph::read_sequence(input, "ksodi.s_t", {"answer", "system_prompt", "tool_profile", "user_text", "tool_profile_id", "turn"}, &group);
    std::vector<ksodi::S0Input> turns;
    for (const auto &in : records) {
      ksodi::S0Input x;
      x.answer = in.required_text(0, "the assistant text");
      ksodi::check_sentences(x.answer, limits_.sentences_per_answer, "ksodi.s_t");
      x.system_prompt = in.text(1);
      x.tool_profile = in.text(2);
      x.user_text = in.text(3);
      x.tool_profile_id = in.text(4);
      turns.push_back(std::move(x));
    }
    std::vector<ksodi::STTurn> res = ksodi::compute_s_t(turns, p_, embedder(call));
    json params = parameters(res);
    json out = json::array();
    for (std::size_t i = 0; i < res.size(); ++i) {
      const auto &r = res[i];
      json o;
      o["S"] = r.S;
      o["S0"] = r.s0.S0;
      o["t"] = i + 1;
      o["turn"] = records[i].json(5);
      o["n_turns"] = res.size();
      o["consistency"] = r.consistency;
      o["repair"] = r.repair;
      o["decay"] = r.decay;
      o["terms"] = {{"consistency", term(r.consistency, p_.w_consistency, 1, r.consistency_ev)},
                    {"repair", term(r.repair, p_.w_repair, 1, r.repair_ev)},
                    {"decay", term(r.decay, p_.lambda_decay, -1, r.decay_ev)}};
      o["structure_features"] = r.features;
      o["words"] = r.words;
      o["s0"] = ksodi::s0_to_json(r.s0);
      o["parameters"] = params;
      out.push_back(std::move(o));
    }
    return output(out, group);
  }

 private:
  json parameters(const std::vector<ksodi::STTurn> &res) const {
    std::string model;
    for (const auto &r : res)
      if (!r.s0.similarity_model_id.empty()) model = r.s0.similarity_model_id;
    const auto &s = p_.s0;
    return {{"w0", 1.0},
            {"w_consistency", p_.w_consistency},
            {"w_repair", p_.w_repair},
            {"lambda_decay", p_.lambda_decay},
            {"decay_words", p_.decay_words},
            {"s0", {{"alpha", s.alpha}, {"beta", s.beta}, {"gamma", s.gamma}, {"K", s.K}, {"f_neutral", s.f_neutral},
                    {"list_min_share", s.list_min_share}, {"short_answer_min", s.short_answer_min},
                    {"use_user_text", s.use_user_text},
                    {"redundancy", s.redundancy == ksodi::Redundancy::Jaccard ? "jaccard" : "embedding"},
                    {"alpha_by_tool_profile", s.alpha_by_tool_profile}}},
            {"embedding_provider", provider_json()},
            {"embedding_model_id", model.empty() ? json(nullptr) : json(model)},
            {"detector_version", ksodi::detect::kDetectorVersion},
            {"cue_version", ksodi::full::kFullCueVersion}};
  }

  ksodi::STParams p_;
};

}  // namespace

EVALGRAPH_PLUGIN("ksodi_s_t", "1.0.0", "KSODI-Full S(t): dynamic structure over a conversation",
                 evalgraph::node_type<STNode>({EG_KIND_OPERATOR, "ksodi.s_t",
                                               "KSODI S(t): S0 per turn plus consistency, repair after complaints and decay",
                                               kParams.schema(), {"answer"},
                                               {"system_prompt", "tool_profile", "user_text", "tool_profile_id", "turn"},
                                               {"S", "S0", "t", "turn", "n_turns", "consistency", "repair", "decay", "terms",
                                                "structure_features", "words", "s0", "parameters"},
                                               EG_FLAG_THREAD_SAFE | EG_FLAG_SEQUENCE | EG_FLAG_USES_EMBEDDINGS}))
