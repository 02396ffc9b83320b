// Plugin glue of ksodi.k_t (sequence node): parameters, ports, JSON in. Computation: k_t.cpp, output: k_t_output.cpp.
#include "evalgraph/input.hpp"
#include "evalgraph/plugin.hpp"
#include "ksodi_measures/k0_input.hpp"
#include "ksodi_measures/k0_params.hpp"
#include "k_t.hpp"
#include "k_t_output.hpp"
#include "ksodi/plugin_util.hpp"

namespace {

using evalgraph::json;

using Config = ksodi::SequenceConfig<ksodi::KTParams, ksodi::K0Config>;
const evalgraph::Params<Config> kParams{ksodi::sequence_params<Config>({
  ksodi::weight_param<Config>(&Config::mu_fill, "mu_fill", "ΔK_fill"),
  ksodi::weight_param<Config>(&Config::nu_shift, "nu_shift", "ΔK_shift"),
  ksodi::weight_param<Config>(&Config::lambda_decay, "lambda_decay", "ΔK_decay"),
  evalgraph::param<Config>(&Config::tau_shift, "tau_shift", "Max cosine below which a user turn counts as a topic shift: ΔK_shift = clip(1 - sim/tau_shift)").range(0, 1),
  evalgraph::param<Config>(&Config::shift_window, "shift_window", "Previous turns a user turn is compared with").range(1, 100).unit("turns"),
  evalgraph::param<Config>(&Config::followup_exempt, "followup_exempt", "A user turn with a back-reference cue (and no topic-change cue) is never a shift"),
  evalgraph::param<Config>(&Config::shift_with_docs, "shift_with_docs", "Represent each turn with its retrieved docs in the ΔK_shift comparison"),
  evalgraph::param<Config>(&Config::shift_min_words, "shift_min_words", "User turns with fewer words are not judged for a topic shift").range(0, 1000).unit("words"),
}, "k0", ksodi::k0_params(), "ΔK_shift")};

const evalgraph::NodeSpec kSpec{
    .name = "ksodi.k_t",
    .description = "KSODI K(t): K0 per turn plus gaps closed, topic shift and context lost",
    .reads = {"user_text"},
    .reads_optional = {"system_prompt", "tool_profile", "retrieved_docs", "answer", "turn", "context_scope_id"},
    .writes = {"K", "K0", "t", "turn", "n_turns", "fill", "shift", "decay", "terms", "k0", "parameters"},
    .flags = ksodi::kSequenceFlags,
    .params = kParams};

class KTNode : public ksodi::SequenceNode<ksodi::KTParams> {
 public:
  KTNode(const evalgraph::Host &host, const Config &c, const json &params) : SequenceNode(host, c, params) {
    p_.k0 = ksodi::resolve(c.standard, "k0.weights");
  }

  std::string process_raw(evalgraph::Call &call, std::string_view input) override {
    const Conversation c = read(input, kSpec);
    std::vector<ksodi::KTInput> turns;
    for (const auto &in : c.turns) {
      ksodi::KTInput x;
      x.k0 = ports_.read(in, limits_.nesting_depth, &x.docs_text);
      x.assistant_text = in.text(answer_);
      turns.push_back(std::move(x));
    }
    const std::vector<ksodi::KTTurn> res = ksodi::compute_k_t(turns, p_, embedder(call));
    return output(
        ksodi::k_t_output(res, turns, column(c.turns, turn_), column(c.turns, scope_), p_, provider_json()), c);
  }

 private:
  const ksodi::K0Ports ports_{kSpec};
  const evalgraph::Port answer_ = kSpec.port("answer"), turn_ = kSpec.port("turn"), scope_ = kSpec.port("context_scope_id");
};

}  // namespace

EVALGRAPH_PLUGIN("ksodi_k_t", "KSODI-Full K(t): dynamic context coherence over a conversation",
                 evalgraph::node_type<KTNode>(kSpec))
