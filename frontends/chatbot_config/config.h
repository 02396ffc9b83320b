#pragma once
// Seed 004's configuration folder, read as it is: evaluation.yaml, llm_parameters.yaml, the prompt file it
// names (llm_system_prompts.yaml), llm_tasks.yaml — plus our evalgraph_models.yaml, which names the model or
// chatbot behind each `type: backend` transformation (their separate backend service does not exist here).
// Everything is checked before any LLM call; each problem is reported with file:line:column and what to do.
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "entry/pipeline_entry.h"

namespace evalgraph::chatbot {

struct Transformation {
  std::string id, label, type;  // type as written: backend, manual, llm, http
  Location where;
  std::string plugin;           // transform.llm | transform.http | transform.manual
  nlohmann::json with = nlohmann::json::object();  // the plugin's parameters
  nlohmann::json provider;      // transform.llm: the provider block (base_url, model, api_key_file, ...)
  std::string column;           // transform.manual: the column holding the text
};

struct Criterion {
  std::string name, display;
  bool is_task = true;
  std::string node_type;  // index plugin (indices)
  std::string description;  // task description (llm_tasks.yaml)
  double weight = 0;
  Location where;
};

struct DataFile {
  std::string name;  // as in evaluation.yaml
  std::filesystem::path path;
  Location where;
};

struct Experiment {
  std::filesystem::path config_dir, project_dir;
  std::string experiment_name;
  std::vector<DataFile> data_files;
  int replications = 1;
  std::string csv_separator = ",";
  std::string input_column = "Original", output_column = "Transformed";
  Location input_column_where;
  std::vector<Transformation> transformations;
  std::vector<Criterion> criteria;  // tasks, then indices, in configuration order
  bool has_weighting = false;       // score_weighting given (else: every criterion weight 1)
  nlohmann::json judge_provider;    // base_url, model, api_key_file
  nlohmann::json judge_inference = nlohmann::json::object();
  std::map<std::string, std::string> system_prompts;
  bool needs_judge() const;
};

// Reads and checks the configuration folder. Index names are resolved against the registry's INDEX node
// types: the node type of that exact name, or "index.<slug>" (slug: lower case, ä→ae ö→oe ü→ue ß→ss, other
// characters → '_'). Throws ConfigError with every problem found. `only_transform` skips the judge checks.
Experiment load_experiment(const std::filesystem::path &config_dir, const PluginRegistry &reg, bool only_transform);

// "Prägnanz und Einfachheit" -> "praegnanz_und_einfachheit"
std::string slug(const std::string &s);

// Reads a data file (.csv with the separator, or .xlsx: first sheet) as header + rows of text cells.
struct Table {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  std::vector<std::size_t> lines;  // 1-based source line (csv) or sheet row of each row
};
Table read_table(const std::filesystem::path &file, const std::string &separator);

}  // namespace evalgraph::chatbot
