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

// One entry of `expect:` — what must hold after the run (docs/ci.md); checked by engine/expect/.
struct ExpectDecl {
  std::string name;               // optional, for the tables and junit.xml; else label() below
  std::string metric;             // as written: "node.field" (or "node.field.key" into an object output)
  std::string node;               // the node id (before the first '.')
  std::vector<std::string> path;  // the field, and any deeper keys
  std::string stat = "mean";      // mean, median, min, max, p1 ... p99, share
  double quantile = -1;           // median: 0.5, pNN: NN/100
  bool has_min = false, has_max = false;
  double min = 0, max = 0;
  nlohmann::json equals = true;  // share: the value whose share is taken
  double confidence = 0;         // > 0: the interval at this level is judged, not the point value
  std::vector<std::pair<std::string, nlohmann::json>> where;  // record field -> value (a list: any of them)
  Location at, metric_at, stat_at;
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
  std::string default_provider;    // chat: the only or the first provider, or providers' `default: true`
  std::string embedding_provider;  // "" = offline TF-IDF
  Location embedding_where;
  std::vector<NodeDecl> nodes;
  std::vector<NodeDecl> sinks;
  std::filesystem::path output_dir;  // resolved; results go to <output_dir>/<name>__<timestamp>/
  Location where;
};

// Parses and shape-checks a pipeline file. Throws ConfigError with every problem found.
Pipeline load_pipeline(const std::filesystem::path &file);
Pipeline parse_pipeline(const std::string &yaml_text, const std::filesystem::path &file_for_messages);

}  // namespace evalgraph
