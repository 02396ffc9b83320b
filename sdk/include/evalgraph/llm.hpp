// evalgraph plugin SDK — helpers for nodes that call an LLM through the host (transforms, judges): prompt
// templates, the text of a chat answer and the parameters every such node takes (LlmParams: `provider`,
// `inference`). The chat calls themselves are host
// services (evalgraph::Host::chat, chat_batch in plugin.hpp); this header only builds and reads their JSON.
#ifndef EVALGRAPH_LLM_HPP
#define EVALGRAPH_LLM_HPP

#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "evalgraph/params.hpp"

namespace evalgraph {

using json = nlohmann::json;

// Replaces every "{name}" of `vars` in a prompt template; other braces stay as they are. One pass, so a value
// that itself contains "{name}" is not expanded again.
inline std::string render_template(const std::string &tmpl, const std::vector<std::pair<std::string, std::string>> &vars) {
  std::string out;
  out.reserve(tmpl.size());
  for (std::size_t i = 0; i < tmpl.size();) {
    bool done = false;
    if (tmpl[i] == '{') {
      for (const auto &[k, v] : vars) {
        if (tmpl.compare(i + 1, k.size(), k) == 0 && i + 1 + k.size() < tmpl.size() && tmpl[i + 1 + k.size()] == '}') {
          out += v;
          i += k.size() + 2;
          done = true;
          break;
        }
      }
    }
    if (!done) out += tmpl[i++];
  }
  return out;
}

// The content of a chat completion's first choice (choices[0].message.content), or nullopt where it has no text.
inline std::optional<std::string> chat_text(const json &response) {
  if (!response.contains("choices") || !response["choices"].is_array() || response["choices"].empty()) return std::nullopt;
  const auto &c0 = response["choices"][0];
  if (!c0.contains("message") || !c0["message"].contains("content") || !c0["message"]["content"].is_string()) return std::nullopt;
  return c0["message"]["content"].get<std::string>();
}

// A node's `inference` parameters, passed into its chat requests as they are; std::invalid_argument where they
// set what the node sets itself (messages, model, stream).
inline json chat_inference(const json &inference) {
  for (const char *k : {"messages", "model", "stream"})
    if (inference.contains(k)) throw std::invalid_argument(std::string("inference: '") + k + "' is set by the plugin");
  return inference;
}

// The parameters every node that calls a chat model takes, declared once: derive the node's parameter struct
// from LlmParams and start its Params with llm_params():
//   struct Config : evalgraph::LlmParams { std::string user_prompt = "{text}"; };
//   const evalgraph::Params<Config> kParams{evalgraph::llm_params(), {evalgraph::param(&Config::user_prompt, ...)}};
struct LlmParams {
  std::string provider;                  // "": the pipeline's default provider
  json inference = json::object();       // passed into each request as it is
  // The request without its messages: `inference`, refused where it sets what the node sets itself.
  json request_base() const { return chat_inference(inference); }
};
inline const Params<LlmParams> &llm_params() {
  static const Params<LlmParams> p{{
      param(&LlmParams::provider, "provider", "Provider of the pipeline that serves the model (\"\": the pipeline's default provider)."),
      param(&LlmParams::inference, "inference", "Request parameters passed as they are: temperature, top_p, presence_penalty, frequency_penalty, max_tokens, seed, ...").with_schema({{"type", "object"}}),
  }};
  return p;
}

}  // namespace evalgraph

#endif  // EVALGRAPH_LLM_HPP
