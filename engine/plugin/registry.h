#pragma once
// Finds, loads and checks plugin libraries, and keeps them loaded while their node types are in use.
#include <boost/dll/shared_library.hpp>
#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "evalgraph/plugin.h"

namespace evalgraph {

// A loaded library and its descriptor.
struct LoadedPlugin {
  std::filesystem::path path;
  boost::dll::shared_library library;
  const eg_plugin *descriptor = nullptr;
};

// One node type offered by a loaded plugin — or, for a type with describe() (ABI 1.2), what one node of a
// pipeline made of it reads and writes (graph/plan.cpp asks; Plan keeps those).
struct NodeTypeInfo {
  const eg_node_type *type = nullptr;
  const LoadedPlugin *plugin = nullptr;
  std::string name;
  std::vector<std::string> reads, reads_optional, writes;
  nlohmann::json params_schema;  // parsed once at load
  uint32_t flags = 0;            // the type's flags (a described node: its own)
  // ABI 1.2: the type's describe(), NULL when it has none (or its plugin was built for an older ABI).
  eg_status (*describe)(const char *, size_t, eg_buffer *) = nullptr;
  // Calls describe() on a node's parameters: the status, and the plugin's answer in `out` (its buffer released).
  eg_status call_describe(const std::string &params, std::string &out) const;
  nlohmann::json info;  // a described node: what describe() said about it ("info"), recorded in run.json
  // ABI 1.3: what the plugin declares about its outputs, {"field": {"type": "number", "better": "lower"}, ...};
  // an empty object when it declares nothing (expect: and compare then go by the values they see).
  nlohmann::json outputs = nlohmann::json::object();
  // The declared type of an output ("" when not declared) and whether lower values are the better ones.
  std::string output_type(const std::string &field) const;
  bool lower_is_better(const std::string &field) const;
  bool has(uint32_t flag) const { return (flags & flag) != 0; }
};

// Checks a declaration of outputs (eg_node_type.outputs or describe()'s "outputs"): "" when it is well formed,
// else what is wrong with it.
std::string check_output_declaration(const nlohmann::json &outputs);

// Whether a port or output name is plain: letters, digits, '_' and '-' (or '*'), not starting with '_'.
bool plain_field_name(const std::string &f);

const char *kind_name(eg_node_kind kind);

class PluginRegistry {
 public:
  // Loads every *.so in the directories (non-recursive, sorted by name). Libraries that are refused are
  // reported in errors() (one line each: file and reason) and skipped; the rest stay usable.
  void load_directory(const std::filesystem::path &dir);
  // Loads one library; returns false and records the reason when it is refused.
  bool load_file(const std::filesystem::path &file);

  const NodeTypeInfo *find(const std::string &name) const;
  std::vector<std::string> names() const;
  const std::vector<std::string> &errors() const { return errors_; }
  const std::vector<std::unique_ptr<LoadedPlugin>> &plugins() const { return plugins_; }
  const std::map<std::string, NodeTypeInfo> &types() const { return types_; }

 private:
  std::string check_descriptor(const eg_plugin *d) const;
  std::vector<std::unique_ptr<LoadedPlugin>> plugins_;
  std::map<std::string, NodeTypeInfo> types_;
  std::vector<std::string> errors_;
};

// The directories searched, in order: the built-in folder next to the executable, then each
// EVALGRAPH_PLUGIN_PATH entry (':'-separated), then the --plugin-dir values.
std::vector<std::filesystem::path> plugin_search_path(const std::vector<std::string> &extra_dirs);
std::filesystem::path builtin_plugin_dir();

}  // namespace evalgraph
