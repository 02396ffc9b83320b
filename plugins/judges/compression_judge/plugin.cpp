// compression.judge — grades every answer of every method on the rubric criteria of its probe type, blind:
// each answer is judged in a request of its own that carries only the probe question, the answer, the
// compressed context it was given, the ground truth and the criteria — no method id, label, slot or probe
// id — and the requests of a checkpoint are sent in a seeded random order. The glue: the grading (the items,
// what a probe is graded on, the blind requests, how a judge answer is recorded) is in judging.cpp.
#include "compression/llm_params.hpp"
#include "compression/llm_util.hpp"
#include "evalgraph/plugin.hpp"
#include "judging.hpp"

namespace {
using namespace compression;

struct Config : LlmRequest {
  long long seed = 1;
  json criteria_by_probe_type = json::object();
  std::map<std::string, double> criterion_weights;
  bool ground_truth = true;
};
json criteria_list(const std::string &type) {
  return {{"type", "array"}, {"items", {{"type", "string"}}}, {"minItems", 1}, {"description", "Criteria graded for " + type + " probes"},
          {"default", default_criteria_by_type()[type]}};
}
const evalgraph::Params<Config> kParams{llm_request_params(), {
  evalgraph::param<Config>(&Config::seed, "seed", "Seed of the order in which a checkpoint's answers are sent"),
  evalgraph::param<Config>(&Config::criteria_by_probe_type, "criteria_by_probe_type", "Criteria graded per probe type (types not given keep the default)")
      .with_schema({{"type", "object"}, {"additionalProperties", false}, {"properties", {{"recall", criteria_list("recall")}, {"artifact", criteria_list("artifact")}, {"continuation", criteria_list("continuation")}, {"decision", criteria_list("decision")}}}}).shown_default(default_criteria_by_type()),
  evalgraph::param<Config>(&Config::criterion_weights, "criterion_weights", "Weight of a criterion within its dimension (absent: 1)").with_schema({{"additionalProperties", {{"type", "number"}, {"minimum", 0}}}}),
  evalgraph::param<Config>(&Config::ground_truth, "ground_truth", "Send the probe's expected answer as ground_truth"),
}};

// compression.judge's parameters, checked.
GradingOptions grading_options(const Config &c) {
  GradingOptions o{{c.provider, c.temperature, c.max_tokens}, criteria_by_type(c.criteria_by_probe_type),
                   c.criterion_weights, static_cast<std::uint64_t>(c.seed), c.ground_truth};
  for (const auto &w : c.criterion_weights) check_criterion(w.first, "criterion_weights");
  return o;
}

const evalgraph::NodeSpec kSpec{
    .kind = EG_KIND_JUDGE,
    .name = "compression.judge",
    .description = "grades each method's probe answers 0-5 on the rubric criteria, blind to the method",
    .reads = {"probes"},
    .reads_optional = {"answers_1", "answers_2", "answers_3", "answers_4", "answers_5", "answers_6", "answers_7", "answers_8"},
    .writes = {"results", "methods", "judge_calls", "valid", "invalid", "judge_errors", "unanswered"},
    .flags = EG_FLAG_THREAD_SAFE | EG_FLAG_USES_LLM,
    .params = kParams};

// A DOM: `probes` and the answers_N are other nodes' nested outputs, read whole and partly passed on.
using Judge = BatchNode<Grading, Config, grading_options>;

}  // namespace

EVALGRAPH_PLUGIN("compression_rubric", "Context compression: blind rubric judge", evalgraph::node_type<Judge>(kSpec))
