// compression.answer's work: see answering.hpp.
#include "answering.hpp"

#include "compression/session.hpp"

namespace compression {

const char *const kAnswerSystem =
    "You are the AI coding agent of the work session below. To save space, your earlier working context was "
    "compressed: all you have now is the compressed context and the most recent messages. Answer the user's "
    "question from them alone. Where they do not hold what is asked, say so instead of guessing.";

ProbeAnswers::ProbeAnswers(const json &in, const AnswerOptions &o) : o_(o) {
  const json &c = in.at("compressed");
  const json &pr = in.at("probes");
  std::string context, recent;
  method_ = o_.method, label_ = o_.label;
  tokens_history_ = pr.is_object() ? pr.value("tokens_history", json()) : json();
  if (c.is_string()) {
    context = c.get<std::string>();
    if (method_.empty()) method_ = "custom";
    tokens_kept_ = estimate_tokens(context);
  } else if (c.is_object() && c.contains("context") && c["context"].is_string()) {
    context = c["context"].get<std::string>();
    recent = c.value("recent", "");
    if (method_.empty()) method_ = c.value("method", "custom");
    if (label_.empty()) label_ = c.value("label", "");
    tokens_kept_ = c.value("tokens_kept", json(estimate_tokens(context) + estimate_tokens(recent)));
    if (c.contains("tokens_history")) tokens_history_ = c["tokens_history"];
  } else {
    throw evalgraph::InputError("'compressed' must be a compression transform's output or a text column");
  }
  if (label_.empty()) label_ = method_;
  probes_ = pr.is_object() && pr.contains("probes") ? &pr["probes"] : &pr;
  if (!probes_->is_array()) throw evalgraph::InputError("'probes' must be the probe node's output or an array of probes");

  block_ = "## Compressed context\n" + (context.empty() ? std::string("(nothing has been compressed yet)") : context) +
           "\n\n## Most recent messages\n" + (recent.empty() ? std::string("(none)") : recent);
  for (const auto &p : *probes_) {
    if (!p.is_object() || !p.contains("question") || !p["question"].is_string())
      throw evalgraph::InputError("a probe has no question");
    requests_.push_back(chat_request(kAnswerSystem, block_ + "\n\n## Question\n" + p["question"].get<std::string>(),
                                     o_.temperature, o_.max_tokens));
  }
}

json ProbeAnswers::output(const std::vector<BatchAnswer> &answers) const {
  json out = json::array();
  long answered = 0, failed = 0;
  for (std::size_t i = 0; i < answers.size(); ++i) {
    json a = {{"probe_id", (*probes_)[i].value("id", std::to_string(i + 1))}, {"answer", nullptr}};
    if (answers[i].ok) {
      a["answer"] = answers[i].text;
      ++answered;
    } else {
      a["error"] = answers[i].text;
      ++failed;
    }
    out.push_back(std::move(a));
  }
  return {{"method", method_},            {"label", label_},
          {"compacted_context", block_},  {"tokens_kept", tokens_kept_},
          {"tokens_history", tokens_history_}, {"answers", out},
          {"answered", answered},         {"failed", failed}};
}

}  // namespace compression
