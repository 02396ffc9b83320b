// map_trace(): a trace's pieces in order, its parent links checked, and its record(s) written.
#include <algorithm>
#include <set>
#include <unordered_map>

#include "io/otlp_internal.h"

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
      if (auto it = c.resource.find(k); it != c.resource.end() && it->is_string()) return it->get<std::string>();
  return "";
}

// The answer a call gave: its last output message with text.
const Msg *answer_of(const LlmCall &c) {
  for (auto it = c.output.rbegin(); it != c.output.rend(); ++it)
    if (!it->content.empty()) return &*it;
  return nullptr;
}

void fill_calls(MappedRecord &r, const std::vector<const LlmCall *> &calls, const Sorted &s, Decode &d) {
  auto &rec = r.record;
  const LlmCall *final_call = calls.back();
  for (auto it = calls.rbegin(); it != calls.rend(); ++it)
    if (answer_of(**it) != nullptr) {
      final_call = *it;
      break;
    }
  std::vector<std::string> system;
  for (const auto &text : calls.front()->system)
    if (std::find(system.begin(), system.end(), text) == system.end()) system.push_back(text);
  std::string system_prompt;
  for (const auto &text : system) system_prompt += (system_prompt.empty() ? "" : "\n\n") + text;
  std::string user_text;
  for (const auto &m : final_call->input)
    if (m.role == "user") user_text = m.content;
  const Msg *answer = answer_of(*final_call);
  if (answer == nullptr) d.count("trace without an assistant answer (no output message with text)");
  std::vector<Msg> conversation = final_call->input;
  conversation.insert(conversation.end(), final_call->output.begin(), final_call->output.end());
  json tools = json::array();
  std::set<std::string> tool_names;
  json usage = json::object();
  for (const LlmCall *c : calls) {
    for (const auto &t : c->tools)
      if (tool_names.insert(t.value("name", "")).second) tools.push_back(t);
    for (const auto &[k, v] : c->usage.items()) usage[k] = usage.value(k, 0LL) + v.get<long long>();
  }
  usage["llm_calls"] = calls.size();
  json docs = json::array();
  for (const Piece *p : s.retrievers) read_documents(*p, docs, d);
  rec["model"] = final_call->model;
  rec["system_prompt"] = system_prompt;
  rec["user_text"] = user_text;
  rec["assistant_text"] = answer != nullptr ? answer->content : "";
  rec["messages"] = messages_json(conversation);
  rec["retrieved_docs"] = std::move(docs);
  rec["tool_profile"] = tool_profile(tools);
  rec["tools"] = std::move(tools);
  rec["tool_calls"] = assemble_tool_calls(calls, s.tools, d);
  rec["usage"] = std::move(usage);
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
  auto &rec = r.record;
  rec["id"] = m.per_llm_call ? t.id + "/" + calls.front()->span->span_id : t.id;
  rec["session_id"] = r.session.empty() ? json() : json(r.session);
  rec["start"] = iso_time(start);
  rec["latency_ms"] = end > start ? static_cast<double>(end - start) / 1e6 : 0.0;
  fill_calls(r, calls, s, d);
  rec["evaluations"] = evaluations(s, d);
  rec["resource"] = t.contexts.empty() ? json::object() : json(t.contexts[spans.front()->context].resource);
  rec["convention"] = conventions(calls);
  rec["span_count"] = s.spans.size();
  for (const auto &[field, keys] : m.field_attributes) {
    if (field == "session_id") continue;
    for (const Piece *p : s.spans) {
      json v;
      for (const auto &k : keys)
        if (v = attr_json(*p, k, d); !v.is_null()) break;
      if (v.is_null()) continue;
      rec[field] = maybe_parsed(std::move(v));
      break;
    }
  }
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
