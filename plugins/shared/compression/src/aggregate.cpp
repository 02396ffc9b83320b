#include "compression/aggregate.hpp"

#include <fmt/format.h>

#include "compression/rubric.hpp"

namespace compression {

Aggregator::Aggregator(std::string overall_mode) : mode_(std::move(overall_mode)) {
  if (mode_ != "answers" && mode_ != "dimensions")
    throw std::invalid_argument("overall must be 'answers' or 'dimensions', got '" + mode_ + "'");
}

Aggregator::MethodAcc &Aggregator::method(const std::string &m, const std::string &label) {
  for (auto &x : methods_)
    if (x.method == m && x.label == label) return x;
  methods_.push_back({});
  methods_.back().method = m;
  methods_.back().label = label;
  return methods_.back();
}

void Aggregator::add_missing(const std::string &why) {
  ++records_;
  if (missing_++ == 0) first_missing_ = why;
}

void Aggregator::add(const json &out) {
  ++records_;
  if (auto ms = out.find("methods"); ms != out.end() && ms->is_array()) {
    for (const auto &m : *ms) {
      MethodAcc &a = method(m.value("method", ""), m.value("label", ""));
      ++a.checkpoints;
      a.tokens_kept += m.value("tokens_kept", 0.0);
      a.tokens_history += m.value("tokens_history", 0.0);
    }
  }
  auto rs = out.find("results");
  if (rs == out.end() || !rs->is_array()) return;
  for (const auto &r : *rs) {
    MethodAcc &a = method(r.value("method", ""), r.value("label", ""));
    std::string status = r.value("status", "");
    if (status == "unanswered") {
      ++a.unanswered;
      continue;
    }
    ++a.judge_calls;
    if (status == "invalid") {
      ++a.invalid;
      continue;
    }
    if (status != "valid") {
      ++a.judge_errors;
      continue;
    }
    ++a.valid;
    std::string type = r.value("probe_type", "");
    if (!a.by_type.count(type)) a.type_order.push_back(type);
    Acc *accs[] = {&a.all, &a.by_type[type]};
    const json &ds = r.contains("dimensionScores") ? r["dimensionScores"] : json::object();
    for (Acc *acc : accs) {
      for (const auto &[d, v] : ds.items()) {
        if (!v.is_number()) continue;
        acc->dims[d].first += v.get<double>();
        acc->dims[d].second += 1;
      }
      if (!ds.empty() && r.contains("aggregateScore") && r["aggregateScore"].is_number()) {
        acc->agg_sum += r["aggregateScore"].get<double>();
        acc->agg_n += 1;
      }
    }
  }
}

json Aggregator::summarise(const Acc &a) const {
  json dims = json::object();
  double sum = 0;
  int n = 0;
  for (const auto &d : dimensions()) {
    auto it = a.dims.find(d);
    if (it == a.dims.end() || it->second.second == 0) {
      dims[d] = nullptr;
      continue;
    }
    double v = it->second.first / static_cast<double>(it->second.second);
    dims[d] = v;
    sum += v;
    ++n;
  }
  json overall = nullptr;
  if (mode_ == "answers" && a.agg_n > 0) overall = a.agg_sum / static_cast<double>(a.agg_n);
  if (mode_ == "dimensions" && n > 0) overall = sum / n;
  return {{"overall", overall}, {"dimensions", dims}, {"answers", a.agg_n}};
}

json Aggregator::result() const {
  json methods = json::array(), by_type = json::array();
  long calls = 0, invalid = 0, errors = 0, unanswered = 0, valid = 0;
  for (const auto &m : methods_) {
    json s = summarise(m.all);
    s["method"] = m.method;
    s["label"] = m.label;
    s["valid"] = m.valid;
    s["invalid"] = m.invalid;
    s["judge_errors"] = m.judge_errors;
    s["unanswered"] = m.unanswered;
    s["judge_calls"] = m.judge_calls;
    s["checkpoints"] = m.checkpoints;
    s["tokens_kept"] = m.tokens_kept;
    s["tokens_history"] = m.tokens_history;
    s["compression_ratio"] = m.tokens_history > 0 ? json(m.tokens_kept / m.tokens_history) : json(nullptr);
    methods.push_back(s);
    for (const auto &t : m.type_order) {
      json b = summarise(m.by_type.at(t));
      b["method"] = m.method;
      b["label"] = m.label;
      b["probe_type"] = t;
      by_type.push_back(b);
    }
    calls += m.judge_calls;
    invalid += m.invalid;
    errors += m.judge_errors;
    unanswered += m.unanswered;
    valid += m.valid;
  }
  return {{"overall_mode", mode_},
          {"dimensions", dimensions()},
          {"methods", methods},
          {"by_probe_type", by_type},
          {"totals",
           {{"records", records_},
            {"records_without_judge_output", missing_},
            {"first_missing_reason", first_missing_},
            {"judge_calls", calls},
            {"valid", valid},
            {"invalid", invalid},
            {"judge_errors", errors},
            {"unanswered", unanswered}}}};
}

namespace {
std::string num(const json &v, int prec = 2) {
  if (!v.is_number()) return "—";
  return fmt::format("{:.{}f}", v.get<double>(), prec);
}
std::string csvnum(const json &v) {
  if (!v.is_number()) return "";
  return fmt::format("{:.4f}", v.get<double>());
}
std::string csvq(const std::string &s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string o = "\"";
  for (char c : s) o += (c == '"') ? std::string("\"\"") : std::string(1, c);
  return o + "\"";
}
// A CSV header with a column per dimension between `before` and `after`, and a row's cells for them.
std::string dimensions_header(const char *before, const char *after) {
  std::string o = before;
  for (const auto &d : dimensions()) o += "," + d;
  return o + after;
}
std::string dimension_cells(const json &by_dimension) {
  std::string o;
  for (const auto &d : dimensions()) o += "," + csvnum(by_dimension[d]);
  return o;
}
const char *dim_title(const std::string &d) {
  if (d == "accuracy") return "Accuracy";
  if (d == "context_awareness") return "Context";
  if (d == "artifact_trail") return "Artifact";
  if (d == "completeness") return "Completeness";
  if (d == "continuity") return "Continuity";
  return "Instruction";
}
}  // namespace

std::string Aggregator::markdown(const json &r) {
  std::string o = "# Context-compression evaluation\n\n";
  std::string head = "| Method | Overall |", sep = "|---|---:|";
  for (const auto &d : dimensions()) {
    head += std::string(" ") + dim_title(d) + " |";
    sep += "---:|";
  }
  o += head + " Answers | Invalid |\n" + sep + "---:|---:|\n";
  bool opaque = false;
  for (const auto &m : r["methods"]) {
    o += "| " + m["label"].get<std::string>() + " | " + num(m["overall"]) + " |";
    for (const auto &d : dimensions()) o += " " + num(m["dimensions"][d]) + " |";
    o += fmt::format(" {} | {} |\n", m["valid"].get<long>(), m["invalid"].get<long>());
    if (m["method"] == "opaque") opaque = true;
  }
  o += "\nScores are 0–5. A dimension is the mean, over the validly judged answers that were graded on it, of the "
       "answer's dimension score (the weighted mean of its criteria). ";
  o += r["overall_mode"] == "answers"
           ? "Overall is the mean of the answers' overall scores (each the unweighted mean of the dimensions that answer has), "
             "so it need not equal the mean of the dimension columns. "
           : "Overall is the unweighted mean of the dimension columns that have data. ";
  o += "— means no answer was graded on that dimension. Invalid judge answers are counted, never scored.\n";
  if (opaque)
    o += "\nOpaque is a stand-in: an unstructured LLM summary in place of a provider's opaque compaction, not the "
         "provider's own compaction.\n";
  o += "\n## By probe type\n\n| Method | Probe type | Answers | Overall |";
  std::string sep2 = "|---|---|---:|---:|";
  for (const auto &d : dimensions()) {
    o += std::string(" ") + dim_title(d) + " |";
    sep2 += "---:|";
  }
  o += "\n" + sep2 + "\n";
  for (const auto &b : r["by_probe_type"]) {
    o += "| " + b["label"].get<std::string>() + " | " + b["probe_type"].get<std::string>() + " | " +
         std::to_string(b["answers"].get<long>()) + " | " + num(b["overall"]) + " |";
    for (const auto &d : dimensions()) o += " " + num(b["dimensions"][d]) + " |";
    o += "\n";
  }
  o += "\n## Compression\n\nTokens are estimated as ceil(characters / 4) of the rendered transcript; the ratio is "
       "Σ tokens kept (compressed context + verbatim recent messages) / Σ tokens of the history up to the "
       "checkpoint, over all checkpoints.\n\n| Method | Checkpoints | Tokens kept | Tokens of the history | Ratio |\n"
       "|---|---:|---:|---:|---:|\n";
  for (const auto &m : r["methods"])
    o += fmt::format("| {} | {} | {:.0f} | {:.0f} | {} |\n", m["label"].get<std::string>(), m["checkpoints"].get<long>(),
                     m["tokens_kept"].get<double>(), m["tokens_history"].get<double>(), num(m["compression_ratio"], 3));
  o += "\n## Judge\n\n| Method | Judge calls | Valid | Invalid | Judge errors | Unanswered probes |\n|---|---:|---:|---:|---:|---:|\n";
  for (const auto &m : r["methods"])
    o += fmt::format("| {} | {} | {} | {} | {} | {} |\n", m["label"].get<std::string>(), m["judge_calls"].get<long>(),
                     m["valid"].get<long>(), m["invalid"].get<long>(), m["judge_errors"].get<long>(),
                     m["unanswered"].get<long>());
  const json &t = r["totals"];
  o += fmt::format("| **All** | {} | {} | {} | {} | {} |\n", t["judge_calls"].get<long>(), t["valid"].get<long>(),
                   t["invalid"].get<long>(), t["judge_errors"].get<long>(), t["unanswered"].get<long>());
  if (t["records_without_judge_output"].get<long>() > 0)
    o += fmt::format("\n{} of {} records reached the report without judge output (first: {}).\n",
                     t["records_without_judge_output"].get<long>(), t["records"].get<long>(),
                     t["first_missing_reason"].get<std::string>());
  return o;
}

std::string Aggregator::csv(const json &r) {
  std::string o = dimensions_header("method,label,overall",
                                    ",answers,invalid,judge_errors,unanswered,judge_calls,checkpoints,tokens_kept,"
                                    "tokens_history,compression_ratio\n");
  for (const auto &m : r["methods"]) {
    o += csvq(m["method"]) + "," + csvq(m["label"]) + "," + csvnum(m["overall"]) + dimension_cells(m["dimensions"]);
    o += fmt::format(",{},{},{},{},{},{},{:.0f},{:.0f},{}\n", m["valid"].get<long>(), m["invalid"].get<long>(),
                     m["judge_errors"].get<long>(), m["unanswered"].get<long>(), m["judge_calls"].get<long>(),
                     m["checkpoints"].get<long>(), m["tokens_kept"].get<double>(), m["tokens_history"].get<double>(),
                     csvnum(m["compression_ratio"]));
  }
  return o;
}

std::string Aggregator::by_type_csv(const json &r) {
  std::string o = dimensions_header("method,label,probe_type,answers,overall", "\n");
  for (const auto &b : r["by_probe_type"])
    o += csvq(b["method"]) + "," + csvq(b["label"]) + "," + csvq(b["probe_type"]) + "," +
         std::to_string(b["answers"].get<long>()) + "," + csvnum(b["overall"]) + dimension_cells(b["dimensions"]) + "\n";
  return o;
}

}  // namespace compression
