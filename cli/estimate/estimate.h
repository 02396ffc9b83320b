#pragma once
// `evalgraph estimate PIPELINE`: the dry run of engine/entry/estimate_entry.h, printed (docs/cost.md).
#include <string>
#include <vector>

#include "entry/estimate_entry.h"

namespace evalgraph::estimate {

// The text table.
std::string format_table(const nlohmann::json &est);

// The command: loads the pipeline and plugins, estimates, prints the table (or the JSON) on stdout.
// Returns the exit code (configuration errors are thrown as ConfigError).
int run_command(const std::string &pipeline_file, bool as_json, const Options &opt, const std::vector<std::string> &plugin_dirs);
}  // namespace evalgraph::estimate
