// A span's or log record's OTLP/JSON text read into a Piece; attribute look-ups; the record's field list.
#include <algorithm>

#include "evalgraph/json_bounded.hpp"
#include "io/otlp_internal.h"
#include "util/json_build.h"

namespace evalgraph::io::otlp {

namespace {

// attributes: [{key, value: AnyValue}] — views into the text.
void read_attrs(Cursor &c, std::vector<Attr> &out) {
  if (!c.begin_array()) return;
  out.reserve(16);  // room for a usual span's attributes at once
  while (c.next_element()) {
    Attr a;
    std::string_view k;
    if (!c.begin_object()) break;
    while (c.next_member(k)) {
      if (k == "key") {
        if (!c.raw_string(a.key)) break;
      } else if (k == "value") {
        a.value = c.skip();
      } else {
        c.skip();
      }
    }
    if (!a.key.empty()) out.push_back(a);
  }
}

std::int64_t read_time(Cursor &c) {
  std::int64_t v = 0;
  return c.integer(v) ? v : 0;
}

std::string read_id(Cursor &c, std::size_t bytes) {
  std::string_view raw;
  if (c.peek() != '"' || !c.raw_string(raw)) {
    c.skip();
    return "";
  }
  return normalise_id(raw, bytes);
}

void read_events(Cursor &c, std::vector<SpanEvent> &out) {
  if (!c.begin_array()) return;
  while (c.next_element()) {
    SpanEvent ev;
    std::string_view k;
    if (!c.begin_object()) break;
    while (c.next_member(k)) {
      std::string_view raw;
      bool bad = false;
      if (k == "name" && c.peek() == '"' && c.raw_string(raw))
        ev.name = unescape(raw, bad);
      else if (k == "timeUnixNano")
        ev.time_ns = read_time(c);
      else if (k == "attributes")
        read_attrs(c, ev.attrs);
      else
        c.skip();
    }
    out.push_back(std::move(ev));
  }
}

// kind and status code: numbers, or the enum names the proto3 JSON mapping allows.
int enum_value(Cursor &c, std::string_view error_name) {
  std::string_view raw;
  if (c.peek() == '"') {
    if (!c.raw_string(raw)) return 0;
    if (raw == error_name) return 2;
    if (raw.find("CLIENT") != std::string_view::npos) return 3;
    return raw.empty() || (raw[0] >= '0' && raw[0] <= '9') ? std::atoi(std::string(raw).c_str()) : 1;
  }
  std::int64_t v = 0;
  return c.integer(v) ? static_cast<int>(v) : 0;
}

void read_status(Cursor &c, Piece &out) {
  std::string_view k;
  if (!c.begin_object()) return;
  while (c.next_member(k)) {
    std::string_view raw;
    bool bad = false;
    if (k == "code")
      out.status_code = enum_value(c, "STATUS_CODE_ERROR");
    else if (k == "message" && c.peek() == '"' && c.raw_string(raw))
      out.status_message = unescape(raw, bad);
    else
      c.skip();
  }
}

bool read_member(Cursor &c, std::string_view k, bool is_log, Piece &out, bool &bad) {
  std::string_view raw;
  if (k == "spanId")
    out.span_id = read_id(c, 8);
  else if (k == "parentSpanId")
    out.parent_id = read_id(c, 8);
  else if ((k == "name" || k == "eventName") && c.peek() == '"' && c.raw_string(raw))
    out.name = unescape(raw, bad);
  else if (k == "kind")
    out.kind = enum_value(c, "");
  else if (k == "startTimeUnixNano" || (is_log && k == "timeUnixNano"))
    out.start_ns = read_time(c);
  else if (k == "endTimeUnixNano")
    out.end_ns = read_time(c);
  else if (is_log && k == "observedTimeUnixNano" && out.start_ns == 0)
    out.start_ns = read_time(c);
  else if (k == "attributes")
    read_attrs(c, out.attrs);
  else if (k == "events")
    read_events(c, out.events);
  else if (k == "status")
    read_status(c, out);
  else if (k == "body")
    out.body = c.skip();
  else
    return false;
  return true;
}

}  // namespace

bool parse_piece(std::string_view text, bool is_log, Piece &out, Counts &counts) {
  Cursor c(text);
  out.is_log = is_log;
  bool bad = false;
  std::string_view k;
  if (!c.begin_object()) {
    ++counts[is_log ? "log record that is no JSON object" : "span that is no JSON object"];
    return false;
  }
  while (c.next_member(k))
    if (!read_member(c, k, is_log, out, bad)) c.skip();
  if (c.failed) {
    ++counts[is_log ? "log record with malformed JSON" : "span with malformed JSON"];
    return false;
  }
  if (bad) ++counts["text with bytes that are not UTF-8 (replaced by U+FFFD)"];
  if (is_log) {
    out.end_ns = out.start_ns;
    if (out.name.empty()) {
      Decode d{counts};
      out.name = attr_text(out, "event.name", d);
    }
  }
  return true;
}

const Attr *find_attr(const std::vector<Attr> &attrs, std::string_view key) {
  for (const auto &a : attrs)
    if (a.key == key) return &a;
  return nullptr;
}

json attr_json(const Piece &p, std::string_view key, Decode &d) {
  const Attr *a = find_attr(p.attrs, key);
  if (a == nullptr) return nullptr;
  bool bad = false;
  json v = any_value(a->value, bad);
  d.note_bad(bad);
  return v;
}

std::string attr_text(const Piece &p, std::string_view key, Decode &d) {
  const Attr *a = find_attr(p.attrs, key);
  if (a == nullptr) return "";
  bool bad = false;
  std::string s = any_string(a->value, bad);
  d.note_bad(bad);
  return s;
}

std::optional<std::int64_t> attr_int(const Piece &p, std::string_view key, Decode &d) {
  json v = attr_json(p, key, d);
  if (v.is_number_integer()) return v.get<std::int64_t>();
  if (v.is_number()) {  // (a double past int64's range does not convert: undefined behaviour; it is no integer)
    const double x = v.get<double>();
    if (evalgraph::fits_integer<std::int64_t>(x)) return static_cast<std::int64_t>(x);
    d.count("integer attribute past int64's range (not read)");
    return std::nullopt;
  }
  if (v.is_string()) {
    const std::string &s = v.get_ref<const std::string &>();
    char *end = nullptr;
    long long n = std::strtoll(s.c_str(), &end, 10);
    if (!s.empty() && end != nullptr && *end == '\0') return n;
  }
  return std::nullopt;
}

std::string string_member(const json &o, const char *key) {
  if (!o.is_object()) return {};
  auto it = o.find(key);
  return it != o.end() && it->is_string() ? it->get<std::string>() : std::string();
}

json maybe_parsed(json v) {
  if (!v.is_string()) return v;
  const std::string &s = v.get_ref<const std::string &>();
  std::size_t i = s.find_first_not_of(" \t\r\n");
  if (i == std::string::npos || (s[i] != '{' && s[i] != '[')) return v;
  json parsed = rawjson::parse(s);  // (refuses nesting nlohmann's serialiser could not take)
  return parsed.is_discarded() ? v : parsed;
}

bool glob_match(std::string_view pattern, std::string_view name) {
  std::size_t p = 0, n = 0, star = std::string_view::npos, mark = 0;
  while (n < name.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == name[n])) {
      ++p;
      ++n;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      mark = n;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      n = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

const std::vector<std::string> &record_fields() {
  static const std::vector<std::string> fields = {
      "id",         "session_id",     "start",       "latency_ms",     "model",        "system_prompt",
      "user_text",  "assistant_text", "messages",    "retrieved_docs", "tool_profile", "tools",
      "tool_calls", "usage",          "evaluations", "resource",       "convention",   "span_count"};
  return fields;
}

}  // namespace evalgraph::io::otlp
