#include "compression/session.hpp"

#include <stdexcept>

#include "evalgraph/json_bounded.hpp"

namespace compression {

namespace {
std::string str_field(const json &j, const char *k) {
  auto it = j.find(k);
  if (it == j.end() || it->is_null()) return {};
  if (it->is_string()) return it->get<std::string>();
  return it->dump();
}
}  // namespace

std::string trim(std::string_view s) {
  std::size_t a = 0, b = s.size();
  while (a < b && (s[a] == ' ' || s[a] == '\t' || s[a] == '\n' || s[a] == '\r')) ++a;
  while (b > a && (s[b - 1] == ' ' || s[b - 1] == '\t' || s[b - 1] == '\n' || s[b - 1] == '\r')) --b;
  return std::string(s.substr(a, b - a));
}

std::string lower(std::string_view s) {
  std::string o(s);
  for (char &c : o)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return o;
}

Message parse_message(const json &j, std::size_t index) {
  if (!j.is_object()) throw std::invalid_argument("message " + std::to_string(index) + " is not a JSON object");
  Message m;
  m.index = index;
  m.role = str_field(j, "role");
  if (m.role != "system" && m.role != "user" && m.role != "assistant" && m.role != "tool")
    throw std::invalid_argument("message " + std::to_string(index) + " has role '" + m.role +
                                "'; expected system, user, assistant or tool");
  if (auto it = j.find("content"); it != j.end() && !it->is_null()) {
    if (it->is_string()) {
      m.content = it->get<std::string>();
    } else if (it->is_array()) {  // OpenAI content parts
      for (const auto &part : *it)
        if (part.is_object() && part.value("type", "") == "text") m.content += part.value("text", "");
    } else {
      m.content = it->dump();
    }
  }
  if (auto it = j.find("tool_calls"); it != j.end() && it->is_array()) {
    for (const auto &c : *it) {
      if (!c.is_object()) throw std::invalid_argument("message " + std::to_string(index) + ": a tool call is not an object");
      ToolCall tc;
      tc.id = str_field(c, "id");
      const json *args = nullptr;
      if (auto f = c.find("function"); f != c.end() && f->is_object()) {
        tc.name = str_field(*f, "name");
        if (auto a = f->find("arguments"); a != f->end()) args = &*a;
      } else {
        tc.name = str_field(c, "name");
        if (auto a = c.find("arguments"); a != c.end()) args = &*a;
      }
      if (tc.name.empty()) throw std::invalid_argument("message " + std::to_string(index) + ": a tool call has no name");
      if (args != nullptr) {
        if (args->is_string()) {
          json parsed;  // (bounded: arguments nested absurdly deep are kept as text, never dumped as JSON)
          const bool ok = evalgraph::parse_bounded(args->get<std::string>(), parsed, evalgraph::kDefaultNestingDepth);
          tc.args = ok ? parsed : json{{"raw", args->get<std::string>()}};
        } else if (args->is_object()) {
          tc.args = *args;
        }
      }
      m.tool_calls.push_back(std::move(tc));
    }
  }
  m.tool_call_id = str_field(j, "tool_call_id");
  m.tool_name = str_field(j, "name");
  if (auto it = j.find("is_error"); it != j.end() && it->is_boolean()) m.is_error = it->get<bool>();
  if (auto it = j.find("exit_code"); it != j.end() && it->is_number_integer()) m.exit_code = it->get<int>();
  return m;
}

void append_messages(std::vector<Message> &session, const json &messages, const std::string &where) {
  if (!messages.is_array()) throw std::invalid_argument(where + ": 'messages' must be a JSON array");
  for (const auto &j : messages) {
    std::size_t idx = session.size();
    Message m;
    try {
      m = parse_message(j, idx);
    } catch (const std::invalid_argument &e) {
      throw std::invalid_argument(where + ": " + e.what());
    }
    if (auto it = j.find("index"); it != j.end() && it->is_number_integer() && it->get<long long>() != static_cast<long long>(idx))
      throw std::invalid_argument(where + ": message has index " + std::to_string(it->get<long long>()) +
                                  " but is message " + std::to_string(idx) +
                                  " of its session (records must hold consecutive spans, ordered by checkpoint)");
    session.push_back(std::move(m));
  }
}

std::size_t utf8_length(std::string_view s) {
  std::size_t n = 0;
  for (unsigned char c : s)
    if ((c & 0xC0) != 0x80) ++n;
  return n;
}

std::size_t estimate_tokens(std::string_view s) { return (utf8_length(s) + 3) / 4; }

std::string truncate_utf8(const std::string &s, std::size_t n) {
  if (utf8_length(s) <= n) return s;
  std::size_t cps = 0, i = 0;
  for (; i < s.size(); ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80) {
      if (cps == n) break;
      ++cps;
    }
  }
  return s.substr(0, i) + "…";
}

std::string render_message(const Message &m, std::size_t max_tool_chars) {
  auto cut = [&](const std::string &s) { return max_tool_chars > 0 ? truncate_utf8(s, max_tool_chars) : s; };
  std::string out = "[" + std::to_string(m.index) + "] ";
  if (m.role == "tool") {
    out += "tool";
    if (!m.tool_name.empty()) out += " " + m.tool_name;
    std::string flags;
    if (m.is_error) flags = "error";
    if (m.exit_code) flags += (flags.empty() ? "" : ", ") + std::string("exit ") + std::to_string(*m.exit_code);
    if (!flags.empty()) out += " (" + flags + ")";
    out += ": " + cut(m.content);
  } else {
    out += m.role + ": " + m.content;
    for (const auto &c : m.tool_calls) out += "\n  -> call " + c.name + " " + cut(c.args.dump());
  }
  return out;
}

std::string render_transcript(const std::vector<Message> &msgs, std::size_t from, std::size_t to, std::size_t max_tool_chars) {
  std::string s;
  for (std::size_t i = from; i < to && i < msgs.size(); ++i) {
    if (i > from) s += "\n";
    s += render_message(msgs[i], max_tool_chars);
  }
  return s;
}

std::size_t transcript_tokens(const std::vector<Message> &msgs, std::size_t from, std::size_t to) {
  return estimate_tokens(render_transcript(msgs, from, to));
}

}  // namespace compression
