// What the files of `evalgraph compare` share (compare.h is the command's interface): a run read as metrics and the
// records that changed (compare.cpp reads and pairs), one metric compared over the pairs (statistics.cpp), and the
// number formats of the table, the page and the gate (render.cpp). Not included from outside cli/compare.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace evalgraph::compare::detail {

namespace fs = std::filesystem;
using nlohmann::json;

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

// What changed in one pair of records: its values that differ, and the largest difference.
struct Change {
  double score = 0;
  json values = json::array();
};

// ---- statistics.cpp
// One metric over the paired records: the means, the paired bootstrap interval of the difference and the
// test's p (McNemar for booleans, Wilcoxon for numbers); each pair's differing values go to `changes`.
json compare_metric(const Run &a, const Run &b, const Metric &ma, const Metric &mb,
                    const std::vector<std::pair<std::size_t, std::size_t>> &pairs, std::vector<Change> &changes);
// The pairs that changed most (largest difference first, then most values), at most kChangedRecords of them.
json most_changed(const std::vector<Change> &changes, const std::vector<std::string> &pair_keys, std::size_t &n_changed);

// ---- render.cpp
std::string num(double v, int prec = 4);  // "-" for NaN, else fixed with prec decimals
std::string pval(double p);              // 4 decimals, or scientific below 0.0001
std::string show(const json &v);         // a setting or a value in the table: "(absent)", text, number

}  // namespace evalgraph::compare::detail
