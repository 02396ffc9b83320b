// transform.llm — the text under test comes from an OpenAI-compatible model, called through the host's chat
// service (so caching, retries, rate limits, secrets and the replication index in the cache key are the
// host's business). See README.md.
#include <evalgraph/plugin.hpp>

#include "../chain.hpp"

namespace {

using evalgraph::json;
using namespace evalgraph_transforms;

struct Config {
  std::string provider, system_prompt, user_prompt = "{text}";
  json inference = json::object();
  std::optional<std::string> transformation;
};
const evalgraph::Params<Config> kParams{"Transforms the original text with an OpenAI-compatible chat model.", {
  evalgraph::param(&Config::provider, "provider", "Provider of the pipeline that serves the model (\"\": the pipeline's default provider)."),
  evalgraph::param(&Config::system_prompt, "system_prompt", "System prompt template; {text} is the original text."),
  evalgraph::param(&Config::user_prompt, "user_prompt", "User prompt template; {text} is the original text."),
  evalgraph::param(&Config::inference, "inference", "Passed into the request as they are: temperature, top_p, presence_penalty, frequency_penalty, max_tokens, seed, ...").with_schema({{"type", "object"}}),
  evalgraph::param(&Config::transformation, "transformation", "Apply only to rows whose transformation field is this id; other rows pass `previous` through (null: every row)."),
}};

class LlmTransform : public evalgraph::Node {
 public:
  LlmTransform(const evalgraph::Host &host, const json &p) : host_(host), c_(kParams.parse(p)) {
    provider_ = c_.provider;
    system_ = c_.system_prompt;
    user_ = c_.user_prompt;
    inference_ = c_.inference;
    for (const char *k : {"messages", "model", "stream"})
      if (inference_.contains(k)) throw std::invalid_argument(std::string("inference: '") + k + "' is set by the plugin");
  }

  json process(evalgraph::Call &call, const json &in) override {
    if (!applies(c_.transformation, in)) return pass_through(in);
    const auto &orig = in.at("original");
    if (!orig.is_string()) throw evalgraph::InputError("the original text is not a string");
    std::vector<std::pair<std::string, std::string>> vars = {{"text", orig.get<std::string>()},
                                                             {"original", orig.get<std::string>()}};
    json req = inference_;
    json messages = json::array();
    std::string sys = render(system_, vars);
    if (!sys.empty()) messages.push_back({{"role", "system"}, {"content", sys}});
    messages.push_back({{"role", "user"}, {"content", render(user_, vars)}});
    req["messages"] = std::move(messages);
    json resp = host_.chat(call, req, provider_.empty() ? nullptr : provider_.c_str());
    const json *content = nullptr;
    if (resp.contains("choices") && resp["choices"].is_array() && !resp["choices"].empty()) {
      const json &c0 = resp["choices"][0];
      if (c0.contains("message") && c0["message"].contains("content")) content = &c0["message"]["content"];
    }
    if (content == nullptr || !content->is_string()) throw std::runtime_error("the model's answer has no text content");
    std::string text = trim(content->get<std::string>());
    if (text.empty()) throw std::runtime_error("the model answered with an empty text");
    return {{"text", text}, {"applies", true}};
  }

 private:
  evalgraph::Host host_;
  Config c_;
  std::string provider_, system_, user_;
  json inference_;
};

}  // namespace

EVALGRAPH_PLUGIN("transform_llm", "1.0.0", "Transformation by an OpenAI-compatible chat model",
                 evalgraph::node_type<LlmTransform>({EG_KIND_TRANSFORM, "transform.llm",
                                                     "transforms the original text with an OpenAI-compatible chat model",
                                                     kParams.schema(), {"original"}, {"transformation", "previous"},
                                                     {"text", "applies"}, EG_FLAG_THREAD_SAFE | EG_FLAG_USES_LLM}))
