// map_trace(): a trace's pieces in order, its parent links checked, and its record(s) written.
#include <algorithm>
#include <set>
#include <unordered_map>

#include "io/otlp_internal.h"
#include "io/otlp_text.h"

namespace evalgraph::io::otlp {

namespace {

const char *const kSessionKeys[] = {"session.id", "gen_ai.conversation.id",
                                    "traceloop.association.properties.session_id", "langfuse.session.id",
                                    "gen_ai.thread.id"};

// Counts spans whose parent chain runs in a circle (their parent ids name each other): they are read like the
// others, but no root can be told for them.
void check_parents(const std::vector<const Piece *> &spans, Decode &d) {
  std::unordered_map<std::string_view, std::size_t> by_id;
  for (std::size_t i = 0; i < spans.size(); ++i)
    if (!spans[i]->span_id.empty()) by_id.emplace(spans[i]->span_id, i);
  std::vector<char> state(spans.size(), 0);  // 0 new, 1 on the current chain, 2 done
  std::size_t in_cycle = 0;
  for (std::size_t i = 0; i < spans.size(); ++i) {
    std::vector<std::size_t> chain;
    std::size_t k = i;
    while (state[k] == 0) {
      state[k] = 1;
      chain.push_back(k);
      auto it = by_id.find(spans[k]->parent_id);
      if (spans[k]->parent_id.empty() || it == by_id.end()) break;
      k = it->second;
      if (state[k] == 1) {  // back on the chain: a cycle
        in_cycle += static_cast<std::size_t>(chain.end() - std::find(chain.begin(), chain.end(), k));
        break;
      }
    }
    for (std::size_t c : chain) state[c] = 2;
  }
  if (in_cycle > 0) d.count("span whose parent ids form a cycle (read; no root told)", in_cycle);
}

struct Sorted {
  std::vector<const Piece *> spans, llm, retrievers, tools;
  std::unordered_map<std::string_view, std::vector<const Piece *>> logs_by_span;
  std::vector<const Piece *> evaluations;  // gen_ai.evaluation.result events and log records
};

void sort_pieces(const Trace &t, const Mapping &m, Sorted &s, Decode &d) {
  for (const auto &p : t.pieces) {
    if (!p.is_log) {
      s.spans.push_back(&p);
      continue;
    }
    if (p.name == "gen_ai.evaluation.result")
      s.evaluations.push_back(&p);
    else if (p.span_id.empty())
      d.count("log record without a span id (not linked to a span)");
    else
      s.logs_by_span[p.span_id].push_back(&p);
  }
  std::sort(s.spans.begin(), s.spans.end(), [](const Piece *a, const Piece *b) {
    return a->start_ns != b->start_ns ? a->start_ns < b->start_ns : a->span_id < b->span_id;
  });
  std::set<std::string_view> known;
  for (const Piece *p : s.spans) {
    known.insert(p->span_id);
    auto logs = s.logs_by_span.find(p->span_id);
    bool genai_logs =
        logs != s.logs_by_span.end() && std::any_of(logs->second.begin(), logs->second.end(),
                                                    [](const Piece *l) { return l->name.rfind("gen_ai.", 0) == 0; });
    switch (classify(*p, m, genai_logs, d)) {
      case Role::llm:
        s.llm.push_back(p);
        break;
      case Role::retriever:
        s.retrievers.push_back(p);
        break;
      case Role::tool:
        s.tools.push_back(p);
        break;
      case Role::other:
        break;
    }
  }
  for (const auto &[id, logs] : s.logs_by_span)
    if (known.count(id) == 0) d.count("log record whose span is not in its trace", logs.size());
}

json evaluation_json(const std::vector<Attr> &attrs, Decode &d) {
  Piece h;
  h.attrs = attrs;
  json e = json::object();
  for (const auto &[field, key] :
       {std::pair{"name", "gen_ai.evaluation.name"}, std::pair{"score", "gen_ai.evaluation.score.value"},
        std::pair{"label", "gen_ai.evaluation.score.label"}, std::pair{"explanation", "gen_ai.evaluation.explanation"}})
    if (json v = attr_json(h, key, d); !v.is_null()) e[field] = v;
  return e;
}

json evaluations(const Sorted &s, Decode &d) {
  json out = json::array();
  for (const Piece *p : s.spans)
    for (const auto &ev : p->events)
      if (ev.name == "gen_ai.evaluation.result") out.push_back(evaluation_json(ev.attrs, d));
  for (const Piece *p : s.evaluations) {
    json e = evaluation_json(p->attrs, d);
    if (!p->span_id.empty()) e["span_id"] = p->span_id;
    out.push_back(std::move(e));
  }
  return out;
}

std::string session_of(const Sorted &s, const Trace &t, const Mapping &m, Decode &d) {
  if (auto it = m.field_attributes.find("session_id"); it != m.field_attributes.end())
    for (const Piece *p : s.spans)
      for (const auto &k : it->second)
        if (std::string v = attr_text(*p, k, d); !v.empty()) return v;
  for (const Piece *p : s.spans)
    for (const char *k : kSessionKeys)
      if (std::string v = attr_text(*p, k, d); !v.empty()) return v;
  for (const auto &c : t.contexts)
    for (const char *k : kSessionKeys)
      if (auto it = c->resource.find(k); it != c->resource.end() && it->is_string()) return it->get<std::string>();
  return "";
}

// The answer a call gave: its last output message with text.
const Msg *answer_of(const LlmCall &c) {
  for (auto it = c.output.rbegin(); it != c.output.rend(); ++it)
    if (!it->content.empty()) return &*it;
  return nullptr;
}

// The record's fields in order, written as they are made. A field that `mapping:` gives (mapped_fields) takes
// the place of the one made here, which is still made (and what it counts, counted).
using Mapped = std::vector<std::pair<std::string_view, json>>;

class Fields {
 public:
  Fields(JsonText &w, const Mapped &mapped) : w_(w), mapped_(mapped), used_(mapped.size(), false) {}
  template <class Write>
  void add(std::string_view name, Write write) {
    w_.key(name);
    const json *given = find(name);
    if (given == nullptr) {
      write(w_);
      return;
    }
    w_.value(*given);
    std::string scratch;
    JsonText unused(scratch);
    write(unused);
  }
  // The fields of the mapping that are none of the record's own, after them.
  void rest() {
    for (std::size_t i = 0; i < mapped_.size(); ++i)
      if (!used_[i]) w_.key(mapped_[i].first).value(mapped_[i].second);
  }
  const json *find(std::string_view name) {
    for (std::size_t i = 0; i < mapped_.size(); ++i)
      if (mapped_[i].first == name) {
        used_[i] = true;
        return &mapped_[i].second;
      }
    return nullptr;
  }

 private:
  JsonText &w_;
  const Mapped &mapped_;
  std::vector<bool> used_;
};

Mapped mapped_fields(const Sorted &s, const Mapping &m, Decode &d) {
  Mapped out;
  for (const auto &[field, keys] : m.field_attributes) {
    if (field == "session_id") continue;
    for (const Piece *p : s.spans) {
      json v;
      for (const auto &k : keys)
        if (v = attr_json(*p, k, d); !v.is_null()) break;
      if (v.is_null()) continue;
      out.emplace_back(field, maybe_parsed(std::move(v)));
      break;
    }
  }
  return out;
}

// messages: the final call's input and output, each {content, name, role, tool_call_id, tool_calls} (the keys in
// that order, as a JSON object with sorted keys writes them).
void write_messages(JsonText &w, const LlmCall &c) {
  w.open('[');
  for (const auto *msgs : {&c.input, &c.output})
    for (const auto &m : *msgs) {
      w.open('{');
      w.key("content").string(m.content);
      if (!m.name.empty()) w.key("name").string(m.name);
      w.key("role").string(m.role);
      if (!m.tool_call_id.empty()) w.key("tool_call_id").string(m.tool_call_id);
      if (!m.tool_calls.empty()) w.key("tool_calls").value(m.tool_calls);
      w.close('}');
    }
  w.close(']');
}

void write_calls(Fields &f, const std::vector<const LlmCall *> &calls, const Sorted &s, Decode &d) {
  const LlmCall *final_call = calls.back();
  for (auto it = calls.rbegin(); it != calls.rend(); ++it)
    if (answer_of(**it) != nullptr) {
      final_call = *it;
      break;
    }
  std::vector<std::string_view> system;
  for (const auto &text : calls.front()->system)
    if (std::find(system.begin(), system.end(), text) == system.end()) system.push_back(text);
  std::string system_prompt;
  for (const auto &text : system) (system_prompt += system_prompt.empty() ? "" : "\n\n") += text;
  std::string_view user_text;
  for (const auto &m : final_call->input)
    if (m.role == "user") user_text = m.content;
  const Msg *answer = answer_of(*final_call);
  if (answer == nullptr) d.count("trace without an assistant answer (no output message with text)");
  json tools = json::array();
  std::set<std::string> tool_names;
  json usage = json::object();
  for (const LlmCall *c : calls) {
    for (const auto &t : c->tools)
      if (tool_names.insert(string_member(t, "name")).second) tools.push_back(t);
    for (const auto &[k, v] : c->usage.items()) usage[k] = usage.value(k, 0LL) + v.get<long long>();
  }
  usage["llm_calls"] = calls.size();
  json docs = json::array();
  for (const Piece *p : s.retrievers) read_documents(*p, docs, d);
  f.add("model", [&](JsonText &w) { w.string(final_call->model); });
  f.add("system_prompt", [&](JsonText &w) { w.string(system_prompt); });
  f.add("user_text", [&](JsonText &w) { w.string(user_text); });
  f.add("assistant_text", [&](JsonText &w) { w.string(answer != nullptr ? answer->content : ""); });
  f.add("messages", [&](JsonText &w) { write_messages(w, *final_call); });
  f.add("retrieved_docs", [&](JsonText &w) { w.value(docs); });
  f.add("tool_profile", [&](JsonText &w) { w.string(tool_profile(tools)); });
  f.add("tools", [&](JsonText &w) { w.value(tools); });
  f.add("tool_calls", [&](JsonText &w) { w.value(assemble_tool_calls(calls, s.tools, d)); });
  f.add("usage", [&](JsonText &w) { w.value(usage); });
}

std::string conventions(const std::vector<const LlmCall *> &calls) {
  std::set<std::string> seen;
  std::string out;
  for (const LlmCall *c : calls)
    if (seen.insert(c->convention).second) out += (out.empty() ? "" : ",") + c->convention;
  return out;
}

MappedRecord make_record(const Trace &t, const Sorted &s, const std::vector<const LlmCall *> &calls,
                         const std::vector<const Piece *> &spans, const Mapping &m, Decode &d) {
  MappedRecord r;
  std::int64_t start = 0, end = 0;
  for (const Piece *p : spans) {
    if (p->start_ns > 0 && (start == 0 || p->start_ns < start)) start = p->start_ns;
    end = std::max(end, p->end_ns);
  }
  r.session = session_of(s, t, m, d);
  r.start_ns = start;
  const Mapped mapped = mapped_fields(s, m, d);
  const std::string id = m.per_llm_call ? t.id + "/" + calls.front()->span->span_id : t.id;
  const std::string start_text = iso_time(start);
  r.text.reserve(4096);  // a usual record's size
  JsonText w(r.text);
  Fields f(w, mapped);
  w.open('{');
  f.add("id", [&](JsonText &o) { o.string(id); });
  f.add("session_id", [&](JsonText &o) { r.session.empty() ? o.value(json()) : o.string(r.session); });
  f.add("start", [&](JsonText &o) { o.string(start_text); });
  f.add("latency_ms", [&](JsonText &o) { o.value(end > start ? static_cast<double>(end - start) / 1e6 : 0.0); });
  write_calls(f, calls, s, d);
  f.add("evaluations", [&](JsonText &o) { o.value(evaluations(s, d)); });
  f.add("resource", [&](JsonText &o) {
    if (t.contexts.empty())
      o.value(json::object());
    else
      o.value(t.contexts[spans.front()->context]->resource);
  });
  f.add("convention", [&](JsonText &o) { o.string(conventions(calls)); });
  f.add("span_count", [&](JsonText &o) { o.unsigned_number(s.spans.size()); });
  f.rest();
  w.close('}');
  const json *given_id = f.find("id"), *given_start = f.find("start");
  r.id = given_id != nullptr ? *given_id : json(id);
  r.start = given_start != nullptr ? *given_start : json(start_text);
  return r;
}

}  // namespace

void map_trace(const Trace &t, const Mapping &m, Counts &counts, std::vector<MappedRecord> &out) {
  Decode d{counts};
  Sorted s;
  sort_pieces(t, m, s, d);
  if (s.spans.empty()) {
    d.count("trace with log records but no span");
    return;
  }
  check_parents(s.spans, d);
  if (s.llm.empty()) {
    d.count("trace without an LLM span");
    return;
  }
  std::vector<LlmCall> calls;
  calls.reserve(s.llm.size());
  static const std::vector<const Piece *> kNoLogs;
  for (const Piece *p : s.llm) {
    auto it = s.logs_by_span.find(p->span_id);
    calls.push_back(read_llm_call(*p, it == s.logs_by_span.end() ? kNoLogs : it->second, d));
  }
  std::vector<const LlmCall *> ordered;
  for (const auto &c : calls) ordered.push_back(&c);
  std::stable_sort(ordered.begin(), ordered.end(),
                   [](const LlmCall *a, const LlmCall *b) { return a->span->start_ns < b->span->start_ns; });
  if (!m.per_llm_call) {
    out.push_back(make_record(t, s, ordered, s.spans, m, d));
    return;
  }
  for (const LlmCall *c : ordered) out.push_back(make_record(t, s, {c}, {c->span}, m, d));
}

}  // namespace evalgraph::io::otlp
