#pragma once
// The entry of `evalgraph agree RUN_DIR` (docs/agreement.md): the agreement of a finished run's records (a merged
// sharded run too) with people's labels, without running anything again and without an LLM call. The run's
// pipeline (its copy in the run folder, resolved against its original location) says what the labels are and
// what to compare; --labels and --agreement replace its labels file and its agreement: entries.
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace evalgraph {

struct AgreeRequest {
  std::filesystem::path run_dir;
  std::filesystem::path labels_file;  // "" = the pipeline's labels (path: or record fields)
  std::vector<std::string> entries;   // METRIC~LABEL; replace the pipeline's agreement: when given
};

struct AgreeResult {
  nlohmann::json agreement;  // as run.json's "agreement"
  nlohmann::json verdict;    // the pipeline's expect: entries with label: (null when it has none)
  std::string pipeline_name;
  double seconds = 0;
};

// Throws ConfigError (exit 2: no labels declared, an unknown label field, a bad labels file or entry) or
// std::runtime_error (exit 3: the run's files cannot be read).
AgreeResult agree_run(const AgreeRequest &req);

}  // namespace evalgraph
