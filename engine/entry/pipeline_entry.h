#pragma once
// The public door into the engine (engine/entry/): what the command line (cli/) and the front ends (frontends/)
// may include, and nothing else of engine/ (tests/layout/check_house_rules.py holds them to it). In the order a
// pipeline goes: declare and check (this header), plan (this header), run (run_entry.h), merge (merge_entry.h),
// estimate's dry run (estimate_entry.h), agreement with people (agree_entry.h), reading finished runs
// (results_entry.h). The headers include the rooms' headers that define the types they take (Pipeline, Plan,
// PluginRegistry, RunOptions); the rooms' other functions stay behind the door.
#include <string>
#include <vector>

#include "config/diagnostics.h"  // ConfigError, Location: a bad pipeline or configuration, with where
#include "config/pipeline.h"     // Pipeline: a declared pipeline; load_pipeline, parse_pipeline
#include "config/yaml_guard.h"   // load_yaml_checked: YAML read with its nesting and aliases bounded
#include "graph/plan.h"          // Plan: a checked pipeline, ready to run; to_dot
#include "io/dataset.h"          // io::open_dataset, io::DataError: data sets as a pipeline reads them
#include "plugin/registry.h"     // PluginRegistry: the plugins found, and the node types they declare

namespace evalgraph {

// Loads the plugins of the search path: `dirs` (--plugin-dir), then EVALGRAPH_PLUGIN_PATH, then the built-in
// folder (plugin/registry.h plugin_search_path). Returns what was refused (a plugin built against another ABI,
// a file that is no plugin), one message each; the rest loads.
std::vector<std::string> load_plugins(PluginRegistry &reg, const std::vector<std::string> &dirs);

// A pipeline declared and checked against the plugins and its data set's columns: ready to run.
// The plan refers to the node types in the registry it was planned with: the registry must outlive it.
struct PlannedPipeline {
  Pipeline pipeline;
  Plan plan;
};

// Reads the pipeline file, checks it and plans it. Throws ConfigError with every problem found (file:line:col).
PlannedPipeline plan_pipeline_file(const std::string &file, const PluginRegistry &reg);

// Plans a pipeline already declared (read from a file, or translated by a front end).
Plan plan_pipeline(const Pipeline &p, const PluginRegistry &reg);

}  // namespace evalgraph
