#include "compression/compressor.hpp"

#include <stdexcept>

#include "compression/llm_util.hpp"

namespace compression {

const evalgraph::Params<Knobs> &knobs_params() {
  using evalgraph::param;
  static const evalgraph::Params<Knobs> p{llm_request_params(), {
    param<Knobs>(&Knobs::trigger, "trigger", "When to compress: at each checkpoint, every N messages, or every N estimated tokens").one_of({"checkpoints", "messages", "tokens"}),
    param<Knobs>(&Knobs::every, "every", "N for trigger messages/tokens (null: not set)").at_least(1).shown_default(nullptr),
    param<Knobs>(&Knobs::keep_recent, "keep_recent", "Messages kept verbatim after a compression").range(0, 100000).unit("messages"),
    param<Knobs>(&Knobs::max_tool_chars, "max_tool_chars", "Tool outputs are cut to this many characters in the summariser's prompt (0 = never)").at_least(0).unit("characters"),
  }};
  return p;
}

const Knobs &check_knobs(const Knobs &k) {
  if (k.trigger != "checkpoints" && k.every <= 0)
    throw std::invalid_argument("trigger '" + k.trigger + "' needs `every` (a positive number of " +
                                (k.trigger == "tokens" ? "tokens" : "messages") + ")");
  if (k.trigger == "checkpoints" && k.every > 0)
    throw std::invalid_argument("`every` only applies to trigger 'messages' or 'tokens'");
  return k;
}

std::string summarise(const evalgraph::Host &host, evalgraph::Call &call, const Knobs &k, const std::string &system,
                      const std::string &user) {
  json req = chat_request(system, user, k.temperature, k.max_tokens);
  json resp = host.chat(call, req, k.provider.empty() ? nullptr : k.provider.c_str());
  return chat_content(resp);
}

std::string Method::summarise(const Span &span, const std::string &user) {
  ++llm_calls;
  return compression::summarise(span.host, span.call, span.k, kSummariserSystem, user);
}

Sections Method::sections_of(const std::string &answer) {
  if (auto s = parse_sections(answer)) return *s;
  ++parse_failures;
  Sections s;
  s.current_state = trim(answer);
  return s;
}

std::vector<const char *> transform_writes(std::initializer_list<const char *> details) {
  std::vector<const char *> w{"method",         "label",          "context",       "recent",      "compressed_through",
                              "messages_total", "compressions",   "tokens_context", "tokens_recent", "tokens_kept",
                              "tokens_history", "ratio",          "llm_calls",     "parse_failures"};
  w.insert(w.end(), details);
  return w;
}

CompressionTransform::CompressionTransform(const Knobs &knobs, std::string method_id, std::string label,
                                           std::function<std::unique_ptr<Method>()> make, const evalgraph::Host &host)
    : k_(check_knobs(knobs)),
      method_(std::move(method_id)),
      label_(std::move(label)),
      make_(std::move(make)),
      host_(host) {}

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
    m->compress(Span{host_, call, k_, msgs, boundary, nb});
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
