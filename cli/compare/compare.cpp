#include "compare/compare.h"

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

#include "compare/compare_internal.h"
#include "entry/results_entry.h"
#include "util/atomic_file.h"
#include "util/exit_codes.h"
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
constexpr int kMaxDepth = 3;  // node.field.sub.sub: deeper values are evidence, not metrics

// Fields that identify a record, tried in this order; the first set that is present in every record of
// both runs and unique within each run pairs them. Otherwise records pair by their position.
const std::vector<std::vector<std::string>> kKeySets = {
    {"id"}, {"record_id"}, {"unit_id"}, {"uid"}, {"example_id"}, {"conversation_id", "turn"},
    {"session_id", "checkpoint"}, {"data_file", "row", "transformation"}};

// A run and its metrics, a pair of records that changed: compare_internal.h, with the statistics
// (statistics.cpp) and the number formats (render.cpp) that compare_runs uses.
using detail::Change;
using detail::Metric;
using detail::Run;

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
    throw CompareError(exit_code::usage, fmt::format("{}: no such folder (give two results folders of `evalgraph run`)", dir.string()));
  fs::path rj = run_folder::summary(dir);
  if (!fs::exists(rj)) {
    std::string why = run_folder::resumable(dir)
                          ? fmt::format("the run did not finish; finish it with `evalgraph run --resume {}`", dir.string())
                          : "a results folder of `evalgraph run` holds run.json, pipeline.yaml and the sinks' files";
    throw CompareError(exit_code::usage, fmt::format("{}: not a results folder: no run.json in it ({})", dir.string(), why));
  }
  std::string why;
  if (!read_json_file_bounded(rj, run.info, kMaxResultsDepth, &why) || !run.info.is_object())
    throw CompareError(exit_code::runtime, fmt::format("{}: not valid JSON ({}); the results folder is damaged", rj.string(),
                                      why.empty() ? "not an object" : why));
  if (run.info.contains("nodes") && run.info["nodes"].is_object())
    for (const auto &[id, _] : run.info["nodes"].items()) run.nodes.push_back(id);
  run.records_file = records_file_of(dir, run.info);
  if (run.records_file.empty())
    throw CompareError(exit_code::usage, fmt::format("{}: no records to compare: the run wrote no JSONL records (add `- uses: sink.jsonl` "
                                      "with `file: detailed.jsonl` to the pipeline's sinks)",
                                      dir.string()));
  std::ifstream rin(run.records_file, std::ios::binary);
  if (!rin) throw CompareError(exit_code::runtime, fmt::format("{}: cannot open", run.records_file.string()));
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
      throw CompareError(exit_code::runtime, fmt::format("{}:{}: not a JSON object; the results file is damaged", run.records_file.string(), lineno));
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

// B's metric of A's node and field (a node's whole output "value" is the empty field in the other run), or null.
const Metric *same_metric(const Run &r, const Metric &m) {
  auto it = r.metric_index.find(m.node + "\t" + (m.field == "value" ? std::string() : m.field));
  if (it == r.metric_index.end()) it = r.metric_index.find(m.node + "\t" + m.field);
  return it == r.metric_index.end() ? nullptr : &r.metrics[it->second];
}

}  // namespace

using detail::compare_metric;
using detail::most_changed;

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

int run_compare(const std::vector<std::string> &args, bool as_json, const std::string &out_dir, const Gate &g) {
  if (args.size() != 2) {
    std::fprintf(stderr, "evalgraph compare: give two results folders: evalgraph compare RUN_A RUN_B [--json] [-o DIR] "
                         "[--fail-if-worse node.field ...]\n");
    return exit_code::usage;
  }
  if (!(g.alpha > 0 && g.alpha < 1) || !(g.min_diff >= 0)) {
    std::fprintf(stderr, "evalgraph compare: --alpha is a probability between 0 and 1 (e.g. 0.05), --min-diff a "
                         "difference >= 0 in the metric's units\n");
    return exit_code::usage;
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
    if (verdict.is_null()) return exit_code::ok;
    for (const auto &r : verdict["results"])
      std::fprintf(stderr, "evalgraph compare: %s %s: %s; %s\n", r["passed"].get<bool>() ? "PASS" : "FAIL",
                   r["metric"].get<std::string>().c_str(), r["verdict"].get<std::string>().c_str(),
                   r["detail"].get<std::string>().c_str());
    if (!verdict["passed"].get<bool>()) {
      std::fprintf(stderr, "evalgraph compare: B is significantly worse than A on %zu of %zu gated metric%s\n",
                   verdict["failed"].get<std::size_t>(), verdict["results"].size(), verdict["results"].size() == 1 ? "" : "s");
      return exit_code::check_failed;
    }
    return exit_code::ok;
  } catch (const CompareError &e) {
    std::fprintf(stderr, "evalgraph compare: %s\n", e.what());
    return e.exit_code();
  }
}

}  // namespace evalgraph::compare
