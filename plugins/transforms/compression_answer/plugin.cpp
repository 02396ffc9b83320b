// compression.answer — the model under test answers every probe of a checkpoint from one method's
// compressed context plus the messages that method kept verbatim, and nothing else. The glue: the work is in
// answering.cpp.
#include "answering.hpp"
#include "compression/llm_params.hpp"
#include "evalgraph/plugin.hpp"

namespace {
using namespace compression;

const evalgraph::Params<AnswerOptions> kParams{llm_request_params(), {
  evalgraph::param<AnswerOptions>(&AnswerOptions::method, "method", "Method id when `compressed` is a plain text column (\"\": custom); overrides a transform's"),
  evalgraph::param<AnswerOptions>(&AnswerOptions::label, "label", "Display name in the report (\"\": the method id, or the transform's label)"),
}};

const evalgraph::NodeSpec kSpec{
    .kind = EG_KIND_TRANSFORM,
    .name = "compression.answer",
    .description = "answers each probe from one method's compressed context and verbatim recent messages only",
    .reads = {"compressed", "probes"},
    .writes = {"method", "label", "compacted_context", "tokens_kept", "tokens_history", "answers", "answered", "failed"},
    .flags = EG_FLAG_THREAD_SAFE | EG_FLAG_USES_LLM,
    .params = kParams};

// A DOM: `compressed` is a transform's nested output whose fields it passes on, `probes` a probe node's.
using Answer = BatchNode<ProbeAnswers, AnswerOptions>;

}  // namespace

EVALGRAPH_PLUGIN("compression_answer", "Context compression: the model under test answers the probes",
                 evalgraph::node_type<Answer>(kSpec))
