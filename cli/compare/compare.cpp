#include "compare/compare.h"

#include "report/default_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <limits>
#include <map>
#include <set>
#include <unordered_map>

#include "stats/stats.h"
#include "config/diagnostics.h"
#include "plugin/defaults.h"
#include "run_folder/run_folder.h"
#include "util/atomic_file.h"
#include "util/json_file.h"
#include "util/junit.h"
#include "util/raw_json.h"

namespace evalgraph::compare {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// How deep run.json may nest (ours nests a few levels).
constexpr int kMaxResultsDepth = 64;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr std::size_t kChangedRecords = 20;
constexpr int kMaxDepth = 3;  // node.field.sub.sub: deeper values are evidence, not metrics

// Fields that identify a record, tried in this order; the first set that is present in every record of
// both runs and unique within each run pairs them. Otherwise records pair by their position.
const std::vector<std::vector<std::string>> kKeySets = {
    {"id"}, {"record_id"}, {"unit_id"}, {"uid"}, {"example_id"}, {"conversation_id", "turn"},
    {"session_id", "checkpoint"}, {"data_file", "row", "transformation"}};

struct Metric {
  std::string node, field;
  bool any_number = false, any_bool = false;
  std::vector<double> values;  // per record, NaN where the record has no such value
};

struct Run {
  fs::path dir;
  json info;  // run.json
  fs::path records_file;
  std::vector<std::string> nodes;
  std::vector<json> ids;  // per record: the identifying fields it has (kKeySets' union), and _replication
  std::vector<Metric> metrics;
  std::unordered_map<std::string, std::size_t> metric_index;  // "node\tfield" -> metrics[]
  std::size_t records = 0;
  // detailed_results.jsonl of chatbot.report (a --config-dir run, which writes no sink.jsonl): the judges'
  // and indices' values are under `criteria.<name>.value`, the replication is `replication`.
  bool chatbot_results = false;
};

void put_value(Run &run, std::size_t rec, const std::string &node, const std::string &field, bool boolean, double value) {
  std::string name = node + "\t" + field;
  auto it = run.metric_index.find(name);
  if (it == run.metric_index.end()) {
    it = run.metric_index.emplace(name, run.metrics.size()).first;
    run.metrics.push_back({node, field.empty() ? "value" : field, false, false, {}});
  }
  Metric &m = run.metrics[it->second];
  if (m.values.size() <= rec) m.values.resize(rec + 1, kNaN);
  (boolean ? m.any_bool : m.any_number) = true;
  m.values[rec] = value;
}

// The numbers and booleans in a node's output, read from the record's text without building a DOM (records
// of a large run are gigabytes; strings and arrays are skipped unread).
void collect(Run &run, std::size_t rec, const std::string &node, const std::string &field, std::string_view v, int depth) {
  if (v.empty()) return;
  const char c = v[0];
  if (c == '{') {
    if (depth >= kMaxDepth) return;
    std::vector<rawjson::Member> members;
    if (!rawjson::object_members(v, members)) return;
    std::set<std::string> seen;
    for (const auto &m : members) {
      if (m.key == "parameters" || (!m.key.empty() && m.key[0] == '_') || !seen.insert(m.key).second) continue;
      collect(run, rec, node, field.empty() ? m.key : field + "." + m.key, v.substr(m.value.off, m.value.len), depth + 1);
    }
  } else if (c == 't' || c == 'f') {
    put_value(run, rec, node, field, true, c == 't' ? 1.0 : 0.0);
  } else if (c == '-' || (c >= '0' && c <= '9')) {
    double x = 0;
    auto r = std::from_chars(v.data(), v.data() + v.size(), x);
    if (r.ec == std::errc()) put_value(run, rec, node, field, false, x);
    else put_value(run, rec, node, field, false, json::parse(v).get<double>());  // out of double's range
  }
}

Run load_run(const fs::path &dir) {
  Run run;
  run.dir = dir;
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw CompareError(2, fmt::format("{}: no such folder (give two results folders of `evalgraph run`)", dir.string()));
  fs::path rj = run_folder::summary(dir);
  if (!fs::exists(rj)) {
    std::string why = run_folder::resumable(dir)
                          ? fmt::format("the run did not finish; finish it with `evalgraph run --resume {}`", dir.string())
                          : "a results folder of `evalgraph run` holds run.json, pipeline.yaml and the sinks' files";
    throw CompareError(2, fmt::format("{}: not a results folder: no run.json in it ({})", dir.string(), why));
  }
  std::string why;
  if (!read_json_file_bounded(rj, run.info, kMaxResultsDepth, &why) || !run.info.is_object())
    throw CompareError(3, fmt::format("{}: not valid JSON ({}); the results folder is damaged", rj.string(),
                                      why.empty() ? "not an object" : why));
  if (run.info.contains("nodes") && run.info["nodes"].is_object())
    for (const auto &[id, _] : run.info["nodes"].items()) run.nodes.push_back(id);
  run.records_file = records_file_of(dir, run.info);
  if (run.records_file.empty())
    throw CompareError(2, fmt::format("{}: no records to compare: the run wrote no JSONL records (add `- uses: sink.jsonl` "
                                      "with `file: detailed.jsonl` to the pipeline's sinks)",
                                      dir.string()));
  std::ifstream rin(run.records_file, std::ios::binary);
  if (!rin) throw CompareError(3, fmt::format("{}: cannot open", run.records_file.string()));
  std::set<std::string> id_fields;
  for (const auto &ks : kKeySets) id_fields.insert(ks.begin(), ks.end());
  std::set<std::string> node_set(run.nodes.begin(), run.nodes.end());
  run.chatbot_results = run.records_file.filename() == "detailed_results.jsonl";
  if (run.chatbot_results) node_set.insert("criteria");  // criteria.<name>.value: each task's and index's value
  std::vector<rawjson::Member> members;
  std::string line;
  std::size_t lineno = 0;
  while (std::getline(rin, line)) {
    ++lineno;
    if (line.empty() || line == "\r") continue;
    std::string_view text(line);
    while (!text.empty() && (text.back() == '\r' || text.back() == ' ')) text.remove_suffix(1);
    if (!rawjson::object_members(text, members))
      throw CompareError(3, fmt::format("{}:{}: not a JSON object; the results file is damaged", run.records_file.string(), lineno));
    const std::size_t i = run.records++;
    json ids = json::object();
    std::set<std::string> done;
    for (const auto &m : members) {
      if (!done.insert(m.key).second) continue;  // a duplicate key: the first counts
      std::string_view v = text.substr(m.value.off, m.value.len);
      const bool replication = m.key == "_replication" || (run.chatbot_results && m.key == "replication");
      if (id_fields.count(m.key) != 0 || replication) {
        const std::string k = replication ? std::string("_replication") : m.key;
        if (v[0] == '"') ids[k] = json::parse(v).get<std::string>();
        else if (v[0] == '-' || (v[0] >= '0' && v[0] <= '9')) ids[k] = std::string(v);
      } else if (node_set.count(m.key) != 0) {
        collect(run, i, m.key, "", v, 0);
      }
    }
    run.ids.push_back(std::move(ids));
  }
  for (auto &m : run.metrics) m.values.resize(run.records, kNaN);
  return run;
}

std::string key_of(const json &ids, const std::vector<std::string> &set, std::size_t index) {
  std::string k;
  if (set.empty()) {
    k = fmt::format("#{}", index + 1);
  } else {
    for (const auto &f : set) {
      if (!k.empty()) k += "/";
      k += ids[f].get<std::string>();
    }
  }
  if (ids.contains("_replication")) k += " (replication " + ids["_replication"].get<std::string>() + ")";
  return k;
}

// The first key set that every record of both runs has and that is unique within each run.
std::vector<std::string> choose_key(const Run &a, const Run &b, std::string &name) {
  for (const auto &set : kKeySets) {
    bool ok = true;
    for (const Run *r : {&a, &b}) {
      std::set<std::string> seen;
      for (std::size_t i = 0; i < r->records && ok; ++i) {
        for (const auto &f : set) ok = ok && r->ids[i].contains(f);
        if (ok) ok = seen.insert(key_of(r->ids[i], set, i)).second;
      }
      if (!ok) break;
    }
    if (ok && a.records > 0) {
      name = fmt::format("{}", fmt::join(set, " + "));
      return set;
    }
  }
  name = "record position (no id field is present and unique in both runs)";
  return {};
}

// Which direction of a metric is better: what the node's plugin declares for the output (run.json's
// nodes.<id>.outputs, ABI 1.3), the new run's declaration first; higher when nothing is declared.
std::string better_direction(const Run &first, const Run &second, const std::string &node, const std::string &field) {
  for (const Run *r : {&first, &second}) {
    const json *decl = &r->info;
    for (const char *k : {"nodes"}) decl = decl->is_object() && decl->contains(k) ? &(*decl)[k] : nullptr;
    if (decl == nullptr || !decl->is_object() || !decl->contains(node)) continue;
    const json &n = (*decl)[node];
    if (!n.is_object() || !n.contains("outputs") || !n["outputs"].is_object()) continue;
    const json &o = n["outputs"];
    if (auto it = o.find(field); it != o.end() && it->is_object() && it->contains("better") && (*it)["better"].is_string())
      return (*it)["better"].get<std::string>();
  }
  return "higher";
}

json run_summary(const Run &r) {
  return {{"path", r.dir.string()},
          {"pipeline", r.info.value("pipeline", "")},
          {"records", r.records},
          {"records_file", r.records_file.filename().string()},
          {"engine_version", r.info.value("engine_version", "")}};
}

// Whether two files hold the same bytes (both must exist).
bool same_content(const fs::path &x, const fs::path &y) {
  std::error_code ec;
  if (!fs::is_regular_file(x, ec) || !fs::is_regular_file(y, ec)) return false;
  if (fs::file_size(x, ec) != fs::file_size(y, ec) || ec) return false;
  std::ifstream fx(x, std::ios::binary), fy(y, std::ios::binary);
  std::vector<char> bx(1 << 16), by(1 << 16);
  while (fx && fy) {
    fx.read(bx.data(), static_cast<std::streamsize>(bx.size()));
    fy.read(by.data(), static_cast<std::streamsize>(by.size()));
    if (fx.gcount() != fy.gcount() || !std::equal(bx.begin(), bx.begin() + fx.gcount(), by.begin())) return false;
  }
  return !fx.bad() && !fy.bad();
}

// A run's dataset as a setting: a file inside the results folder (a --config-dir run writes its dataset.jsonl
// there) by its name in the folder, not by a path that differs for every run.
json dataset_setting(const Run &r) {
  if (!r.info.contains("dataset") || !r.info["dataset"].is_string()) return r.info.value("dataset", json(nullptr));
  std::error_code ec;
  fs::path d = fs::weakly_canonical(fs::absolute(r.info["dataset"].get<std::string>(), ec), ec);
  fs::path dir = fs::weakly_canonical(fs::absolute(r.dir, ec), ec);
  fs::path rel = d.lexically_relative(dir);
  if (!ec && !rel.empty() && *rel.begin() != ".." && rel.is_relative()) return "(results folder)/" + rel.generic_string();
  return r.info["dataset"];
}

// What differs between the two runs' settings: pipeline, dataset, replications, embedding model, and per
// node its type, plugin version and parameters (as JSON-pointer paths).
json parameter_differences(const Run &a, const Run &b) {
  auto settings = [](const Run &r) {
    const json &info = r.info;
    json s = json::object();
    for (const char *k : {"pipeline", "dataset", "replications", "embedding_model"})
      if (info.contains(k)) s[k] = info[k];
    if (s.contains("dataset")) s["dataset"] = dataset_setting(r);
    json nodes = json::object();
    if (info.contains("nodes") && info["nodes"].is_object())
      for (const auto &[id, n] : info["nodes"].items())
        nodes[id] = {{"uses", n.value("uses", "")}, {"plugin_version", n.value("plugin_version", "")},
                     {"with", n.contains("with") ? n["with"] : json::object()}};
    s["nodes"] = nodes;
    return s;
  };
  json sa = settings(a), sb = settings(b);
  // The same data set under two paths (a relative and an absolute spelling, a copy) is not a difference; two
  // data sets of the same name in the results folders are one where their contents differ.
  if (sa.contains("dataset") && sb.contains("dataset") && a.info["dataset"].is_string() && b.info["dataset"].is_string()) {
    std::error_code ec;
    const fs::path da = a.info["dataset"].get<std::string>(), db = b.info["dataset"].get<std::string>();
    if (sa["dataset"] != sb["dataset"] && same_content(da, db)) sb["dataset"] = sa["dataset"];
    else if (sa["dataset"] == sb["dataset"] && fs::is_regular_file(da, ec) && fs::is_regular_file(db, ec) && !same_content(da, db))
      sb["dataset"] = sb["dataset"].get<std::string>() + " (other content)";
  }
  json out = json::array();
  for (const auto &op : json::diff(sa, sb)) {
    std::string path = op["path"].get<std::string>();
    json::json_pointer ptr(path);
    json item = {{"path", path}};
    item["a"] = sa.contains(ptr) ? sa[ptr] : json(nullptr);
    item["b"] = sb.contains(ptr) ? sb[ptr] : json(nullptr);
    if (op["op"] == "add") item["a"] = nullptr;
    out.push_back(item);
  }
  return out;
}

std::string num(double v, int prec = 4) {
  if (std::isnan(v)) return "-";
  std::string s = fmt::format("{:.{}f}", v, prec);
  return s == "-0.0000" ? "0.0000" : s;
}

std::string pval(double p) { return p < 0.0001 ? fmt::format("{:.1e}", p) : fmt::format("{:.4f}", p); }

std::string esc(const std::string &s) {
  std::string o;
  o.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      default: o += c;
    }
  }
  return o;
}

std::string show(const json &v) {
  if (v.is_null()) return "(absent)";
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_float()) return num(v.get<double>());
  return v.dump();
}

// The records of A and B paired by their key (each B record used once), and the keys left unpaired.
struct Pairing {
  std::string key_name;
  std::vector<std::pair<std::size_t, std::size_t>> pairs;
  std::vector<std::string> pair_keys;
  json unpaired_a = json::array(), unpaired_b = json::array();
};

Pairing pair_records(const Run &a, const Run &b) {
  Pairing pr;
  std::vector<std::string> key = choose_key(a, b, pr.key_name);
  std::unordered_map<std::string, std::size_t> b_index;
  for (std::size_t j = 0; j < b.records; ++j) b_index.emplace(key_of(b.ids[j], key, j), j);
  std::vector<bool> b_used(b.records, false);
  for (std::size_t i = 0; i < a.records; ++i) {
    std::string k = key_of(a.ids[i], key, i);
    auto it = b_index.find(k);
    if (it == b_index.end() || b_used[it->second]) {
      pr.unpaired_a.push_back(k);
      continue;
    }
    b_used[it->second] = true;
    pr.pairs.emplace_back(i, it->second);
    pr.pair_keys.push_back(k);
  }
  for (std::size_t j = 0; j < b.records; ++j)
    if (!b_used[j]) pr.unpaired_b.push_back(key_of(b.ids[j], key, j));
  return pr;
}

// What changed in one pair of records: its values that differ, and the largest difference.
struct Change {
  double score = 0;
  json values = json::array();
};

// B's metric of A's node and field (a node's whole output "value" is the empty field in the other run), or null.
const Metric *same_metric(const Run &r, const Metric &m) {
  auto it = r.metric_index.find(m.node + "\t" + (m.field == "value" ? std::string() : m.field));
  if (it == r.metric_index.end()) it = r.metric_index.find(m.node + "\t" + m.field);
  return it == r.metric_index.end() ? nullptr : &r.metrics[it->second];
}

// One metric over the paired records: the means, the paired bootstrap interval of the difference and the
// test's p (McNemar for booleans, Wilcoxon for numbers); each pair's differing values go to `changes`.
json compare_metric(const Run &a, const Run &b, const Metric &ma, const Metric &mb,
                    const std::vector<std::pair<std::size_t, std::size_t>> &pairs, std::vector<Change> &changes) {
  const bool boolean = !ma.any_number && !mb.any_number;
  std::vector<double> va, vb, d;
  std::uint64_t only_a_true = 0, only_b_true = 0;
  for (std::size_t p = 0; p < pairs.size(); ++p) {
    double x = ma.values[pairs[p].first], y = mb.values[pairs[p].second];
    if (std::isnan(x) || std::isnan(y)) continue;
    va.push_back(x);
    vb.push_back(y);
    d.push_back(y - x);
    if (boolean) {
      only_a_true += (x == 1 && y == 0);
      only_b_true += (x == 0 && y == 1);
    }
    if (x != y) {
      double s = std::fabs(y - x);
      changes[p].score = std::max(changes[p].score, s);
      if (boolean) changes[p].values.push_back({{"node", ma.node}, {"field", ma.field}, {"a", x == 1}, {"b", y == 1}});
      else changes[p].values.push_back({{"node", ma.node}, {"field", ma.field}, {"a", x}, {"b", y}});
    }
  }
  json m = {{"node", ma.node}, {"field", ma.field}, {"type", boolean ? "boolean" : "number"}, {"n", d.size()}};
  m["better"] = better_direction(b, a, ma.node, ma.field);
  // One value in every record of both runs (a weight, a threshold): kept in the JSON, left out of the table.
  m["constant"] = !va.empty() && std::all_of(va.begin(), va.end(), [&](double x) { return x == va[0]; }) &&
                  std::all_of(vb.begin(), vb.end(), [&](double x) { return x == va[0]; });
  if (d.empty()) {
    m.update({{"mean_a", nullptr}, {"mean_b", nullptr}, {"diff", nullptr}, {"ci_low", nullptr}, {"ci_high", nullptr},
              {"p_value", nullptr}, {"test", "none (no record has a value in both runs)"}});
    return m;
  }
  stats::Interval ci = stats::paired_bootstrap_ci(d);
  double diff = stats::mean(vb) - stats::mean(va);
  if (std::all_of(d.begin(), d.end(), [](double x) { return x == 0; })) diff = 0;
  m["mean_a"] = stats::mean(va);
  m["mean_b"] = stats::mean(vb);
  m["diff"] = diff;
  m["ci_low"] = ci.low;
  m["ci_high"] = ci.high;
  if (boolean) {
    m["p_value"] = stats::mcnemar_exact_p(only_a_true, only_b_true);
    m["test"] = "mcnemar_exact";
    m["discordant"] = {{"a_only", only_a_true}, {"b_only", only_b_true}};
  } else {
    m["p_value"] = stats::wilcoxon_signed_rank_p(d);
    m["test"] = "wilcoxon_signed_rank";
  }
  return m;
}

// The pairs that changed most (largest difference first, then most values), at most kChangedRecords of them.
json most_changed(const std::vector<Change> &changes, const std::vector<std::string> &pair_keys, std::size_t &n_changed) {
  std::vector<std::size_t> order;
  for (std::size_t p = 0; p < changes.size(); ++p)
    if (!changes[p].values.empty()) order.push_back(p);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
    if (changes[x].score != changes[y].score) return changes[x].score > changes[y].score;
    return changes[x].values.size() > changes[y].values.size();
  });
  n_changed = order.size();
  json changed = json::array();
  for (std::size_t k = 0; k < order.size() && k < kChangedRecords; ++k) {
    const std::size_t p = order[k];
    changed.push_back({{"id", pair_keys[p]}, {"max_abs_diff", changes[p].score}, {"n_changed", changes[p].values.size()},
                       {"values", changes[p].values}});
  }
  return changed;
}

}  // namespace

json compare_runs(const fs::path &pa, const fs::path &pb) {
  Run a = load_run(pa), b = load_run(pb);
  Pairing pr = pair_records(a, b);
  json metrics = json::array();
  json only_in = json::array();
  std::vector<Change> changes(pr.pairs.size());
  for (const auto &ma : a.metrics) {
    if (const Metric *mb = same_metric(b, ma)) metrics.push_back(compare_metric(a, b, ma, *mb, pr.pairs, changes));
    else only_in.push_back({{"node", ma.node}, {"field", ma.field}, {"in", "a"}});
  }
  for (const auto &mb : b.metrics)
    if (same_metric(a, mb) == nullptr) only_in.push_back({{"node", mb.node}, {"field", mb.field}, {"in", "b"}});
  std::size_t n_changed = 0;
  json changed = most_changed(changes, pr.pair_keys, n_changed);
  return {{"a", run_summary(a)},
          {"b", run_summary(b)},
          {"paired_by", pr.key_name},
          {"n_paired", pr.pairs.size()},
          {"unpaired_a", pr.unpaired_a.size()},
          {"unpaired_b", pr.unpaired_b.size()},
          {"unpaired_a_ids", pr.unpaired_a},
          {"unpaired_b_ids", pr.unpaired_b},
          {"records_changed", n_changed},
          {"bootstrap", {{"resamples", stats::kBootstrapResamples}, {"seed", stats::kBootstrapSeed}, {"level", 0.95},
                         {"method", "percentile interval of the mean paired difference (b - a)"}}},
          {"parameter_differences", parameter_differences(a, b)},
          {"metrics", metrics},
          {"metrics_in_one_run_only", only_in},
          {"changed", changed}};
}

std::string text_report(const json &c) {
  std::string o;
  o += fmt::format("A: {} ({}, {} records)\n", c["a"]["path"].get<std::string>(), c["a"]["pipeline"].get<std::string>(),
                   c["a"]["records"].get<std::size_t>());
  o += fmt::format("B: {} ({}, {} records)\n", c["b"]["path"].get<std::string>(), c["b"]["pipeline"].get<std::string>(),
                   c["b"]["records"].get<std::size_t>());
  o += fmt::format("paired by {}: {} pairs; unpaired: {} only in A, {} only in B\n", c["paired_by"].get<std::string>(),
                   c["n_paired"].get<std::size_t>(), c["unpaired_a"].get<std::size_t>(), c["unpaired_b"].get<std::size_t>());
  for (const char *side : {"a", "b"}) {
    const json &ids = c[std::string("unpaired_") + side + "_ids"];
    if (ids.empty()) continue;
    std::string list;
    for (std::size_t i = 0; i < ids.size() && i < 10; ++i) list += (i ? ", " : "") + ids[i].get<std::string>();
    if (ids.size() > 10) list += fmt::format(", ... and {} more (--json lists all)", ids.size() - 10);
    o += fmt::format("  only in {}: {}\n", side[0] == 'a' ? "A" : "B", list);
  }
  if (!c["parameter_differences"].empty()) {
    o += "settings that differ (A -> B):\n";
    for (const auto &d : c["parameter_differences"]) o += fmt::format("  {}: {} -> {}\n", d["path"].get<std::string>(), show(d["a"]), show(d["b"]));
  } else {
    o += "settings: identical (pipeline, dataset, node types, plugin versions, parameters)\n";
  }
  o += fmt::format("\n95% CI: paired bootstrap, {} resamples, seed {}; p: Wilcoxon signed-rank (numbers), exact McNemar (booleans)\n\n",
                   c["bootstrap"]["resamples"].get<int>(), c["bootstrap"]["seed"].get<std::uint64_t>());
  std::size_t w = 6;
  for (const auto &m : c["metrics"]) w = std::max(w, m["node"].get<std::string>().size() + 1 + m["field"].get<std::string>().size());
  w = std::min<std::size_t>(w, 48);
  o += fmt::format("{:<{}}  {:>6}  {:>8}  {:>8}  {:>8}  {:>20}  {:>8}  {}\n", "metric", w, "n", "mean_a", "mean_b", "diff", "95% CI", "p", "test");
  std::size_t constant = 0;
  for (const auto &m : c["metrics"]) {
    std::string name = m["node"].get<std::string>() + "." + m["field"].get<std::string>();
    if (m.value("constant", false)) {
      ++constant;
      continue;
    }
    if (m["diff"].is_null()) {
      o += fmt::format("{:<{}}  {:>6}  (no paired values)\n", name, w, 0);
      continue;
    }
    std::string ci = fmt::format("[{}, {}]", num(m["ci_low"].get<double>()), num(m["ci_high"].get<double>()));
    double p = m["p_value"].get<double>();
    o += fmt::format("{:<{}}  {:>6}  {:>8}  {:>8}  {:>8}  {:>20}  {:>8}{} {}\n", name, w, m["n"].get<std::size_t>(),
                     num(m["mean_a"].get<double>()), num(m["mean_b"].get<double>()), num(m["diff"].get<double>()), ci,
                     pval(p), p < 0.05 ? "*" : " ", m["test"].get<std::string>() == "mcnemar_exact" ? "McNemar" : "Wilcoxon");
  }
  if (c["metrics"].empty()) o += "(no numeric or boolean node output that both runs have)\n";
  if (!c["metrics_in_one_run_only"].empty()) {
    std::string a, b;
    for (const auto &m : c["metrics_in_one_run_only"]) {
      std::string &list = m["in"] == "a" ? a : b;
      if (!list.empty()) list += ", ";
      list += m["node"].get<std::string>() + "." + m["field"].get<std::string>();
    }
    if (!a.empty()) o += "values only in A (not compared): " + a + "\n";
    if (!b.empty()) o += "values only in B (not compared): " + b + "\n";
  }
  o += fmt::format("(* p < 0.05; {} paired records changed in at least one value", c["records_changed"].get<std::size_t>());
  if (constant > 0) o += fmt::format("; {} values that are the same constant in every record of both runs are not shown, --json lists them", constant);
  o += ")\n";
  if (!c["changed"].empty()) {
    o += "\nchanged most:\n";
    for (const auto &ch : c["changed"]) {
      std::string vals;
      std::size_t k = 0;
      for (const auto &v : ch["values"]) {
        if (k++ == 4) {
          vals += fmt::format(" ... ({} in all)", ch["values"].size());
          break;
        }
        vals += fmt::format("  {}.{} {} -> {}", v["node"].get<std::string>(), v["field"].get<std::string>(), show(v["a"]), show(v["b"]));
      }
      o += fmt::format("  {}:{}\n", ch["id"].get<std::string>(), vals);
    }
  }
  return o;
}

namespace {

constexpr const char *kHtmlHead = R"(<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>evalgraph compare</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;color:#1d2330;background:#f6f7f9}
header{background:#1d2330;color:#fff;padding:14px 24px}header h1{margin:0;font-size:20px}header .sub{opacity:.8;font-size:13px}
main{padding:16px 24px;max-width:1400px}section{background:#fff;border:1px solid #dde1e8;border-radius:6px;padding:12px 16px;margin-bottom:16px}
h2{font-size:16px;margin:0 0 8px}table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:4px 8px;border-bottom:1px solid #eef0f3;vertical-align:top}
th{background:#f0f2f5;font-weight:600}td.n{text-align:right;font-variant-numeric:tabular-nums}.sig{font-weight:700;color:#b3261e}
.up{color:#1b7f3b}.down{color:#b3261e}code{background:#f0f2f5;padding:1px 4px;border-radius:3px}.muted{color:#667085}
</style></head><body>
<header><h1>evalgraph compare</h1><div class="sub">)";

// The page header and the two runs: folders, pipelines, records, and how they were paired.
void html_runs(std::string &o, const json &c) {
  o += esc(fmt::format("A: {} — B: {}", c["a"]["path"].get<std::string>(), c["b"]["path"].get<std::string>()));
  o += "</div></header><main>\n<section id=\"runs\"><h2>Runs</h2><table><tr><th></th><th>folder</th><th>pipeline</th><th>records</th></tr>";
  for (const char *s : {"a", "b"})
    o += fmt::format("<tr><td>{}</td><td><code>{}</code></td><td>{}</td><td class=\"n\">{}</td></tr>", s[0] == 'a' ? "A" : "B",
                     esc(c[s]["path"].get<std::string>()), esc(c[s]["pipeline"].get<std::string>()), c[s]["records"].get<std::size_t>());
  o += fmt::format("</table><p>Paired by <b>{}</b>: <b id=\"n-paired\">{}</b> pairs; unpaired: {} only in A, {} only in B.</p>",
                   esc(c["paired_by"].get<std::string>()), c["n_paired"].get<std::size_t>(), c["unpaired_a"].get<std::size_t>(),
                   c["unpaired_b"].get<std::size_t>());
  for (const char *side : {"a", "b"}) {
    const json &ids = c[std::string("unpaired_") + side + "_ids"];
    if (ids.empty()) continue;
    o += fmt::format("<details><summary>only in {} ({})</summary><p>", side[0] == 'a' ? "A" : "B", ids.size());
    for (std::size_t i = 0; i < ids.size(); ++i) o += (i ? ", " : "") + esc(ids[i].get<std::string>());
    o += "</p></details>";
  }
}

// The settings that differ between the runs (A → B).
void html_settings(std::string &o, const json &c) {
  o += "</section>\n<section id=\"settings\"><h2>Settings that differ (A → B)</h2>";
  if (c["parameter_differences"].empty()) o += "<p class=\"muted\">none: same pipeline, dataset, node types, plugin versions and parameters</p>";
  else {
    o += "<table><tr><th>setting</th><th>A</th><th>B</th></tr>";
    for (const auto &d : c["parameter_differences"])
      o += fmt::format("<tr><td><code>{}</code></td><td>{}</td><td>{}</td></tr>", esc(d["path"].get<std::string>()), esc(show(d["a"])),
                       esc(show(d["b"])));
    o += "</table>";
  }
}

// One row per compared metric: the means, the diff with its interval drawn, p and the test.
void html_metrics(std::string &o, const json &c) {
  o += "</section>\n<section id=\"metrics\"><h2>Metrics</h2>";
  o += fmt::format("<p class=\"muted\">diff = mean B − mean A over the paired records; 95 % interval: paired bootstrap ({} resamples, seed {}); "
                   "p: Wilcoxon signed-rank for numbers, exact McNemar for booleans. The bar shows the interval, the dot the diff; "
                   "the grey line is 0.</p>",
                   c["bootstrap"]["resamples"].get<int>(), c["bootstrap"]["seed"].get<std::uint64_t>());
  double span = 1e-9;
  for (const auto &m : c["metrics"])
    if (!m["diff"].is_null()) span = std::max({span, std::fabs(m["ci_low"].get<double>()), std::fabs(m["ci_high"].get<double>())});
  o += "<table><tr><th>node</th><th>field</th><th>n</th><th>mean A</th><th>mean B</th><th>diff</th><th>95 % CI</th><th></th><th>p</th><th>test</th></tr>";
  std::size_t constant = 0;
  for (const auto &m : c["metrics"]) {
    if (m.value("constant", false)) {
      ++constant;
      continue;
    }
    o += fmt::format("<tr class=\"metric\"><td>{}</td><td>{}</td><td class=\"n\">{}</td>", esc(m["node"].get<std::string>()),
                     esc(m["field"].get<std::string>()), m["n"].get<std::size_t>());
    if (m["diff"].is_null()) {
      o += "<td colspan=\"7\" class=\"muted\">no record has a value in both runs</td></tr>";
      continue;
    }
    double lo = m["ci_low"].get<double>(), hi = m["ci_high"].get<double>(), df = m["diff"].get<double>(), p = m["p_value"].get<double>();
    auto x = [&](double v) { return 100 + v / span * 95; };
    std::string svg = fmt::format(
        "<svg width=\"200\" height=\"16\" viewBox=\"0 0 200 16\"><line x1=\"100\" y1=\"0\" x2=\"100\" y2=\"16\" stroke=\"#bbb\"/>"
        "<rect x=\"{:.1f}\" y=\"5\" width=\"{:.1f}\" height=\"6\" fill=\"{}\" opacity=\".5\"/><circle cx=\"{:.1f}\" cy=\"8\" r=\"3.5\" fill=\"{}\"/></svg>",
        x(lo), std::max(1.0, x(hi) - x(lo)), p < 0.05 ? "#b3261e" : "#5b6b8c", x(df), p < 0.05 ? "#b3261e" : "#1d2330");
    o += fmt::format("<td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n {}\">{}</td><td class=\"n\">[{}, {}]</td><td>{}</td>"
                     "<td class=\"n{}\">{}</td><td>{}</td></tr>",
                     num(m["mean_a"].get<double>()), num(m["mean_b"].get<double>()), df > 0 ? "up" : (df < 0 ? "down" : ""), num(df), num(lo),
                     num(hi), svg, p < 0.05 ? " sig" : "", pval(p), m["test"].get<std::string>() == "mcnemar_exact" ? "exact McNemar" : "Wilcoxon signed-rank");
  }
  o += "</table>";
  if (constant > 0) o += fmt::format("<p class=\"muted\">{} values that are the same constant in every record of both runs (weights, thresholds) are not shown; compare.json lists them.</p>", constant);
}

// The records that changed most, each with its changed values.
void html_changed(std::string &o, const json &c) {
  o += "</section>\n<section id=\"changed\"><h2>Records that changed most</h2>";
  if (c["changed"].empty()) o += "<p class=\"muted\">no paired record changed in any value</p>";
  for (const auto &ch : c["changed"]) {
    o += fmt::format("<details class=\"changed\"><summary><b>{}</b> — {} value(s) changed, largest |Δ| {}</summary>"
                     "<table><tr><th>node.field</th><th>A</th><th>B</th></tr>",
                     esc(ch["id"].get<std::string>()), ch["n_changed"].get<std::size_t>(), num(ch["max_abs_diff"].get<double>()));
    for (const auto &v : ch["values"])
      o += fmt::format("<tr><td>{}.{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>", esc(v["node"].get<std::string>()),
                       esc(v["field"].get<std::string>()), esc(show(v["a"])), esc(show(v["b"])));
    o += "</table></details>";
  }
}

}  // namespace

std::string html_report(const json &c) {
  std::string o = kHtmlHead;
  html_runs(o, c);
  html_settings(o, c);
  html_metrics(o, c);
  html_changed(o, c);
  o += "</section>\n<script>document.querySelectorAll('details.changed').forEach((d,i)=>{if(i<3)d.open=true;});</script>\n</main></body></html>\n";
  return o;
}

json gate(const json &c, const Gate &g) {
  json results = json::array();
  std::size_t failed = 0;
  std::vector<std::string> known;
  for (const auto &m : c["metrics"]) known.push_back(m["node"].get<std::string>() + "." + m["field"].get<std::string>());
  for (const auto &name : g.metrics) {
    const json *m = nullptr;
    for (const auto &x : c["metrics"])
      if (x["node"].get<std::string>() + "." + x["field"].get<std::string>() == name) m = &x;
    if (m == nullptr) {
      std::string one;
      for (const auto &x : c["metrics_in_one_run_only"])
        if (x["node"].get<std::string>() + "." + x["field"].get<std::string>() == name)
          one = fmt::format(" (only run {} has it)", x["in"].get<std::string>() == "a" ? "A" : "B");
      throw CompareError(2, fmt::format("--fail-if-worse {}: no such metric in both runs{}{}; give node.field, e.g. {}",
                                        name, one, did_you_mean(name, known), known.empty() ? "o0.O0" : known.front()));
    }
    if ((*m)["n"].get<std::size_t>() == 0)
      throw CompareError(2, fmt::format("--fail-if-worse {}: no paired record has a value in both runs; nothing to judge",
                                        name));
    const std::string better = m->value("better", std::string("higher"));
    const double diff = (*m)["diff"].get<double>(), p = (*m)["p_value"].get<double>();
    const double worse_by = better == "lower" ? diff : -diff;  // > 0: B is worse than A
    const bool significant = p < g.alpha;
    const bool fail = significant && worse_by > 0 && worse_by > g.min_diff;
    std::string verdict;
    const std::string detail = fmt::format(
        "mean {} → {} (B − A = {:+.4g}, 95 % interval [{:+.4g}, {:+.4g}], {} p = {}, n = {}; {} is better)",
        num((*m)["mean_a"].get<double>()), num((*m)["mean_b"].get<double>()), diff, (*m)["ci_low"].get<double>(),
        (*m)["ci_high"].get<double>(), (*m)["test"].get<std::string>(), pval(p), (*m)["n"].get<std::size_t>(), better);
    if (fail) verdict = fmt::format("worse by {:.4g}, significant at alpha {}", worse_by, g.alpha);
    else if (worse_by > 0 && significant) verdict = fmt::format("worse by {:.4g}, within --min-diff {}", worse_by, g.min_diff);
    else if (worse_by > 0) verdict = fmt::format("worse by {:.4g}, not significant (p ≥ alpha {})", worse_by, g.alpha);
    else verdict = worse_by == 0 ? "unchanged" : "not worse";
    failed += fail ? 1 : 0;
    results.push_back({{"metric", name}, {"better", better}, {"worse_by", worse_by}, {"p_value", p}, {"alpha", g.alpha},
                       {"min_diff", g.min_diff}, {"passed", !fail}, {"verdict", verdict}, {"detail", detail}});
  }
  return {{"passed", failed == 0}, {"failed", failed}, {"results", results}};
}

int run_compare(const std::vector<std::string> &args, bool as_json, const std::string &out_dir, const Gate &g) {
  if (args.size() != 2) {
    std::fprintf(stderr, "evalgraph compare: give two results folders: evalgraph compare RUN_A RUN_B [--json] [-o DIR] "
                         "[--fail-if-worse node.field ...]\n");
    return 2;
  }
  if (!(g.alpha > 0 && g.alpha < 1) || !(g.min_diff >= 0)) {
    std::fprintf(stderr, "evalgraph compare: --alpha is a probability between 0 and 1 (e.g. 0.05), --min-diff a "
                         "difference >= 0 in the metric's units\n");
    return 2;
  }
  try {
    json c = compare_runs(args[0], args[1]);
    json verdict;
    if (!g.metrics.empty()) c["gate"] = verdict = gate(c, g);
    if (as_json) std::cout << c.dump(2) << "\n";
    else std::cout << text_report(c);
    if (!out_dir.empty()) {
      fs::create_directories(out_dir);
      write_file_atomically(fs::path(out_dir) / "compare.json", c.dump(2) + "\n");
      write_file_atomically(fs::path(out_dir) / "compare.html", html_report(c));
      std::fprintf(stderr, "evalgraph compare: wrote %s and %s\n", (fs::path(out_dir) / "compare.html").c_str(),
                   (fs::path(out_dir) / "compare.json").c_str());
      if (!verdict.is_null()) {
        std::vector<junit::Case> cases;
        for (const auto &r : verdict["results"])
          cases.push_back({"evalgraph.compare", r["metric"].get<std::string>() + " not worse",
                           !r["passed"].get<bool>(), r["metric"].get<std::string>() + ": " + r["verdict"].get<std::string>(),
                           r["verdict"].get<std::string>() + "\n" + r["detail"].get<std::string>()});
        write_file_atomically(fs::path(out_dir) / "junit.xml",
                              junit::document("evalgraph compare --fail-if-worse", cases));
      }
    }
    if (verdict.is_null()) return 0;
    for (const auto &r : verdict["results"])
      std::fprintf(stderr, "evalgraph compare: %s %s: %s; %s\n", r["passed"].get<bool>() ? "PASS" : "FAIL",
                   r["metric"].get<std::string>().c_str(), r["verdict"].get<std::string>().c_str(),
                   r["detail"].get<std::string>().c_str());
    if (!verdict["passed"].get<bool>()) {
      std::fprintf(stderr, "evalgraph compare: B is significantly worse than A on %zu of %zu gated metric%s\n",
                   verdict["failed"].get<std::size_t>(), verdict["results"].size(), verdict["results"].size() == 1 ? "" : "s");
      return 4;
    }
    return 0;
  } catch (const CompareError &e) {
    std::fprintf(stderr, "evalgraph compare: %s\n", e.what());
    return e.exit_code();
  }
}

}  // namespace evalgraph::compare
