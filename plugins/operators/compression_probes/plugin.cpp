// compression.probes — the probes of each checkpoint: recall, artifact and continuation probes with
// expected answers read deterministically from the tool calls of the history up to the checkpoint, decision
// probes written by an LLM (why a choice was made, which alternatives were weighed), and probes supplied in
// the dataset. A sequence node: it rebuilds each session's history from its checkpoint records. The glue:
// the probes themselves are computed in probes.cpp.
#include "compression/llm_params.hpp"
#include "evalgraph/plugin.hpp"
#include "probes.hpp"

namespace {
using namespace compression;

struct Config : LlmRequest {
  std::vector<std::string> types{"recall", "artifact", "continuation", "decision"};
  int decision_probes = 1;
  std::string supplied = "add";
  std::size_t max_tool_chars = 300;
};
const evalgraph::Params<Config> kParams{llm_request_params(), {
  evalgraph::param<Config>(&Config::types, "types", "Probe types generated").with_schema({{"items", {{"type", "string"}, {"enum", {"recall", "artifact", "continuation", "decision"}}}}}),
  evalgraph::param<Config>(&Config::decision_probes, "decision_probes", "Decision probes asked of the LLM per checkpoint (0: no LLM call)").range(0, 10),
  evalgraph::param<Config>(&Config::supplied, "supplied", "Probes from the dataset's `probes` column: added to the generated ones, or used alone where present").one_of({"add", "only"}),
  evalgraph::param<Config>(&Config::max_tool_chars, "max_tool_chars", "Tool outputs are cut to this many characters in the decision prompt (0 = never)").at_least(0).unit("characters"),
}};

// compression.probes' parameters.
ProbeOptions probe_options(const Config &c) {
  return {{c.provider, c.temperature, c.max_tokens}, {c.types.begin(), c.types.end()}, c.decision_probes,
          c.supplied == "only", c.max_tool_chars};
}

const evalgraph::NodeSpec kSpec{
    .name = "compression.probes",
    .description = "recall / artifact / continuation probes extracted from the tool calls, decision probes by an LLM, supplied probes",
    .reads = {"messages"},
    .reads_optional = {"probes"},
    .writes = {"probes", "messages_total", "tokens_history", "decision_errors", "decision_raw", "facts"},
    .flags = EG_FLAG_SEQUENCE | EG_FLAG_USES_LLM,
    .params = kParams};

// A DOM: a checkpoint's `messages` (nested tool calls) and `probes` (the dataset's, passed on) are read whole.
using Probes = BatchNode<SessionProbes, Config, probe_options, true>;

}  // namespace

EVALGRAPH_PLUGIN("compression_probes", "Context compression: probes per checkpoint",
                 evalgraph::node_type<Probes>(kSpec))
