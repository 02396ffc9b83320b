#pragma once
// Internal to engine/io: one trace's spans and log records, read from their OTLP/JSON text, and how they become
// records (the fields of docs/traces.md) under the OpenTelemetry GenAI conventions, OpenLLMetry's older
// gen_ai.prompt.N.* attributes, and OpenInference. The reader (otlp_reader.cpp) groups a trace's pieces; this
// file knows what they mean.
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace evalgraph::io::otlp {

// An attribute as written: its key and its AnyValue's JSON text (views into the span's text).
struct Attr {
  std::string_view key, value;
};

struct SpanEvent {
  std::string name;
  std::int64_t time_ns = 0;
  std::vector<Attr> attrs;
};

// A span or (is_log) a log record.
struct Piece {
  bool is_log = false;
  std::string span_id, parent_id;  // lower-case hex; "" when absent
  std::string name;                // span name; a log record's event name (eventName or attribute event.name)
  int kind = 0;
  std::int64_t start_ns = 0, end_ns = 0;  // a log record: its time in both
  int status_code = 0;                    // 2 = error
  std::string status_message;
  std::vector<Attr> attrs;
  std::vector<SpanEvent> events;
  std::string_view body;      // a log record's body (AnyValue text)
  std::uint32_t context = 0;  // index of its resource/scope (Trace::contexts)
  std::size_t line = 0;       // where it stood in the file (1-based)
};

// Resource attributes and the instrumentation scope of a piece.
struct Context {
  nlohmann::json resource = nlohmann::json::object();
  std::string scope_name, scope_version;
};

// What a reader was told in `mapping:` (docs/traces.md): fields taken from named attributes, and span names
// (glob patterns, * and ?) that mark LLM, retriever and tool spans of home-made instrumentation.
struct Mapping {
  std::map<std::string, std::vector<std::string>> field_attributes;  // record field -> attribute names, in order
  std::vector<std::string> llm_spans, retriever_spans, tool_spans;
  bool per_llm_call = false;  // unit: llm_call
};

// A trace, as the reader hands it over: its id, its pieces (spans, then log records) and their contexts.
struct Trace {
  std::string id;
  std::vector<Piece> pieces;
  std::vector<const Context *> contexts;  // (the reader's, shared by the traces of a partition)
};

// A record made from a trace (its JSON text), with what orders the output: records of one session together, by
// start. `id` and `start` are the record's fields of those names (what stands for a record over the limits).
struct MappedRecord {
  std::string text;
  std::string session;
  std::int64_t start_ns = 0;
  nlohmann::json id, start;
};

// Counts of what could not be mapped, by reason (run.json's dataset_reader.unmapped).
using Counts = std::map<std::string, std::uint64_t>;

// Parses one span's or log record's JSON text into `out` (attribute views point into `text`, which must
// outlive it). False (with the reason counted) when the text is no span/log record.
bool parse_piece(std::string_view text, bool is_log, Piece &out, Counts &counts);

// The record(s) a trace becomes (none, with the reason counted, when it has no LLM call).
void map_trace(const Trace &trace, const Mapping &mapping, Counts &counts, std::vector<MappedRecord> &out);

// The record fields, in the order they are written (the reader's columns()).
const std::vector<std::string> &record_fields();

// Whether `name` matches the glob `pattern` (* any run, ? one byte).
bool glob_match(std::string_view pattern, std::string_view name);

}  // namespace evalgraph::io::otlp
