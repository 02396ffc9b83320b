#pragma once
// Reading a whole JSON file the engine wrote itself (run.json, report.json) without nlohmann's recursive
// parser: a damaged or hand-edited file nested a million deep must end in a message, not a stack overflow.
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

namespace evalgraph {

// Parses `file` into `out` (nesting at most `max_depth`). False when it cannot be read or is not such JSON;
// `why` (if given) says which, in our words.
bool read_json_file_bounded(const std::filesystem::path &file, nlohmann::json &out, int max_depth = 64,
                            std::string *why = nullptr);

}  // namespace evalgraph
