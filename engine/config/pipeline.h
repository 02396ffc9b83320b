#pragma once
// The pipeline as written in YAML: parsed, with the location of everything, and checked for shape
// (unknown keys, types, duplicate ids). Checks that need the plugins and the data are in graph/.
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "config/diagnostics.h"
#include "io/dataset.h"

namespace evalgraph {

// Where each part of a converted YAML value stood, by JSON pointer ("" = the value itself).
using LocationMap = std::map<std::string, Location>;

struct NodeDecl {
  std::string id;
  std::string uses;
  nlohmann::json with = nlohmann::json::object();
  LocationMap with_locations;
  std::map<std::string, std::string> inputs;  // port -> record field ("column" or "node.field")
  std::map<std::string, Location> input_locations;
  std::vector<std::string> needs;
  std::vector<Location> needs_locations;
  std::string group_by, order_by;  // sequence nodes
  Location where, uses_where, group_by_where;
  bool is_sink = false;
};

struct DatasetDecl {
  std::filesystem::path path;  // resolved against the pipeline's folder
  std::string format;          // "", "csv", "jsonl"
  nlohmann::json options = nlohmann::json::object();
  long long limit = -1;  // read at most this many records (-1: all)
  Location where, path_where;
};

// `limits:` — what one record may hold and cost (docs/concepts.md "Limits and hostile data"). A record over one fails
// alone; the run goes on.
struct LimitsDecl {
  io::RecordLimits record;                  // field_bytes, record_bytes, array_items, nesting_depth
  std::size_t sentences_per_answer = 10000;  // passed to every node as _limits; the KSODI operators count
  Location where;
  // What every node receives as its parameter `_limits`.
  nlohmann::json to_json() const;
};

struct ProviderDecl {
  std::string name;
  nlohmann::json config;
  LocationMap locations;  // of the settings, by JSON pointer within `config`
  Location where;
  // Where the setting at `pointer` (a ProviderConfigError's) stands: the setting itself, else the nearest
  // enclosing one, else the provider's name.
  Location at(const std::string &pointer) const;
};

// `budget:` — what a run may spend (docs/cost.md).
struct BudgetDecl {
  double max_cost_usd = -1;  // < 0: no budget
  Location where;
};

// `labels:` — people's labels, in a file of their own (JSONL or CSV) or as fields of the records
// (docs/agreement.md). Checked and read before any record moves (agree/labels.h).
struct LabelFieldDecl {
  std::string name;
  std::string type;                          // binary, ordinal, category, number
  nlohmann::json values = nlohmann::json::array();  // ordinal (in order) and category: the allowed values
  Location at;
};
struct LabelsDecl {
  bool declared = false;
  std::filesystem::path path;  // resolved against the pipeline's folder; empty: the labels are record fields
  std::string path_text;       // as written
  std::string key = "id";      // the field naming the record, in the data set and in the labels file
  std::string annotator;       // the labels file's column naming the person ("" = one label per record)
  std::vector<LabelFieldDecl> fields;
  Location where, path_where, key_where;
  const LabelFieldDecl *field(const std::string &name) const;
  std::vector<std::string> field_names() const;
};

// One entry of `agreement:` — a node's output compared with a label (agree/agreement.h).
struct AgreementDecl {
  std::string name;               // optional; else "metric~label"
  std::string metric;             // node.field[.key]
  std::string node;
  std::vector<std::string> path;  // the field, and any deeper keys
  std::string label;              // a field of labels.fields
  nlohmann::json positive;        // the value that counts as positive (null: true for binary labels)
  Location at, metric_at, label_at;
  std::string display() const { return name.empty() ? metric + "~" + label : name; }
};

// The statistics an `expect:` entry with `label:` may gate on.
inline const std::vector<std::string> kLabelGateStats = {
    "kappa", "weighted_kappa", "accuracy", "balanced_accuracy", "balanced_accuracy_cv", "precision", "recall", "f1",
    "auroc", "spearman", "kendall", "pearson", "alpha"};

// One entry of `expect:` — what must hold after the run (docs/ci.md); checked by engine/expect/.
struct ExpectDecl {
  std::string name;               // optional, for the tables and junit.xml; else label() below
  std::string metric;             // as written: "node.field" (or "node.field.key" into an object output)
  std::string node;               // the node id (before the first '.')
  std::vector<std::string> path;  // the field, and any deeper keys
  std::string stat = "mean";      // mean, median, min, max, p1 ... p99, share; with label: kappa, auroc, ...
  std::string label_field;        // gates on agreement with this label field (stat: an agreement statistic)
  double quantile = -1;           // median: 0.5, pNN: NN/100
  bool has_min = false, has_max = false;
  double min = 0, max = 0;
  nlohmann::json equals = true;  // share: the value whose share is taken
  double confidence = 0;         // > 0: the interval at this level is judged, not the point value
  std::vector<std::pair<std::string, nlohmann::json>> where;  // record field -> value (a list: any of them)
  Location at, metric_at, stat_at, label_at;
  std::vector<Location> where_at;  // parallel to `where`
  std::string label() const;       // "o0.O0 mean", "judge.value mean where lang=de"
};

struct Pipeline {
  std::filesystem::path file;
  std::string source_text;  // the YAML as read, copied into the results folder
  std::string name;
  std::string description;
  DatasetDecl dataset;
  LimitsDecl limits;
  int replications = 1;
  std::vector<ProviderDecl> providers;
  BudgetDecl budget;
  std::vector<ExpectDecl> expect;
  LabelsDecl labels;
  std::vector<AgreementDecl> agreement;
  std::string default_provider;    // chat: the only or the first provider, or providers' `default: true`
  std::string embedding_provider;  // "" = offline TF-IDF
  Location embedding_where;
  std::vector<NodeDecl> nodes;
  std::vector<NodeDecl> sinks;
  std::filesystem::path output_dir;  // resolved; results go to <output_dir>/<name>__<timestamp>/
  Location where;
};

// `node.field[.key...]` into the node and the path inside its output; false when a part is empty or there is no
// field (what expect:, agreement: and `evalgraph agree --agreement` name).
bool split_metric(const std::string &metric, std::string &node, std::vector<std::string> &path);

// Parses and shape-checks a pipeline file. Throws ConfigError with every problem found.
Pipeline load_pipeline(const std::filesystem::path &file);
Pipeline parse_pipeline(const std::string &yaml_text, const std::filesystem::path &file_for_messages);

}  // namespace evalgraph
