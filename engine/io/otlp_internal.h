#pragma once
// Internal to the trace reader's mapping (otlp_piece.cpp, otlp_messages.cpp, otlp_mapping.cpp).
#include <optional>

#include "io/otlp_mapping.h"
#include "io/otlp_scan.h"

namespace evalgraph::io::otlp {

using json = nlohmann::json;

// Decoding state shared by one trace's mapping: counts, and whether a text had bytes that are not UTF-8.
struct Decode {
  Counts &counts;
  void count(const std::string &reason, std::uint64_t n = 1) { counts[reason] += n; }
  void note_bad(bool bad) {
    if (bad) count("text with bytes that are not UTF-8 (replaced by U+FFFD)");
  }
};

const Attr *find_attr(const std::vector<Attr> &attrs, std::string_view key);
// An attribute's value as JSON (null when absent).
json attr_json(const Piece &p, std::string_view key, Decode &d);
// An attribute's value as text ("" when absent).
std::string attr_text(const Piece &p, std::string_view key, Decode &d);
std::optional<std::int64_t> attr_int(const Piece &p, std::string_view key, Decode &d);
// A value that may be JSON written as a string (gen_ai.input.messages, tool arguments): parsed when it is.
json maybe_parsed(json v);
// The string member `key` of a JSON value from a trace; "" where the value is no object, has no such member or
// holds something other than a string there (a trace's JSON is the instrumentation's, of any shape).
std::string string_member(const json &o, const char *key);

// One message of a conversation.
struct Msg {
  std::string role, content, tool_call_id, name;
  json tool_calls = json::array();  // [{id, name, arguments}]
  std::string finish_reason;
};

// One LLM span: what went in and came out.
struct LlmCall {
  const Piece *span = nullptr;
  std::string convention;  // "genai", "openllmetry", "openinference", "mapping"
  std::string model;
  std::vector<std::string> system;  // system instructions (system messages, gen_ai.system_instructions)
  std::vector<Msg> input, output;
  json tools = json::array();   // [{name, description, parameters}]
  json usage = json::object();  // input_tokens, output_tokens, total_tokens
};

// Reads an LLM span under every convention it carries; `logs` are the log records (and the span's own
// events count too) that belong to it.
LlmCall read_llm_call(const Piece &span, const std::vector<const Piece *> &logs, Decode &d);

// A message from JSON in any of the shapes instrumentations write (GenAI parts, OpenAI chat messages).
Msg message_from_json(const json &m);
// A content value's text: a string, or parts [{type: text, text|content}] (possibly written as JSON text).
std::string content_text(const json &v);
// One GenAI part of a message (text, tool_call, tool_call_response) added to `out`; others are ignored.
void apply_part(const json &part, Msg &out);
// OpenAI chat tool calls [{id, function: {name, arguments}}] added to `out`.
void append_tool_calls(const json &calls, Msg &out);
// Messages given as JSON (gen_ai.input.messages / output.messages, as a string or as structured AnyValue);
// otlp_message_text.cpp reads the usual form, a string holding a JSON array, without building a DOM.
std::vector<Msg> json_messages(const json &v);
// A tool call {id, name, arguments} from GenAI/OpenAI shapes; arguments parsed when they are JSON text.
json tool_call_json(const std::string &id, const std::string &name, json arguments);

// ---- otlp_mapping.cpp: the pieces of a record ----
enum class Role { other, llm, retriever, tool };
Role classify(const Piece &s, const Mapping &m, bool has_genai_logs, Decode &d);
std::string iso_time(std::int64_t ns);                       // 2025-01-02T03:04:05.678Z; "" for 0
void read_documents(const Piece &s, json &docs, Decode &d);  // appends {id, text, score}
json tool_span_call(const Piece &s, Decode &d);
// tool_calls of a record: what the model asked for (outputs, and the history since the last user message),
// completed by the tool spans that ran them (matched by call id, else by name) and the tool messages' results.
json assemble_tool_calls(const std::vector<const LlmCall *> &calls, const std::vector<const Piece *> &tool_spans,
                         Decode &d);
std::string tool_profile(const json &tools);  // "name(param, ...): description" per line

}  // namespace evalgraph::io::otlp
