// What an LLM span says went in and came out, under each convention (docs/traces.md "Where each field comes
// from"): OpenTelemetry GenAI attributes (gen_ai.input.messages ...) and events (gen_ai.user.message ...,
// gen_ai.choice, gen_ai.client.inference.operation.details), OpenLLMetry's gen_ai.prompt.N.* and
// gen_ai.completion.N.*, and OpenInference's llm.input_messages.N.message.*.
#include <array>
#include <charconv>

#include "io/otlp_internal.h"

namespace evalgraph::io::otlp {

namespace {

// Attributes "<prefix><i>.<rest>" grouped by i, in index order.
using Indexed = std::map<int, std::vector<std::pair<std::string_view, const Attr *>>>;

bool split_index(std::string_view s, int &index, std::string_view &rest) {
  std::size_t dot = s.find('.');
  std::string_view num = s.substr(0, dot);
  if (num.empty() || std::from_chars(num.data(), num.data() + num.size(), index).ec != std::errc() || index < 0)
    return false;
  rest = dot == std::string_view::npos ? std::string_view() : s.substr(dot + 1);
  return true;
}

Indexed indexed(const std::vector<Attr> &attrs, std::string_view prefix) {
  Indexed out;
  for (const auto &a : attrs) {
    if (a.key.size() <= prefix.size() || a.key.compare(0, prefix.size(), prefix) != 0) continue;
    int i = 0;
    std::string_view rest;
    if (split_index(a.key.substr(prefix.size()), i, rest)) out[i].emplace_back(rest, &a);
  }
  return out;
}

std::string text_of(const Attr *a, Decode &d) {
  bool bad = false;
  std::string s = any_string(a->value, bad);
  d.note_bad(bad);
  return s;
}

}  // namespace

std::string content_text(const json &v) {
  if (v.is_string()) {
    const std::string &text = v.get_ref<const std::string &>();
    std::size_t i = text.find_first_not_of(" \t\r\n");
    if (i == std::string::npos || (text[i] != '{' && text[i] != '[')) return text;  // no JSON text (the usual)
    json parsed = maybe_parsed(v);
    if (!parsed.is_array()) return v.get<std::string>();
    return content_text(parsed);
  }
  std::string out;
  if (v.is_array()) {
    for (const auto &part : v) {
      if (part.is_string()) out += part.get<std::string>();
      if (!part.is_object()) continue;
      std::string type = part.value("type", "text");
      if (type != "text" && type != "input_text" && type != "output_text") continue;
      for (const char *k : {"text", "content"})
        if (auto it = part.find(k); it != part.end() && it->is_string()) out += it->get<std::string>();
    }
  } else if (!v.is_null()) {
    out = v.dump(-1, ' ', false, json::error_handler_t::replace);
  }
  return out;
}

namespace {

// Tool calls written as "<base>tool_calls.<j>.<rest>" keys (OpenLLMetry: name/arguments/id; OpenInference:
// tool_call.function.name/arguments, tool_call.id).
void indexed_tool_calls(const std::vector<std::pair<std::string_view, const Attr *>> &fields, std::string_view base,
                        Msg &m, Decode &d) {
  std::map<int, std::array<std::string, 3>> calls;  // id, name, arguments
  for (const auto &[rest, a] : fields) {
    if (rest.compare(0, base.size(), base) != 0) continue;
    int j = 0;
    std::string_view sub;
    if (!split_index(rest.substr(base.size()), j, sub)) continue;
    if (sub.rfind("tool_call.", 0) == 0) sub.remove_prefix(10);
    if (sub.rfind("function.", 0) == 0) sub.remove_prefix(9);
    if (sub == "id")
      calls[j][0] = text_of(a, d);
    else if (sub == "name")
      calls[j][1] = text_of(a, d);
    else if (sub == "arguments")
      calls[j][2] = text_of(a, d);
  }
  for (auto &[j, c] : calls) m.tool_calls.push_back(tool_call_json(c[0], c[1], c[2].empty() ? json() : json(c[2])));
}

// OpenLLMetry: gen_ai.prompt.<i>.role/content/tool_call_id/tool_calls.<j>.*; OpenInference (with `oi`):
// llm.input_messages.<i>.message.role/content/contents.<j>.message_content.text/tool_calls.<j>.tool_call.*.
std::vector<Msg> indexed_messages(const Indexed &idx, bool oi, Decode &d) {
  std::vector<Msg> out;
  for (const auto &[i, fields] : idx) {
    Msg m;
    std::map<int, std::string> parts;
    for (const auto &[full, a] : fields) {
      std::string_view rest = full;
      if (oi && rest.rfind("message.", 0) == 0) rest.remove_prefix(8);
      if (rest == "role")
        m.role = text_of(a, d);
      else if (rest == "content")
        m.content = content_text(json(text_of(a, d)));
      else if (rest == "tool_call_id")
        m.tool_call_id = text_of(a, d);
      else if (rest == "name")
        m.name = text_of(a, d);
      else if (rest == "finish_reason")
        m.finish_reason = text_of(a, d);
      else if (rest == "function_call.name")
        m.tool_calls.push_back(tool_call_json("", text_of(a, d), json()));
      else if (rest == "function_call.arguments" && !m.tool_calls.empty())
        m.tool_calls.back()["arguments"] = maybe_parsed(json(text_of(a, d)));
      else if (rest.rfind("contents.", 0) == 0 && rest.size() > 9) {
        int j = 0;
        std::string_view sub;
        if (split_index(rest.substr(9), j, sub) && sub == "message_content.text") parts[j] += text_of(a, d);
      }
    }
    for (const auto &[j, t] : parts) m.content += t;
    std::vector<std::pair<std::string_view, const Attr *>> stripped;
    for (const auto &[full, a] : fields)
      stripped.emplace_back(oi && full.rfind("message.", 0) == 0 ? full.substr(8) : full, a);
    indexed_tool_calls(stripped, "tool_calls.", m, d);
    out.push_back(std::move(m));
  }
  return out;
}

void add_system(LlmCall &call, const std::vector<Msg> &msgs) {
  for (const auto &m : msgs)
    if ((m.role == "system" || m.role == "developer") && !m.content.empty()) call.system.push_back(m.content);
}

void read_tools_json(const json &v, json &tools) {
  json parsed = maybe_parsed(v);
  if (parsed.is_object()) parsed = json::array({parsed});
  if (!parsed.is_array()) return;
  for (const auto &t : parsed) {
    if (!t.is_object()) continue;
    const json &f = t.contains("function") && t["function"].is_object() ? t["function"] : t;
    json tool = {{"name", string_member(f, "name")}, {"description", string_member(f, "description")}};
    if (auto it = f.find("parameters"); it != f.end()) tool["parameters"] = maybe_parsed(*it);
    tools.push_back(std::move(tool));
  }
}

void read_openinference(const Piece &s, LlmCall &call, Decode &d) {
  call.input = indexed_messages(indexed(s.attrs, "llm.input_messages."), true, d);
  call.output = indexed_messages(indexed(s.attrs, "llm.output_messages."), true, d);
  for (const auto &[i, fields] : indexed(s.attrs, "llm.tools."))
    for (const auto &[rest, a] : fields)
      if (rest == "tool.json_schema") read_tools_json(json(text_of(a, d)), call.tools);
  if (auto v = attr_int(s, "llm.token_count.prompt", d)) call.usage["input_tokens"] = *v;
  if (auto v = attr_int(s, "llm.token_count.completion", d)) call.usage["output_tokens"] = *v;
  if (auto v = attr_int(s, "llm.token_count.total", d)) call.usage["total_tokens"] = *v;
  if (call.model.empty()) call.model = attr_text(s, "llm.model_name", d);
}

void read_openllmetry(const Piece &s, LlmCall &call, Decode &d) {
  call.input = indexed_messages(indexed(s.attrs, "gen_ai.prompt."), false, d);
  call.output = indexed_messages(indexed(s.attrs, "gen_ai.completion."), false, d);
  for (const auto &[i, fields] : indexed(s.attrs, "llm.request.functions.")) {
    json tool = {{"name", ""}, {"description", ""}};
    for (const auto &[rest, a] : fields) {
      if (rest == "name" || rest == "description")
        tool[std::string(rest)] = text_of(a, d);
      else if (rest == "parameters")
        tool["parameters"] = maybe_parsed(json(text_of(a, d)));
    }
    call.tools.push_back(std::move(tool));
  }
}

// GenAI events: log records linked to the span, and the span's own events.
void read_genai_event(const std::string &name, const json &body, const Piece &ev, LlmCall &call, Decode &d) {
  if (name == "gen_ai.client.inference.operation.details") {
    for (const auto &m : json_messages(attr_json(ev, "gen_ai.input.messages", d))) call.input.push_back(m);
    for (const auto &m : json_messages(attr_json(ev, "gen_ai.output.messages", d))) call.output.push_back(m);
    json si = attr_json(ev, "gen_ai.system_instructions", d);
    if (!si.is_null()) call.system.push_back(content_text(maybe_parsed(si)));
    return;
  }
  const json obj = body.is_object() ? body : json{{"content", body}};
  if (name == "gen_ai.choice") {
    json msg = obj.contains("message") && obj["message"].is_object() ? obj["message"] : obj;
    Msg m = message_from_json(msg);
    if (m.role.empty()) m.role = "assistant";
    if (obj.contains("finish_reason") && obj["finish_reason"].is_string()) m.finish_reason = obj["finish_reason"];
    call.output.push_back(std::move(m));
    return;
  }
  static const std::map<std::string, std::string, std::less<>> roles = {{"gen_ai.system.message", "system"},
                                                                        {"gen_ai.user.message", "user"},
                                                                        {"gen_ai.assistant.message", "assistant"},
                                                                        {"gen_ai.tool.message", "tool"}};
  auto it = roles.find(name);
  if (it == roles.end()) return;
  Msg m = message_from_json(obj);
  if (m.role.empty()) m.role = it->second;
  if (m.role == "tool" && m.tool_call_id.empty() && obj.contains("id") && obj["id"].is_string())
    m.tool_call_id = obj["id"];
  call.input.push_back(std::move(m));
}

void read_genai(const Piece &s, const std::vector<const Piece *> &logs, LlmCall &call, Decode &d) {
  for (const auto &m : json_messages(attr_json(s, "gen_ai.input.messages", d))) call.input.push_back(m);
  for (const auto &m : json_messages(attr_json(s, "gen_ai.output.messages", d))) call.output.push_back(m);
  json si = attr_json(s, "gen_ai.system_instructions", d);
  if (!si.is_null()) call.system.push_back(content_text(maybe_parsed(si)));
  read_tools_json(attr_json(s, "gen_ai.tool.definitions", d), call.tools);
  for (const Piece *log : logs) {
    bool bad = false;
    json body = log->body.empty() ? json() : any_value(log->body, bad);
    d.note_bad(bad);
    read_genai_event(log->name, body, *log, call, d);
  }
  for (const auto &ev : s.events) {  // the oldest form: span events holding the prompt/completion as JSON text
    Piece holder;
    holder.attrs = ev.attrs;
    if (ev.name == "gen_ai.content.prompt")
      for (const auto &m : json_messages(attr_json(holder, "gen_ai.prompt", d))) call.input.push_back(m);
    else if (ev.name == "gen_ai.content.completion")
      for (const auto &m : json_messages(attr_json(holder, "gen_ai.completion", d))) call.output.push_back(m);
    else
      read_genai_event(ev.name, json(), holder, call, d);
  }
}

void read_usage(const Piece &s, LlmCall &call, Decode &d) {
  auto take = [&](const char *field, std::initializer_list<const char *> keys) {
    if (call.usage.contains(field)) return;
    for (const char *k : keys)
      if (auto v = attr_int(s, k, d)) {
        call.usage[field] = *v;
        return;
      }
  };
  take("input_tokens", {"gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens", "llm.usage.prompt_tokens"});
  take("output_tokens",
       {"gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens", "llm.usage.completion_tokens"});
  take("total_tokens", {"llm.usage.total_tokens", "gen_ai.usage.total_tokens"});
}

}  // namespace

json tool_call_json(const std::string &id, const std::string &name, json arguments) {
  json call = {{"id", id}, {"name", name}, {"arguments", maybe_parsed(std::move(arguments))}};
  return call;
}

void apply_part(const json &p, Msg &out) {
  if (!p.is_object()) return;
  std::string type = string_member(p, "type");
  if (type == "text")
    out.content += content_text(p.value("content", json()));
  else if (type == "tool_call")
    out.tool_calls.push_back(
        tool_call_json(string_member(p, "id"), string_member(p, "name"), p.value("arguments", json())));
  else if (type == "tool_call_response") {
    out.tool_call_id = string_member(p, "id");
    json r = p.contains("response") ? p["response"] : p.value("result", json());
    out.content += r.is_string() ? r.get<std::string>() : r.is_null() ? "" : r.dump();
  }
}

void append_tool_calls(const json &calls, Msg &out) {
  if (!calls.is_array()) return;
  for (const auto &tc : calls) {
    if (!tc.is_object()) continue;
    const json &f = tc.contains("function") && tc["function"].is_object() ? tc["function"] : tc;
    out.tool_calls.push_back(
        tool_call_json(string_member(tc, "id"), string_member(f, "name"), f.value("arguments", json())));
  }
}

Msg message_from_json(const json &m) {
  Msg out;
  auto str = [&](const char *k) { return m.contains(k) && m[k].is_string() ? m[k].get<std::string>() : std::string(); };
  out.role = str("role");
  out.name = str("name");
  out.tool_call_id = str("tool_call_id");
  out.finish_reason = str("finish_reason");
  if (m.contains("content")) out.content = content_text(m["content"]);
  if (auto it = m.find("parts"); it != m.end() && it->is_array())
    for (const auto &p : *it) apply_part(p, out);
  if (auto it = m.find("tool_calls"); it != m.end()) append_tool_calls(*it, out);
  return out;
}

LlmCall read_llm_call(const Piece &span, const std::vector<const Piece *> &logs, Decode &d) {
  LlmCall call;
  call.span = &span;
  call.model = attr_text(span, "gen_ai.response.model", d);
  if (call.model.empty()) call.model = attr_text(span, "gen_ai.request.model", d);
  bool oi = find_attr(span.attrs, "openinference.span.kind") != nullptr;
  bool oll = false;
  for (const auto &a : span.attrs) {
    if (a.key.rfind("llm.input_messages.", 0) == 0 || a.key.rfind("llm.output_messages.", 0) == 0) oi = true;
    if (a.key.rfind("gen_ai.prompt.", 0) == 0 || a.key.rfind("gen_ai.completion.", 0) == 0) oll = true;
  }
  if (oi) {
    call.convention = "openinference";
    read_openinference(span, call, d);
  } else if (oll) {
    call.convention = "openllmetry";
    read_openllmetry(span, call, d);
  } else {
    call.convention = "genai";
    read_genai(span, logs, call, d);
  }
  add_system(call, call.input);
  read_usage(span, call, d);
  if (call.input.empty() && call.output.empty()) d.count("LLM span without message content (capture of content off?)");
  return call;
}

}  // namespace evalgraph::io::otlp
