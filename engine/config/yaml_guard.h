#pragma once
// Guards for YAML that a user (or an attacker) wrote, before and after yaml-cpp reads it:
//   - nesting: yaml-cpp parses recursively (0.7 stops at 2000 levels with the bare message "bad file"); the
//     text is measured first and anything deeper than kMaxYamlDepth is refused with its line and column;
//   - expansion: an alias (*name) repeats the node its anchor (&name) marks, so ten lines can stand for a
//     billion values ("billion laughs"); a document is refused when it stands for more than kMaxYamlValues.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include <yaml-cpp/yaml.h>

#include "config/diagnostics.h"

namespace evalgraph {

constexpr int kMaxYamlDepth = 64;
constexpr std::size_t kMaxYamlValues = 100000;
// Depth with aliases expanded: a chain of aliases may nest deeper than the text does, a cycle never ends.
constexpr int kMaxYamlExpandedDepth = 4 * kMaxYamlDepth;

// The place (1-based line and column) where `text` first nests collections deeper than `max_depth`, or
// nullopt. Block collections count by indentation and "- " entries, flow collections by their brackets;
// quoted scalars, block scalars (| and >) and comments are passed over. An upper estimate, never below the
// depth yaml-cpp will see.
std::optional<Location> yaml_too_deep(std::string_view text, const std::string &file, int max_depth = kMaxYamlDepth);

// Parses YAML text as yaml-cpp does, after the nesting check, and checks its expansion. Throws ConfigError
// (one Diagnostic at file:line:column) for a syntax error, too deep a document, too large an expansion
// or an alias that contains itself.
YAML::Node load_yaml_checked(const std::string &text, const std::string &file);

// The same for a file read whole; a file that cannot be read is a ConfigError naming it.
YAML::Node load_yaml_file_checked(const std::string &file);

}  // namespace evalgraph
