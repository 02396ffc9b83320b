// transform.llm — the text under test comes from an OpenAI-compatible model, called through the host's chat
// service (so caching, retries, rate limits, secrets and the replication index in the cache key are the
// host's business). See README.md.
#include <evalgraph/llm.hpp>
#include <evalgraph/plugin.hpp>

#include "chain/chain.hpp"

namespace {

using evalgraph::json;
using namespace evalgraph_transforms;

struct Config : evalgraph::LlmParams {
  std::string system_prompt, user_prompt = "{text}";
  std::optional<std::string> transformation;
};
const evalgraph::Params<Config> kParams{evalgraph::llm_params(), {
  evalgraph::param(&Config::system_prompt, "system_prompt", "System prompt template; {text} is the original text."),
  evalgraph::param(&Config::user_prompt, "user_prompt", "User prompt template; {text} is the original text."),
  transformation_param<Config>(),
}};

const evalgraph::NodeSpec kSpec = chain_spec({
    .name = "transform.llm",
    .description = "transforms the original text with an OpenAI-compatible chat model",
    .reads = {"original"},
    .flags = EG_FLAG_THREAD_SAFE | EG_FLAG_USES_LLM,
    .params = kParams});

class LlmTransform : public ChainNode {
 public:
  LlmTransform(const evalgraph::Host &host, const Config &c)
      : ChainNode(kSpec, c.transformation), host_(host), c_(c), inference_(c.request_base()) {}

  std::string transform(evalgraph::Call &call, const evalgraph::Record &row) override {
    const std::string orig = original(row, original_);
    const std::vector<std::pair<std::string, std::string>> vars = {{"text", orig}, {"original", orig}};
    json req = inference_;
    json messages = json::array();
    std::string sys = render(c_.system_prompt, vars);
    if (!sys.empty()) messages.push_back({{"role", "system"}, {"content", sys}});
    messages.push_back({{"role", "user"}, {"content", render(c_.user_prompt, vars)}});
    req["messages"] = std::move(messages);
    const auto content = evalgraph::chat_text(host_.chat(call, req, c_.provider.empty() ? nullptr : c_.provider.c_str()));
    if (!content) throw std::runtime_error("the model's answer has no text content");
    std::string text = trim(*content);
    if (text.empty()) throw std::runtime_error("the model answered with an empty text");
    return text;
  }

 private:
  evalgraph::Host host_;
  const Config c_;
  const evalgraph::Port original_ = kSpec.port("original");
  const json inference_;
};

}  // namespace

EVALGRAPH_PLUGIN("transform_llm", "Transformation by an OpenAI-compatible chat model",
                 evalgraph::node_type<LlmTransform>(kSpec))
