#pragma once
// The state machine the three compression transforms share. A sequence node gets the checkpoint records of
// one session in order; it rebuilds the history span by span, compresses when the trigger says so, and
// writes, per checkpoint, the compressed context plus the messages kept verbatim.
//
// Knobs (the same for every method):
//   trigger: checkpoints (default) — compress at each checkpoint (end of a record's span) down to the last
//            keep_recent messages; messages — whenever `every` messages beyond the verbatim window have
//            accumulated; tokens — whenever the uncompressed messages reach `every` estimated tokens.
//   keep_recent: messages that stay verbatim after a compression (default 8).
//   max_tool_chars: tool results and tool-call arguments are cut to this many characters in the prompts
//            (default 2000; 0 = never); the verbatim window and the token counts use the full text.
//   provider, temperature (default 0), max_tokens (default: not sent).
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "compression/llm_params.hpp"
#include "compression/session.hpp"
#include "compression/summary.hpp"
#include "evalgraph/plugin.hpp"

namespace compression {

struct Knobs : LlmRequest {
  std::string trigger = "checkpoints";
  long long every = 0;
  long long keep_recent = 8;
  std::size_t max_tool_chars = 2000;
};
// The knobs, checked: std::invalid_argument where they do not fit together (e.g. trigger messages without every).
const Knobs &check_knobs(const Knobs &k);
// A compression transform's parameters (the knobs), declared once.
const evalgraph::Params<Knobs> &knobs_params();

// One compression: messages [from, to) of the session go (from = the previous boundary; [0, from) is already
// compressed), asked of the summariser through the host.
struct Span {
  const evalgraph::Host &host;
  evalgraph::Call &call;
  const Knobs &k;
  const std::vector<Message> &msgs;
  std::size_t from, to;
  // Messages [start, to) as the summariser's prompt shows them (tool outputs cut to k.max_tool_chars).
  std::string transcript(std::size_t start) const { return render_transcript(msgs, start, to, k.max_tool_chars); }
};

// One compression method. A fresh instance handles one session.
class Method {
 public:
  virtual ~Method() = default;
  virtual void compress(const Span &span) = 0;
  virtual std::string context() const = 0;    // the compressed context ("" before the first compression)
  virtual json details() const { return json::object(); }  // extra output fields
  long long llm_calls = 0;
  long long parse_failures = 0;  // summariser answers that were not the JSON asked for (kept as text)

 protected:
  // The summariser's answer to `user` (with the summariser's system prompt), counted in llm_calls.
  std::string summarise(const Span &span, const std::string &user);
  // The summariser's answer as sections; an answer that is not the JSON asked for is counted in parse_failures
  // and kept, trimmed, as the current state.
  Sections sections_of(const std::string &answer);
};

// A method whose context is a sectioned summary (compression.anchored, compression.regenerative): none before the
// first compression, then the sections, rendered with the method's artifact list where it keeps one.
class SectionedMethod : public Method {
 public:
  std::string context() const override { return started_ ? render_sections(sections_, artifacts()) : std::string(); }

 protected:
  virtual const std::vector<FileFacts> *artifacts() const { return nullptr; }
  bool started_ = false;  // set by the first compression
  Sections sections_;
};

// Calls the summariser: system prompt + user prompt, returns the answer text.
std::string summarise(const evalgraph::Host &host, evalgraph::Call &call, const Knobs &k, const std::string &system,
                      const std::string &user);

// The records stay a DOM: each holds its span of `messages` (nested tool calls and results) that the methods
// read whole and the node passes on in its transcripts.
class CompressionTransform : public evalgraph::Node {
 public:
  CompressionTransform(const Knobs &knobs, std::string method_id, std::string label,
                       std::function<std::unique_ptr<Method>()> make, const evalgraph::Host &host);
  json process_sequence(evalgraph::Call &call, const json &records) override;
  json process(evalgraph::Call &call, const json &record) override;

 private:
  Knobs k_;
  std::string method_, label_;
  std::function<std::unique_ptr<Method>()> make_;
  evalgraph::Host host_;
};

// The transform of method M; a fresh M handles each session.
template <class M> class MethodTransform : public CompressionTransform {
 public:
  static inline const char *id = nullptr, *label = nullptr;  // the method's, in every output (set by transform_type)
  MethodTransform(const evalgraph::Host &h, const Knobs &k)
      : CompressionTransform(
            k, id, label, [] { return std::make_unique<M>(); }, h) {}
};

// What every compression transform writes; the node type of method M's adds M::details()' keys.
std::vector<const char *> transform_writes(std::initializer_list<const char *> details);
// What a compression method declares, by field name: its node type's name and description, the id and label its
// outputs name it by, and the keys of M::details().
struct MethodType {
  const char *name;
  const char *method_id;
  const char *label;
  const char *description;
  std::initializer_list<const char *> details = {};
};
// The node type of method M.
template <class M> eg_node_type transform_type(const MethodType &m) {
  MethodTransform<M>::id = m.method_id;
  MethodTransform<M>::label = m.label;
  const std::vector<const char *> writes = transform_writes(m.details);
  return evalgraph::node_type<MethodTransform<M>>({.kind = EG_KIND_TRANSFORM,
                                                   .name = m.name,
                                                   .description = m.description,
                                                   .reads = {"messages"},
                                                   .writes = std::vector<evalgraph::Output>(writes.begin(), writes.end()),
                                                   .flags = EG_FLAG_SEQUENCE | EG_FLAG_USES_LLM,
                                                   .params = knobs_params()});
}

}  // namespace compression
