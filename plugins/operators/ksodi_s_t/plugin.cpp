// Plugin glue of ksodi.s_t (sequence node): parameters, ports, JSON in. Computation: s_t.cpp, output: s_t_output.cpp.
#include "evalgraph/input.hpp"
#include "evalgraph/plugin.hpp"
#include "ksodi_measures/s0_input.hpp"
#include "ksodi_measures/s0_params.hpp"
#include "ksodi/plugin_util.hpp"
#include "s_t.hpp"
#include "s_t_output.hpp"

namespace {

using evalgraph::json;

using Config = ksodi::SequenceConfig<ksodi::STParams, ksodi::S0Config>;
const evalgraph::Params<Config> kParams{ksodi::sequence_params<Config>({
  ksodi::weight_param<Config>(&Config::w_consistency, "w_consistency", "Δconsistency"),
  ksodi::weight_param<Config>(&Config::w_repair, "w_repair", "Δrepair"),
  ksodi::weight_param<Config>(&Config::lambda_decay, "lambda_decay", "Δdecay"),
  evalgraph::param<Config>(&Config::decay_words, "decay_words", "Answer length in words at which Δdecay counts in full").above(0).with_schema({{"maximum", 100000}}).unit("words"),
}, "s0", ksodi::s0_params(), "S0's R_red")};

const evalgraph::NodeSpec kSpec{
    .name = "ksodi.s_t",
    .description = "KSODI S(t): S0 per turn plus consistency, repair after complaints and decay",
    .reads = {"answer"},
    .reads_optional = {"system_prompt", "tool_profile", "user_text", "tool_profile_id", "turn"},
    .writes = {"S", "S0", "t", "turn", "n_turns", "consistency", "repair", "decay", "terms", "structure_features", "words",
               "s0", "parameters"},
    .flags = ksodi::kSequenceFlags,
    .params = kParams};

class STNode : public ksodi::SequenceNode<ksodi::STParams> {
 public:
  STNode(const evalgraph::Host &host, const Config &c, const json &params) : SequenceNode(host, c, params) {
    p_.s0 = ksodi::resolve(c.standard);
  }

  std::string process_raw(evalgraph::Call &call, std::string_view input) override {
    const Conversation c = read(input, kSpec);
    std::vector<ksodi::S0Input> turns;
    for (const auto &in : c.turns) turns.push_back(ports_.read(in, answer(in, ports_.answer)));
    const std::vector<ksodi::STTurn> res = ksodi::compute_s_t(turns, p_, embedder(call));
    return output(ksodi::s_t_output(res, column(c.turns, turn_), p_, provider_json()), c);
  }

 private:
  const ksodi::S0Ports ports_{kSpec};
  const evalgraph::Port turn_ = kSpec.port("turn");
};

}  // namespace

EVALGRAPH_PLUGIN("ksodi_s_t", "KSODI-Full S(t): dynamic structure over a conversation",
                 evalgraph::node_type<STNode>(kSpec))
