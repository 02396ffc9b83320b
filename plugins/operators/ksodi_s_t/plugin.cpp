// Plugin glue of ksodi.s_t (sequence node): parameters, ports, JSON in/out. The computation is in s_t.cpp.
#include "cues.hpp"
#include "evalgraph/plugin.hpp"
#include "ksodi/detect.hpp"
#include "ksodi/json_input.hpp"
#include "ksodi/plugin_util.hpp"
#include "s_t.hpp"

namespace {

using evalgraph::json;

constexpr const char *kSchema = R"schema({
  "type": "object",
  "additionalProperties": false,
  "properties": {
    "w_consistency": {"type": "number", "minimum": 0, "maximum": 10, "description": "Weight of Δconsistency (default 0.1)"},
    "w_repair": {"type": "number", "minimum": 0, "maximum": 10, "description": "Weight of Δrepair (default 0.5)"},
    "lambda_decay": {"type": "number", "minimum": 0, "maximum": 10, "description": "Weight of Δdecay (default 0.3)"},
    "decay_words": {"type": "number", "exclusiveMinimum": 0, "maximum": 100000, "description": "Answer length in words at which Δdecay counts in full (default 150)"},
    "s0": {"type": "object", "description": "Parameters of the embedded standard operator ksodi.s0 (alpha, beta, gamma, K, f_neutral, list_min_share, short_answer_min, use_user_text, redundancy, alpha_by_tool_profile)"},
    "embedding_provider": {"type": ["string", "null"], "description": "Embedding provider for S0's R_red; null = host default (offline TF-IDF)"}
  }
})schema";

ksodi::S0Params s0_params(const json &p) {
  ksodi::S0Params s;
  s.alpha = ksodi::param_num(p, "alpha", 0.4, 0, 10);
  s.beta = ksodi::param_num(p, "beta", 0.4, 0, 10);
  s.gamma = ksodi::param_num(p, "gamma", 0.2, 0, 10);
  s.K = ksodi::param_num(p, "K", 10, 1e-9, 1000);
  s.f_neutral = ksodi::param_num(p, "f_neutral", 0.5, 0, 1);
  s.list_min_share = ksodi::param_num(p, "list_min_share", 0.0, 0, 1);  // as ksodi.s0: a list block anywhere passes
  s.short_answer_min = ksodi::param_num(p, "short_answer_min", 0.2, 0, 1);
  s.use_user_text = ksodi::param_bool(p, "use_user_text", true);
  std::string red = p.value("redundancy", std::string("embedding"));
  if (red != "embedding" && red != "jaccard") throw std::invalid_argument("parameter 's0.redundancy' must be 'embedding' or 'jaccard'");
  s.redundancy = red == "jaccard" ? ksodi::Redundancy::Jaccard : ksodi::Redundancy::Embedding;
  if (auto it = p.find("alpha_by_tool_profile"); it != p.end() && it->is_object())
    for (const auto &[k, v] : it->items()) {
      if (!v.is_number()) throw std::invalid_argument("s0.alpha_by_tool_profile." + k + " must be a number");
      s.alpha_by_tool_profile[k] = v.get<double>();
    }
  for (const auto &[k, v] : p.items()) {
    static const char *known[] = {"alpha", "beta", "gamma", "K", "f_neutral", "list_min_share", "short_answer_min",
                                  "use_user_text", "redundancy", "alpha_by_tool_profile"};
    bool ok = false;
    for (const char *n : known) ok = ok || k == n;
    if (!ok) throw std::invalid_argument("parameter 's0." + k + "' is not a parameter of ksodi.s0");
  }
  return s;
}

json term(double value, double weight, int sign, json trigger) {
  return {{"value", value}, {"weight", weight}, {"contribution", sign * weight * value}, {"trigger", std::move(trigger)}};
}

class STNode : public evalgraph::Node {
 public:
  STNode(const evalgraph::Host &host, const json &params) : host_(host) {
    p_.w_consistency = ksodi::param_num(params, "w_consistency", 0.1, 0, 10);
    p_.w_repair = ksodi::param_num(params, "w_repair", 0.5, 0, 10);
    p_.lambda_decay = ksodi::param_num(params, "lambda_decay", 0.3, 0, 10);
    p_.decay_words = ksodi::param_num(params, "decay_words", 150, 1e-9, 100000);
    json s0p = params.contains("s0") && params["s0"].is_object() ? params["s0"] : json::object();
    p_.s0 = s0_params(s0p);
    provider_ = ksodi::param_provider(params);
    limits_ = ksodi::input_limits(params);
  }

  json process(evalgraph::Call &call, const json &in) override { return process_sequence(call, json::array({in}))[0]; }

  json process_sequence(evalgraph::Call &call, const json &records) override {
    std::vector<ksodi::S0Input> turns;
    for (const auto &in : records) {
      auto ans = in.find("answer");
      if (ans == in.end() || !(ans->is_string() || ans->is_null()))
        throw evalgraph::InputError("ksodi.s_t: port 'answer' must be a string (the assistant text)");
      ksodi::S0Input x;
      x.answer = ksodi::text_of(in, "answer");
      ksodi::check_sentences(x.answer, limits_.sentences_per_answer, "ksodi.s_t");
      x.system_prompt = ksodi::text_of(in, "system_prompt");
      x.tool_profile = ksodi::text_of(in, "tool_profile");
      x.user_text = ksodi::text_of(in, "user_text");
      x.tool_profile_id = ksodi::text_of(in, "tool_profile_id");
      turns.push_back(std::move(x));
    }
    std::vector<ksodi::STTurn> res = ksodi::compute_s_t(turns, p_, ksodi::host_embedder(host_, call, provider_));
    json params = parameters(res);
    json out = json::array();
    for (std::size_t i = 0; i < res.size(); ++i) {
      const auto &r = res[i];
      json o;
      o["S"] = r.S;
      o["S0"] = r.s0.S0;
      o["t"] = i + 1;
      o["turn"] = records[i].contains("turn") ? records[i]["turn"] : json(nullptr);
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
    return out;
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
            {"embedding_provider", provider_ ? json(*provider_) : json(nullptr)},
            {"embedding_model_id", model.empty() ? json(nullptr) : json(model)},
            {"detector_version", ksodi::detect::kDetectorVersion},
            {"cue_version", ksodi::full::kFullCueVersion}};
  }

  evalgraph::Host host_;
  ksodi::STParams p_;
  std::optional<std::string> provider_;
  ksodi::InputLimits limits_;
};

}  // namespace

EVALGRAPH_PLUGIN("ksodi_s_t", "1.0.0", "KSODI-Full S(t): dynamic structure over a conversation",
                 evalgraph::node_type<STNode>({EG_KIND_OPERATOR, "ksodi.s_t",
                                               "KSODI S(t): S0 per turn plus consistency, repair after complaints and decay",
                                               kSchema, {"answer"},
                                               {"system_prompt", "tool_profile", "user_text", "tool_profile_id", "turn"},
                                               {"S", "S0", "t", "turn", "n_turns", "consistency", "repair", "decay", "terms",
                                                "structure_features", "words", "s0", "parameters"},
                                               EG_FLAG_THREAD_SAFE | EG_FLAG_SEQUENCE | EG_FLAG_USES_EMBEDDINGS}))
