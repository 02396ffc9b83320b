#pragma once
// Helpers of the trace reader's tests: reading a trace file into records, and writing OTLP/JSON by hand.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "io/dataset.h"
#include "test_support.h"

namespace tracetest {

using nlohmann::json;

struct Read {
  std::vector<json> records;
  std::vector<std::string> problems;  // record_problem() of each record ("" when fine)
  json stats;
  std::size_t unmapped(const std::string &reason) const {
    const json u = stats.value("unmapped", json::object());
    return u.contains(reason) ? u[reason].get<std::size_t>() : 0;
  }
};

inline Read read_traces(const std::filesystem::path &file, json options = json::object()) {
  Read r;
  auto reader = evalgraph::io::open_dataset(file, "otlp", options);
  std::string text;
  while (reader->next_text(text)) {
    r.records.push_back(json::parse(text));
    r.problems.push_back(reader->record_problem());
  }
  r.stats = reader->stats();
  return r;
}

inline json attr(const std::string &k, const json &v) {
  json value;
  if (v.is_string())
    value = {{"stringValue", v}};
  else if (v.is_number_integer())
    value = {{"intValue", std::to_string(v.get<long long>())}};
  else if (v.is_number())
    value = {{"doubleValue", v}};
  else
    value = {{"boolValue", v}};
  return {{"key", k}, {"value", value}};
}

// A span of trace `trace` (32 hex digits) with string/number attributes.
inline json span(const std::string &trace, const std::string &id, const std::string &parent, const std::string &name,
                 long long start_ms, const std::vector<std::pair<std::string, json>> &attrs) {
  json a = json::array();
  for (const auto &[k, v] : attrs) a.push_back(attr(k, v));
  json s = {{"traceId", trace},
            {"spanId", id},
            {"name", name},
            {"kind", 1},
            {"startTimeUnixNano", std::to_string(start_ms * 1000000)},
            {"endTimeUnixNano", std::to_string((start_ms + 10) * 1000000)},
            {"attributes", a}};
  if (!parent.empty()) s["parentSpanId"] = parent;
  return s;
}

// One export request (a line of the Collector's file exporter) holding `spans`.
inline std::string request(const std::vector<json> &spans) {
  json r = {{"resourceSpans",
             {{{"resource", {{"attributes", {attr("service.name", "t")}}}},
               {"scopeSpans", {{{"scope", {{"name", "test"}}}, {"spans", spans}}}}}}}};
  return r.dump() + "\n";
}

// An LLM span under the OpenInference convention answering `answer` to `question`.
inline json oi_llm(const std::string &trace, const std::string &id, const std::string &parent, long long start,
                   const std::string &question, const std::string &answer) {
  return span(trace, id, parent, "llm", start,
              {{"openinference.span.kind", "LLM"},
               {"llm.input_messages.0.message.role", "user"},
               {"llm.input_messages.0.message.content", question},
               {"llm.output_messages.0.message.role", "assistant"},
               {"llm.output_messages.0.message.content", answer}});
}

inline std::string trace_id(int n) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%032x", n + 0x1000);
  return buf;
}

}  // namespace tracetest
