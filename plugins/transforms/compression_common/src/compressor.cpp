#include "compression/compressor.hpp"

#include <stdexcept>

#include "compression/llm_util.hpp"

namespace compression {

Knobs parse_knobs(const json &p) {
  Knobs k;
  k.trigger = str_param(p, "trigger", "checkpoints");
  k.every = int_param(p, "every", 0);
  k.keep_recent = int_param(p, "keep_recent", 8);
  k.max_tool_chars = static_cast<std::size_t>(int_param(p, "max_tool_chars", 2000));
  k.temperature = num_param(p, "temperature", 0);
  k.max_tokens = static_cast<int>(int_param(p, "max_tokens", 0));
  k.provider = str_param(p, "provider", "");
  if (k.trigger != "checkpoints" && k.every <= 0)
    throw std::invalid_argument("trigger '" + k.trigger + "' needs `every` (a positive number of " +
                                (k.trigger == "tokens" ? "tokens" : "messages") + ")");
  if (k.trigger == "checkpoints" && k.every > 0)
    throw std::invalid_argument("`every` only applies to trigger 'messages' or 'tokens'");
  return k;
}

const char *knobs_schema() {
  return R"schema({
  "type": "object",
  "additionalProperties": false,
  "properties": {
    "trigger": {"type": "string", "enum": ["checkpoints", "messages", "tokens"], "description": "When to compress: at each checkpoint (default), every N messages, or every N estimated tokens"},
    "every": {"type": "integer", "minimum": 1, "description": "N for trigger messages/tokens"},
    "keep_recent": {"type": "integer", "minimum": 0, "maximum": 100000, "description": "Messages kept verbatim after a compression (default 8)"},
    "max_tool_chars": {"type": "integer", "minimum": 0, "description": "Tool outputs are cut to this many characters in the summariser's prompt (default 2000; 0 = never)"},
    "provider": {"type": "string", "minLength": 1, "description": "Pipeline provider of the summariser (default: the pipeline's default)"},
    "temperature": {"type": "number", "minimum": 0, "maximum": 2, "description": "Summariser temperature (default 0)"},
    "max_tokens": {"type": "integer", "minimum": 1, "description": "Summariser max_tokens (default: not sent)"}
  }
})schema";
}

std::string summarise(const evalgraph::Host &host, evalgraph::Call &call, const Knobs &k, const std::string &system,
                      const std::string &user) {
  json req = chat_request(system, user, k.temperature, k.max_tokens);
  json resp = host.chat(call, req, k.provider.empty() ? nullptr : k.provider.c_str());
  return chat_content(resp);
}

CompressionTransform::CompressionTransform(const json &params, std::string method_id, std::string label,
                                           std::function<std::unique_ptr<Method>()> make, const evalgraph::Host &host)
    : k_(parse_knobs(params)), method_(std::move(method_id)), label_(std::move(label)), make_(std::move(make)), host_(host) {}

json CompressionTransform::process(evalgraph::Call &call, const json &record) {
  return process_sequence(call, json::array({record})).at(0);
}

json CompressionTransform::process_sequence(evalgraph::Call &call, const json &records) {
  std::unique_ptr<Method> m = make_();
  std::vector<Message> msgs;
  std::vector<std::size_t> msg_tokens;
  std::size_t boundary = 0;
  long long compressions = 0;
  json out = json::array();
  const std::size_t keep = static_cast<std::size_t>(k_.keep_recent);
  auto compress_to = [&](std::size_t nb) {
    if (nb <= boundary) return;
    m->compress(host_, call, k_, msgs, boundary, nb);
    boundary = nb;
    ++compressions;
  };
  std::size_t n_rec = 0;
  for (const auto &r : records) {
    ++n_rec;
    if (host_.cancelled(call)) throw evalgraph::HostError(EG_CANCELLED, "cancelled");
    auto it = r.find("messages");
    if (it == r.end()) throw evalgraph::InputError("checkpoint " + std::to_string(n_rec) + " has no 'messages'");
    long long calls_before = m->llm_calls;
    std::size_t start = msgs.size();
    try {
      append_messages(msgs, *it, "checkpoint " + std::to_string(n_rec));
    } catch (const std::invalid_argument &e) {
      throw evalgraph::InputError(e.what());
    }
    for (std::size_t i = start; i < msgs.size(); ++i) msg_tokens.push_back(estimate_tokens(render_message(msgs[i])) );
    if (k_.trigger == "checkpoints") {
      if (msgs.size() > keep) compress_to(msgs.size() - keep);
    } else {
      for (std::size_t n = start + 1; n <= msgs.size(); ++n) {
        if (n <= keep) continue;
        bool fire = false;
        if (k_.trigger == "messages") {
          fire = n - boundary >= static_cast<std::size_t>(k_.every) + keep;
        } else {
          std::size_t t = 0;
          for (std::size_t i = boundary; i < n; ++i) t += msg_tokens[i];
          fire = t >= static_cast<std::size_t>(k_.every);
        }
        if (fire) compress_to(n - keep);
      }
    }
    std::string ctx = m->context();
    std::string recent = render_transcript(msgs, boundary, msgs.size());
    std::size_t t_ctx = estimate_tokens(ctx), t_recent = estimate_tokens(recent);
    std::size_t t_hist = transcript_tokens(msgs, 0, msgs.size());
    json o = {{"method", method_},
              {"label", label_},
              {"context", ctx},
              {"recent", recent},
              {"compressed_through", boundary},
              {"messages_total", msgs.size()},
              {"compressions", compressions},
              {"tokens_context", t_ctx},
              {"tokens_recent", t_recent},
              {"tokens_kept", t_ctx + t_recent},
              {"tokens_history", t_hist},
              {"ratio", t_hist > 0 ? static_cast<double>(t_ctx + t_recent) / static_cast<double>(t_hist) : 1.0},
              {"llm_calls", m->llm_calls - calls_before},
              {"parse_failures", m->parse_failures}};
    json extra = m->details();  // (a temporary's items() would dangle in the range-for)
    for (auto &[key, v] : extra.items()) o[key] = v;
    out.push_back(std::move(o));
  }
  return out;
}

}  // namespace compression
