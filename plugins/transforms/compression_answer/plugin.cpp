// compression.answer — the model under test answers every probe of a checkpoint from one method's
// compressed context plus the messages that method kept verbatim, and nothing else.
#include "compression/llm_params.hpp"
#include "compression/llm_util.hpp"
#include "compression/session.hpp"
#include "evalgraph/plugin.hpp"

namespace {
using namespace compression;

struct Config : LlmRequest {
  std::string method, label;
};
const evalgraph::Params<Config> kParams{"", llm_request_params(), {
  evalgraph::param<Config>(&Config::method, "method", "Method id when `compressed` is a plain text column (\"\": custom); overrides a transform's"),
  evalgraph::param<Config>(&Config::label, "label", "Display name in the report (\"\": the method id, or the transform's label)"),
}};

const char *const kSystem =
    "You are the AI coding agent of the work session below. To save space, your earlier working context was "
    "compressed: all you have now is the compressed context and the most recent messages. Answer the user's "
    "question from them alone. Where they do not hold what is asked, say so instead of guessing.";

// A DOM: `compressed` is a transform's nested output whose fields it passes on, `probes` a probe node's.
class Answer : public evalgraph::Node {
 public:
  Answer(const evalgraph::Host &h, const json &p) : host_(h), c_(kParams.parse(p)) {}

  json process(evalgraph::Call &call, const json &in) override {
    const json &c = in.at("compressed");
    const json &pr = in.at("probes");
    std::string context, recent, method = c_.method, label = c_.label;
    json tokens_kept, tokens_history = pr.is_object() ? pr.value("tokens_history", json()) : json();
    if (c.is_string()) {
      context = c.get<std::string>();
      if (method.empty()) method = "custom";
      tokens_kept = estimate_tokens(context);
    } else if (c.is_object() && c.contains("context") && c["context"].is_string()) {
      context = c["context"].get<std::string>();
      recent = c.value("recent", "");
      if (method.empty()) method = c.value("method", "custom");
      if (label.empty()) label = c.value("label", "");
      tokens_kept = c.value("tokens_kept", json(estimate_tokens(context) + estimate_tokens(recent)));
      if (c.contains("tokens_history")) tokens_history = c["tokens_history"];
    } else {
      throw evalgraph::InputError("'compressed' must be a compression transform's output or a text column");
    }
    if (label.empty()) label = method;
    const json &probes = pr.is_object() && pr.contains("probes") ? pr["probes"] : pr;
    if (!probes.is_array()) throw evalgraph::InputError("'probes' must be the probe node's output or an array of probes");

    std::string block = "## Compressed context\n" + (context.empty() ? std::string("(nothing has been compressed yet)") : context) +
                        "\n\n## Most recent messages\n" + (recent.empty() ? std::string("(none)") : recent);
    json requests = json::array();
    for (const auto &p : probes) {
      if (!p.is_object() || !p.contains("question") || !p["question"].is_string())
        throw evalgraph::InputError("a probe has no question");
      requests.push_back(chat_request(kSystem, block + "\n\n## Question\n" + p["question"].get<std::string>(), c_.temperature, c_.max_tokens));
    }
    json answers = json::array();
    long answered = 0, failed = 0;
    const std::vector<BatchAnswer> res = chat_batch_texts(host_, call, c_.provider, requests);
    for (std::size_t i = 0; i < res.size(); ++i) {
      json a = {{"probe_id", probes[i].value("id", std::to_string(i + 1))}, {"answer", nullptr}};
      if (res[i].ok) {
        a["answer"] = res[i].text;
        ++answered;
      } else {
        a["error"] = res[i].text;
        ++failed;
      }
      answers.push_back(std::move(a));
    }
    return {{"method", method},           {"label", label},       {"compacted_context", block},
            {"tokens_kept", tokens_kept}, {"tokens_history", tokens_history}, {"answers", answers},
            {"answered", answered},       {"failed", failed}};
  }

 private:
  evalgraph::Host host_;
  const Config c_;
};

}  // namespace

EVALGRAPH_PLUGIN("compression_answer", "1.0.0", "Context compression: the model under test answers the probes",
                 evalgraph::node_type<Answer>({EG_KIND_TRANSFORM, "compression.answer",
                                               "answers each probe from one method's compressed context and verbatim recent messages only",
                                               kParams.schema(), {"compressed", "probes"}, {},
                                               {"method", "label", "compacted_context", "tokens_kept", "tokens_history",
                                                "answers", "answered", "failed"},
                                               EG_FLAG_THREAD_SAFE | EG_FLAG_USES_LLM}))
