// Plugin glue of ksodi.o_t (sequence node): parameters, ports, JSON in. Computation: o_t.cpp, output: o_t_output.cpp.
#include "evalgraph/input.hpp"
#include "evalgraph/plugin.hpp"
#include "ksodi/plugin_util.hpp"
#include "ksodi_measures/o0_calibration.hpp"
#include "ksodi_measures/o0_input.hpp"
#include "ksodi_measures/o0_params.hpp"
#include "o_t.hpp"
#include "o_t_output.hpp"

namespace {

using evalgraph::json;

struct Config : ksodi::SequenceConfig<ksodi::OTParams, ksodi::O0Config> {
  std::size_t sentence_text_max = 120;
};
const evalgraph::Params<Config> kParams{ksodi::sequence_params<Config>({
  ksodi::weight_param<Config>(&Config::w_consistency, "w_consistency", "C_turn"),
  ksodi::weight_param<Config>(&Config::w_correction, "w_correction", "R_corr"),
  ksodi::weight_param<Config>(&Config::w_verify, "w_verify", "V_ext (0 = off; set > 0 only with a verifier mapped to port 'verification')"),
  ksodi::weight_param<Config>(&Config::lambda_drift, "lambda_drift", "Δdrift"),
  evalgraph::param<Config>(&Config::drift_window, "drift_window", "Earlier turns with docs whose mean A_ret is the drift reference").range(1, 100).unit("turns"),
  evalgraph::param<Config>(&Config::drift_margin, "drift_margin", "Δdrift = clip(mean A_ret of the reference turns - A_ret - drift_margin)").range(0, 1),
}, "o0", ksodi::o0_params(), "O0", {
  evalgraph::param(&Config::sentence_text_max, "sentence_text_max", "Bytes of each sentence's text kept in the embedded O0 audit (0 = offsets only)").range(0, 100000).unit("bytes"),
})};

const evalgraph::NodeSpec kSpec{
    .name = "ksodi.o_t",
    .description = "KSODI O(t): O0 per turn plus cross-turn consistency, correction, verification and drift",
    .reads = {"answer"},
    .reads_optional = {"retrieved_docs", "tool_outputs", "user_text", "turn", "verification"},
    .writes = {"O", "O0", "computed", "flags", "t", "turn", "n_turns", "C_turn", "R_corr", "V_ext", "drift", "terms",
               "quantities", "o0", "parameters"},
    .flags = ksodi::kSequenceFlags,
    .params = kParams};

class OTNode : public ksodi::SequenceNode<ksodi::OTParams> {
 public:
  OTNode(const evalgraph::Host &host, const Config &c, const json &params) : SequenceNode(host, c, params) {
    p_.o0 = ksodi::resolve(c.standard);
    text_max_ = c.sentence_text_max;
  }

  std::string process_raw(evalgraph::Call &call, std::string_view input) override {
    const Conversation c = read(input, kSpec);
    std::vector<ksodi::OTInput> turns;
    for (const auto &in : c.turns) {
      ksodi::OTInput x;
      x.o0 = ports_.read(in, answer(in, ports_.answer), limits_.nesting_depth);
      x.user_text = x.o0.user_text;  // also O0's given words (user_words_given)
      if (auto v = in.number(verification_, "a number in [0,1] or null")) x.verification = *v;
      turns.push_back(std::move(x));
    }
    const std::vector<ksodi::OTTurn> res = ksodi::compute_o_t(turns, p_, embedder(call));
    return output(ksodi::o_t_output(res, turns, column(c.turns, turn_), p_, provider_json(), text_max_), c);
  }

 private:
  const ksodi::O0Ports ports_{kSpec};
  const evalgraph::Port verification_ = kSpec.port("verification"), turn_ = kSpec.port("turn");
  std::size_t text_max_ = 120;
};

}  // namespace

EVALGRAPH_PLUGIN("ksodi_o_t", "KSODI-Full O(t): dynamic objectivity over a conversation",
                 evalgraph::node_type<OTNode>(kSpec))
