// What the files of the configuration front end's commands share (experiment.cpp, combine.cpp); not a public header.
#pragma once

#include <yaml-cpp/yaml.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "entry/pipeline_entry.h"

namespace evalgraph::chatbot::detail {

// A generated pipeline as YAML: keys in their order, strings plain where that reads back the same, else literal
// blocks or quoted (experiment.cpp).
void emit(YAML::Emitter &em, const nlohmann::ordered_json &j);
// Now as YYYYMMDD-HHMMSS, local time: the name of a results folder.
std::string timestamp();
// A ConfigError naming every node type in `names` whose plugin is not loaded.
void require_plugins(const PluginRegistry &reg, const std::vector<std::string> &names);

}  // namespace evalgraph::chatbot::detail
