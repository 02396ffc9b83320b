#pragma once
// Agent session histories: the message format of pipelines/compression/README.md, the transcript renderer
// every compression prompt uses, and the documented token estimate.
#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace compression {

using json = nlohmann::json;

struct ToolCall {
  std::string id;
  std::string name;  // as written in the data
  json args = json::object();
};

struct Message {
  std::size_t index = 0;  // position in the whole session (0-based)
  std::string role;       // system | user | assistant | tool
  std::string content;
  std::vector<ToolCall> tool_calls;  // assistant messages
  std::string tool_call_id;          // tool results
  std::string tool_name;             // tool results (optional in the data)
  bool is_error = false;             // tool results: the tool reported an error
  std::optional<int> exit_code;      // tool results of commands
  bool failed() const { return is_error || (exit_code && *exit_code != 0); }
};

// Parses one message. Accepts our tool-call shape {"id","name","arguments":{...}} and OpenAI's
// {"id","type":"function","function":{"name","arguments":"<json text>"}}. Throws std::invalid_argument.
Message parse_message(const json &j, std::size_t index);

// Appends the messages of one dataset record (its `messages` array) to `session`, numbering them on from
// session.size(). A message's optional "index" must equal its position. Throws std::invalid_argument.
void append_messages(std::vector<Message> &session, const json &messages, const std::string &where);

// One message as transcript text:
//   [12] user: <content>
//   [13] assistant: <content>
//     -> call read_file {"path":"src/app.py"}
//   [14] tool read_file (error, exit 1): <content>
// max_tool_chars > 0 shortens tool results (and tool-call arguments) to that many characters.
std::string render_message(const Message &m, std::size_t max_tool_chars = 0);
// Messages [from, to) joined by newlines.
std::string render_transcript(const std::vector<Message> &msgs, std::size_t from, std::size_t to,
                              std::size_t max_tool_chars = 0);

// Token estimate used everywhere in the compression plugins: ceil(Unicode code points / 4).
std::size_t utf8_length(std::string_view s);
std::size_t estimate_tokens(std::string_view s);
// estimate_tokens(render_transcript(msgs, from, to)).
std::size_t transcript_tokens(const std::vector<Message> &msgs, std::size_t from, std::size_t to);

// Shortens to at most n code points, adding "…" when cut; never splits a UTF-8 sequence.
std::string truncate_utf8(const std::string &s, std::size_t n);
std::string trim(std::string_view s);
std::string lower(std::string_view s);

}  // namespace compression
