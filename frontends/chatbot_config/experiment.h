#pragma once
// Seed 004's chatbot evaluation, a front end above the engine: the configuration folder becomes a dataset (data
// rows × transformations, JSONL) and a native pipeline (transformations → judges and indices → score → report
// sink), both saved in the run folder (dataset.jsonl, pipeline.yaml), then run through the entry of `evalgraph
// run` (engine/entry/run_entry.h). combine-experiments runs the same way (the folders' rows through
// chatbot.report); create-dataset asks a model once.
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "chatbot_config/config.h"
#include "entry/run_entry.h"

namespace evalgraph::chatbot {

struct RunSettings {
  std::filesystem::path config_dir;
  bool only_transform = false;
  bool report = true;  // add the sink.html_report sink (report.html)
  int jobs = 1;
  bool progress = false;
  eg_log_level stderr_level = EG_LOG_WARN;
  bool no_cache = false;
  std::string cache_path;               // "" = the default cache
  std::filesystem::path results_root;   // "" = <project>/results
  std::function<void(HostServices *)> on_host;  // called with the host before the run and with nullptr after
};

// The generated pipeline as YAML text (the dataset is "dataset.jsonl" next to it).
std::string generate_pipeline_yaml(const Experiment &e, const PluginRegistry &reg, bool only_transform,
                                   const std::filesystem::path &results_root);
// Writes the dataset (rows × transformations) as JSONL; returns the number of records.
std::size_t write_dataset(const Experiment &e, const std::filesystem::path &file);

// Validates everything, then runs through run_pipeline. Throws ConfigError (nothing was run; no results folder
// left behind), io::DataError, std::runtime_error.
RunResult run_experiment(const RunSettings &s, const PluginRegistry &reg);

// Merges result folders (all folders under results_root with a detailed_results.jsonl when `folders` is
// empty) into <results_root>/combined_experiments/<timestamp>/ with the same report files: their rows
// (combined_rows.jsonl) are the dataset of a pipeline whose one sink is chatbot.report in rows mode, run through
// run_pipeline, so the folder is a results folder (pipeline.yaml, run.json, run.log) plus sources.json.
// Refuses folders whose input/output column names differ. Returns the new folder.
std::filesystem::path combine_experiments(const std::vector<std::filesystem::path> &folders,
                                          const std::filesystem::path &results_root, const PluginRegistry &reg);

// create_dataset.yaml → one LLM request → data/<dataset_name>.<csv|xlsx>. Returns the file written;
// `warnings` receives a note when the count differs from num_examples.
struct CreateSettings {
  std::filesystem::path config_dir;
  bool no_cache = true;
  std::string cache_path;
};
std::filesystem::path create_dataset(const CreateSettings &s, std::vector<std::string> &warnings);

// Parses a list of examples out of an LLM answer: a JSON array (of strings, or of objects with one text
// field), else numbered ("1.", "1)") or bulleted ("-", "*", "•") lines; prose around the list is ignored.
std::vector<std::string> parse_example_list(const std::string &answer);

}  // namespace evalgraph::chatbot
