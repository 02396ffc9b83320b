// A trace becomes a record (or one per LLM call): the spans are classified (LLM, retriever, tool), the LLM
// calls read under their convention (otlp_messages.cpp), and the record's fields assembled: the final answer,
// the conversation, the documents retrieved, the tools offered and called, usage, time, session, evaluations.
#include <algorithm>
#include <ctime>
#include <set>
#include <unordered_map>

#include "io/otlp_internal.h"

namespace evalgraph::io::otlp {

namespace {

bool any_glob(const std::vector<std::string> &patterns, std::string_view name) {
  return std::any_of(patterns.begin(), patterns.end(), [&](const std::string &p) { return glob_match(p, name); });
}

bool has_prefix_attr(const Piece &s, std::string_view prefix) {
  return std::any_of(s.attrs.begin(), s.attrs.end(), [&](const Attr &a) { return a.key.rfind(prefix, 0) == 0; });
}

}  // namespace

Role classify(const Piece &s, const Mapping &m, bool has_genai_logs, Decode &d) {
  if (any_glob(m.llm_spans, s.name)) return Role::llm;
  if (any_glob(m.retriever_spans, s.name)) return Role::retriever;
  if (any_glob(m.tool_spans, s.name)) return Role::tool;
  const std::string oi = attr_text(s, "openinference.span.kind", d);
  if (!oi.empty())
    return oi == "LLM" ? Role::llm : oi == "RETRIEVER" ? Role::retriever : oi == "TOOL" ? Role::tool : Role::other;
  const std::string op = attr_text(s, "gen_ai.operation.name", d);
  if (op == "chat" || op == "text_completion" || op == "generate_content" || op == "completion") return Role::llm;
  if (op == "execute_tool") return Role::tool;
  if (op == "retrieval") return Role::retriever;
  const std::string tl = attr_text(s, "traceloop.span.kind", d);
  if (tl == "tool") return Role::tool;
  if (tl == "task" && attr_text(s, "traceloop.entity.name", d).find("retriev") != std::string::npos)
    return Role::retriever;
  const std::string req = attr_text(s, "llm.request.type", d);
  if (req == "chat" || req == "completion") return Role::llm;
  if (has_prefix_attr(s, "gen_ai.prompt.") || has_prefix_attr(s, "gen_ai.completion.") ||
      has_prefix_attr(s, "llm.input_messages.") || find_attr(s.attrs, "gen_ai.input.messages") != nullptr)
    return Role::llm;
  if (find_attr(s.attrs, "gen_ai.retrieval.documents") != nullptr || has_prefix_attr(s, "retrieval.documents."))
    return Role::retriever;
  if (has_genai_logs && op.empty() && op != "embeddings") return Role::llm;
  return Role::other;
}

std::string iso_time(std::int64_t ns) {
  if (ns <= 0) return "";
  std::time_t secs = static_cast<std::time_t>(ns / 1000000000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[40];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  char out[48];
  std::snprintf(out, sizeof out, "%s.%03dZ", buf, static_cast<int>((ns / 1000000) % 1000));
  return out;
}

// Documents of a retriever span: OpenInference retrieval.documents.N.document.*, GenAI gen_ai.retrieval.documents,
// or (OpenLLMetry tasks) the JSON of traceloop.entity.output.
void read_documents(const Piece &s, json &docs, Decode &d) {
  std::map<int, json> oi;
  for (const auto &a : s.attrs) {
    constexpr std::string_view kPrefix = "retrieval.documents.";
    if (a.key.rfind(kPrefix, 0) != 0) continue;
    std::string_view rest = a.key.substr(kPrefix.size());
    std::size_t dot = rest.find('.');
    if (dot == std::string_view::npos) continue;
    int i = std::atoi(std::string(rest.substr(0, dot)).c_str());
    std::string_view field = rest.substr(dot + 1);
    bool bad = false;
    json v = any_value(a.value, bad);
    d.note_bad(bad);
    if (field == "document.id")
      oi[i]["id"] = v.is_string() ? std::move(v) : json(v.dump());
    else if (field == "document.content")
      oi[i]["text"] = std::move(v);
    else if (field == "document.score")
      oi[i]["score"] = std::move(v);
  }
  for (auto &[i, doc] : oi) {  // (the fields moved, not copied: a document's text can be long)
    auto take = [&doc = doc](const char *k, json absent) { return doc.contains(k) ? std::move(doc[k]) : absent; };
    docs.push_back({{"id", take("id", "")}, {"text", take("text", "")}, {"score", take("score", json())}});
  }
  json list = attr_json(s, "gen_ai.retrieval.documents", d);
  if (list.is_null()) list = attr_json(s, "traceloop.entity.output", d);
  list = maybe_parsed(list);
  if (list.is_object() && list.contains("documents")) list = list["documents"];
  if (!list.is_array()) return;
  for (const auto &doc : list) {
    if (!doc.is_object()) continue;
    json text = doc.contains("content") ? doc["content"]
                : doc.contains("text")  ? doc["text"]
                                        : doc.value("page_content", json(""));
    docs.push_back(
        {{"id", doc.value("id", json(""))}, {"text", std::move(text)}, {"score", doc.value("score", json())}});
  }
}

namespace {

json first_attr(const Piece &s, std::initializer_list<const char *> keys, Decode &d) {
  for (const char *k : keys)
    if (json v = attr_json(s, k, d); !v.is_null()) return v;
  return nullptr;
}

std::string result_text(const json &v) {
  if (v.is_null()) return "";
  return v.is_string() ? v.get<std::string>() : v.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace

// A tool execution span: {id, name, arguments, result, error, start, duration_ms}.
json tool_span_call(const Piece &s, Decode &d) {
  json name = first_attr(s, {"gen_ai.tool.name", "tool.name", "tool_call.function.name", "traceloop.entity.name"}, d);
  json id = first_attr(s, {"gen_ai.tool.call.id", "tool_call.id"}, d);
  json args = maybe_parsed(first_attr(
      s, {"gen_ai.tool.call.arguments", "tool_call.function.arguments", "input.value", "traceloop.entity.input"}, d));
  if (args.is_object() && args.contains("kwargs") && args.size() <= 2)  // Traceloop's {args, kwargs}
  {
    json positional = args.value("args", json::array());
    args = !args["kwargs"].empty()                        ? args["kwargs"]
           : positional.is_array() && !positional.empty() ? positional[0]
                                                          : json();
  }
  json result = first_attr(s, {"gen_ai.tool.call.result", "output.value", "traceloop.entity.output"}, d);
  json call = tool_call_json(id.is_string() ? id.get<std::string>() : "",
                             name.is_string() ? name.get<std::string>() : s.name, args);
  call["result"] = result_text(result);
  if (s.status_code == 2) {
    std::string err = s.status_message.empty() ? attr_text(s, "error.type", d) : s.status_message;
    call["error"] = err.empty() ? "error" : err;
  } else {
    call["error"] = nullptr;
  }
  call["start"] = iso_time(s.start_ns);
  call["duration_ms"] = s.end_ns > s.start_ns ? static_cast<double>(s.end_ns - s.start_ns) / 1e6 : 0.0;
  return call;
}

namespace {

// The calls the model asked for in this turn: in its outputs, and in the history after the last user message.
std::vector<json> requested_calls(const std::vector<const LlmCall *> &calls) {
  std::vector<json> out;
  std::set<std::string> ids;
  auto add = [&](const Msg &m) {
    for (const auto &tc : m.tool_calls) {
      std::string id = string_member(tc, "id");
      if (!id.empty() && !ids.insert(id).second) continue;
      out.push_back(tc);
    }
  };
  for (const LlmCall *c : calls) {
    std::size_t from = 0;
    for (std::size_t i = 0; i < c->input.size(); ++i)
      if (c->input[i].role == "user") from = i + 1;
    for (std::size_t i = from; i < c->input.size(); ++i) add(c->input[i]);
    for (const auto &m : c->output) add(m);
  }
  return out;
}

}  // namespace

json assemble_tool_calls(const std::vector<const LlmCall *> &calls, const std::vector<const Piece *> &tool_spans,
                         Decode &d) {
  std::vector<json> req = requested_calls(calls);
  std::vector<bool> matched(req.size(), false);
  std::vector<json> extra;
  for (const Piece *s : tool_spans) {
    json run = tool_span_call(*s, d);
    std::size_t k = 0;
    for (; k < req.size(); ++k) {
      if (matched[k]) continue;
      const std::string rid = string_member(req[k], "id"), sid = string_member(run, "id");
      if ((!rid.empty() && rid == sid) || ((rid.empty() || sid.empty()) && req[k]["name"] == run["name"])) break;
    }
    if (k == req.size()) {
      extra.push_back(std::move(run));
      continue;
    }
    matched[k] = true;
    for (const char *f : {"result", "error", "start", "duration_ms"}) req[k][f] = run[f];
    if (req[k]["arguments"].is_null()) req[k]["arguments"] = run["arguments"];
  }
  // Results the conversation holds (tool messages answering a call id).
  std::unordered_map<std::string, std::string> results;
  for (const LlmCall *c : calls)
    for (const auto &m : c->input)
      if (m.role == "tool" && !m.tool_call_id.empty()) results[m.tool_call_id] = m.content;
  json out = json::array();
  for (auto &c : req) {
    for (const char *f : {"result", "error", "start", "duration_ms"})
      if (!c.contains(f)) c[f] = nullptr;
    if (auto it = results.find(string_member(c, "id")); it != results.end() && result_text(c["result"]).empty())
      c["result"] = it->second;
    out.push_back(std::move(c));
  }
  for (auto &c : extra) out.push_back(std::move(c));
  return out;
}

std::string tool_profile(const json &tools) {
  std::string out;
  for (const auto &t : tools) {
    std::string params;
    if (t.contains("parameters") && t["parameters"].is_object() && t["parameters"].contains("properties") &&
        t["parameters"]["properties"].is_object())
      for (const auto &[k, v] : t["parameters"]["properties"].items()) params += (params.empty() ? "" : ", ") + k;
    if (!out.empty()) out += "\n";
    out += string_member(t, "name") + "(" + params + ")";
    if (!string_member(t, "description").empty()) out += ": " + string_member(t, "description");
  }
  return out;
}

}  // namespace evalgraph::io::otlp
