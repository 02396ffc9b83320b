// json_messages(): a conversation's messages from JSON. The usual form, a string attribute holding a JSON array
// (gen_ai.input.messages / output.messages), is read from its text with the reader's cursor, without building a
// DOM: the text is checked as strictly as before (rawjson::valid, which the DOM was built after), then each
// message's members are looked at where they lie. A message or part in a shape this does not read directly (a
// content that is no plain string, a tool_call_response, escapes in a key...) is built as a DOM and read by the
// same code as before (message_from_json, apply_part), so the messages are the same either way.
#include "io/otlp_internal.h"
#include "util/json_build.h"
#include "util/raw_json.h"

namespace evalgraph::io::otlp {

namespace {

// The members of one object that are looked at: the value text of each wanted key (as the DOM keeps it, the
// last one where a key repeats). False when a key has an escape (its name is then only known decoded).
template <std::size_t N>
bool find_members(std::string_view object, const char *const (&keys)[N], std::string_view (&values)[N]) {
  Cursor c(object);
  std::string_view k;
  c.begin_object();
  while (c.next_member(k)) {
    if (k.find('\\') != std::string_view::npos) return false;
    std::string_view v = c.skip();
    for (std::size_t i = 0; i < N; ++i)
      if (k == keys[i]) values[i] = v;
  }
  return true;
}

bool is_string(std::string_view v) { return !v.empty() && v[0] == '"'; }

// A string value's text (the text was checked: valid UTF-8, escapes well formed).
std::string string_of(std::string_view v) {
  bool bad = false;
  return unescape(v.substr(1, v.size() - 2), bad);
}

// As content_text() for a plain string (one that is no JSON text) and for null: false for any other value.
bool plain_content(std::string_view v, std::string &out) {
  if (v.empty() || v == "null") return true;
  if (!is_string(v)) return false;
  std::string s = string_of(v);
  std::size_t i = s.find_first_not_of(" \t\r\n");
  if (i != std::string::npos && (s[i] == '{' || s[i] == '[')) return false;
  out += s;
  return true;
}

// As value(key, "") for a string member: false when the member is there but no string (value() would throw).
bool string_member(std::string_view v, std::string &out) {
  if (v.empty()) return true;
  if (!is_string(v)) return false;
  out = string_of(v);
  return true;
}

// A GenAI part read as apply_part() does, for text and tool_call parts; false to leave it to apply_part().
bool part_from_text(std::string_view part, Msg &out) {
  static const char *const kKeys[] = {"type", "content", "id", "name", "arguments"};
  std::string_view v[5];
  std::string type;
  if (!find_members(part, kKeys, v) || !string_member(v[0], type)) return false;
  if (type == "text") return plain_content(v[1], out.content);
  if (type == "tool_call_response") return false;
  if (type != "tool_call") return true;
  std::string id, name;
  if (!string_member(v[2], id) || !string_member(v[3], name)) return false;
  out.tool_calls.push_back(tool_call_json(id, name, v[4].empty() ? json() : rawjson::parse(v[4])));
  return true;
}

// A message read as message_from_json() does; false to leave it to message_from_json().
bool message_from_text(std::string_view text, Msg &out) {
  static const char *const kKeys[] = {"role",    "name",  "tool_call_id", "finish_reason",
                                      "content", "parts", "tool_calls"};
  std::string_view v[7];
  if (!find_members(text, kKeys, v)) return false;
  std::string *fields[] = {&out.role, &out.name, &out.tool_call_id, &out.finish_reason};
  for (std::size_t i = 0; i < 4; ++i)
    if (is_string(v[i])) *fields[i] = string_of(v[i]);
  if (!plain_content(v[4], out.content)) return false;
  if (!v[5].empty() && v[5][0] == '[') {
    Cursor c(v[5]);
    c.begin_array();
    while (c.next_element()) {
      const bool object = c.peek() == '{';
      std::string_view part = c.skip();
      if (object && !part_from_text(part, out)) apply_part(rawjson::parse(part), out);
    }
  }
  if (!v[6].empty()) append_tool_calls(rawjson::parse(v[6]), out);
  return true;
}

}  // namespace

std::vector<Msg> json_messages(const json &v) {
  std::vector<Msg> out;
  const std::string *text = v.is_string() ? &v.get_ref<const std::string &>() : nullptr;
  std::size_t i = text != nullptr ? text->find_first_not_of(" \t\r\n") : std::string::npos;
  if (i != std::string::npos && (*text)[i] == '[') {
    if (!rawjson::valid(*text)) return out;  // (kept as a string: no messages)
    Cursor c(*text);
    c.begin_array();
    while (c.next_element()) {
      if (c.peek() != '{') {
        c.skip();
        continue;
      }
      std::string_view m = c.skip();
      Msg msg;
      if (!message_from_text(m, msg)) msg = message_from_json(rawjson::parse(m));
      out.push_back(std::move(msg));
    }
    return out;
  }
  json parsed = maybe_parsed(v);
  if (!parsed.is_array()) return out;
  for (const auto &m : parsed)
    if (m.is_object()) out.push_back(message_from_json(m));
  return out;
}

}  // namespace evalgraph::io::otlp
