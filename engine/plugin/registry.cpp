#include "plugin/registry.h"

#include "plugin/defaults.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <cctype>
#include <boost/dll/runtime_symbol_info.hpp>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <set>

namespace evalgraph {
namespace fs = std::filesystem;

const char *kind_name(eg_node_kind kind) {
  switch (kind) {
    case EG_KIND_OPERATOR: return "operator";
    case EG_KIND_JUDGE: return "judge";
    case EG_KIND_INDEX: return "index";
    case EG_KIND_TRANSFORM: return "transform";
    case EG_KIND_SINK: return "sink";
  }
  return "unknown";
}

namespace {
// The new name of a renamed node type (engine/plugin/defaults.h), or nullptr.
const char *renamed_to(const std::string &old_name) {
  for (const auto &r : defaults::kRenamedTypes)
    if (old_name == r.old_name) return r.new_name;
  return nullptr;
}

void say_deprecated_once(const std::string &old_name, const std::string &new_name) {
  static std::mutex mutex;
  static std::set<std::string> said;
  std::lock_guard<std::mutex> lock(mutex);
  if (!said.insert(old_name).second) return;
  std::fprintf(stderr, "evalgraph: warning: node type '%s' is deprecated, it is now '%s'; write `uses: %s`\n",
               old_name.c_str(), new_name.c_str(), new_name.c_str());
}

std::vector<std::string> string_list(const char *const *list) {
  std::vector<std::string> out;
  if (list == nullptr) return out;
  for (; *list != nullptr; ++list) out.emplace_back(*list);
  return out;
}
}  // namespace

bool plain_field_name(const std::string &f) {
  bool plain = !f.empty() && std::all_of(f.begin(), f.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '*' ||
           static_cast<unsigned char>(c) >= 0x80;
  });
  return plain && f[0] != '_';
}

std::string check_output_declaration(const nlohmann::json &outputs) {
  if (!outputs.is_object()) return "the declaration of outputs is not a JSON object";
  static const std::set<std::string> types{"number", "integer", "boolean", "string", "array", "object"};
  for (const auto &[field, decl] : outputs.items()) {
    if (!plain_field_name(field)) return fmt::format("declares output '{}', which is not a plain field name", field);
    if (!decl.is_object()) return fmt::format("output '{}': its declaration is not an object", field);
    if (decl.contains("type") && (!decl["type"].is_string() || types.count(decl["type"].get<std::string>()) == 0))
      return fmt::format("output '{}': type must be one of number, integer, boolean, string, array, object", field);
    if (decl.contains("better") &&
        (!decl["better"].is_string() || (decl["better"] != "higher" && decl["better"] != "lower")))
      return fmt::format("output '{}': better must be \"higher\" or \"lower\"", field);
  }
  return {};
}

eg_status NodeTypeInfo::call_describe(const std::string &params, std::string &out) const {
  eg_buffer b{};
  eg_status st = EG_ERROR;
  try {
    st = describe(params.data(), params.size(), &b);
  } catch (...) {
    st = EG_ERROR;
  }
  out = b.data != nullptr ? std::string(b.data, b.size) : std::string();
  if (b.release != nullptr) b.release(&b);
  return st;
}

std::string NodeTypeInfo::output_type(const std::string &field) const {
  auto it = outputs.find(field);
  if (it == outputs.end() || !it->is_object()) return {};
  return it->value("type", std::string());
}

bool NodeTypeInfo::lower_is_better(const std::string &field) const {
  auto it = outputs.find(field);
  return it != outputs.end() && it->is_object() && it->value("better", std::string()) == "lower";
}

// Whether a node type of this descriptor has the member ending at `end` (added in ABI minor `minor`).
static bool covers(const eg_plugin *d, uint16_t minor, size_t end) {
  return d->abi_minor >= minor && d->node_type_size >= end;
}

std::string PluginRegistry::check_descriptor(const eg_plugin *d) const {
  if (d == nullptr) return "its entry evalgraph_plugin_v1() returned NULL";
  if (d->magic != EG_MAGIC)
    return fmt::format("wrong magic number 0x{:08X} (expected 0x{:08X}): not an evalgraph plugin descriptor", d->magic,
                       EG_MAGIC);
  if (d->abi_major != EG_ABI_MAJOR)
    return fmt::format("built for plugin ABI {}.{}, this engine speaks ABI {}.{}; rebuild the plugin against this SDK",
                       d->abi_major, d->abi_minor, EG_ABI_MAJOR, EG_ABI_MINOR);
  if (d->abi_minor > EG_ABI_MINOR)
    return fmt::format("built for plugin ABI {}.{}, newer than this engine's {}.{}; upgrade evalgraph", d->abi_major,
                       d->abi_minor, EG_ABI_MAJOR, EG_ABI_MINOR);
  // A node type only grows at its end: ABI 1.2 added describe, so a 1.0 or 1.1 plugin's node types are shorter.
  if (d->struct_size < sizeof(eg_plugin) || d->node_type_size < EG_NODE_TYPE_SIZE_1_0)
    return fmt::format("descriptor sizes ({} / {} bytes) smaller than ABI {}.0 requires ({} / {}); the plugin is corrupt",
                       d->struct_size, d->node_type_size, EG_ABI_MAJOR, sizeof(eg_plugin), EG_NODE_TYPE_SIZE_1_0);
  if (d->name == nullptr || d->version == nullptr) return "descriptor has no plugin name or version";
  if (d->node_type_count > 0 && d->node_types == nullptr) return "descriptor lists node types but gives no array";
  for (size_t i = 0; i < d->node_type_count; ++i) {
    // Node types are laid out with the plugin's own struct size (it may be newer, never older).
    auto *t = reinterpret_cast<const eg_node_type *>(reinterpret_cast<const char *>(d->node_types) +
                                                     i * d->node_type_size);
    if (t->name == nullptr || *t->name == '\0') return fmt::format("node type #{} has no name", i);
    if (t->kind < EG_KIND_OPERATOR || t->kind > EG_KIND_SINK)
      return fmt::format("node type '{}' has unknown kind {}", t->name, static_cast<int>(t->kind));
    if (t->create == nullptr || t->destroy == nullptr || t->process == nullptr)
      return fmt::format("node type '{}' lacks create/destroy/process", t->name);
    for (const char *const *list : {t->reads, t->reads_optional, t->writes}) {
      for (; list != nullptr && *list != nullptr; ++list) {
        std::string f = *list;
        if (!plain_field_name(f))
          return fmt::format("node type '{}' declares field '{}': fields are letters, digits, '_' and '-', not "
                             "starting with '_'", t->name, f);
      }
    }
    if (t->params_schema != nullptr && *t->params_schema != '\0' &&
        !nlohmann::json::accept(t->params_schema))
      return fmt::format("node type '{}' publishes a parameter schema that is not valid JSON", t->name);
    if (covers(d, 3, offsetof(eg_node_type, outputs) + sizeof(t->outputs)) && t->outputs != nullptr) {
      auto decl = nlohmann::json::parse(t->outputs, nullptr, false);
      if (std::string why = check_output_declaration(decl); !why.empty())
        return fmt::format("node type '{}' {}", t->name, why);
    }
  }
  return {};
}

bool PluginRegistry::load_file(const fs::path &file) {
  fs::path abs = fs::absolute(file);
  auto refuse = [&](const std::string &why) {
    errors_.push_back(fmt::format("plugin {}: {}", abs.string(), why));
    return false;
  };
  auto lp = std::make_unique<LoadedPlugin>();
  lp->path = abs;
  try {
    // rtld_now: an unresolved symbol fails here, not at the first call. rtld_local: plugins do not see
    // each other's symbols.
    lp->library.load(abs, boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local);
  } catch (const std::exception &e) {
    return refuse(fmt::format("cannot be loaded: {}", e.what()));
  }
  if (!lp->library.has(EG_ENTRY_SYMBOL)) {
    return refuse(fmt::format("not an evalgraph plugin: it does not export {}() (a plugin built for another ABI "
                              "major exports another symbol)",
                              EG_ENTRY_SYMBOL));
  }
  auto entry = lp->library.get<const eg_plugin *()>(EG_ENTRY_SYMBOL);
  const eg_plugin *d = nullptr;
  try {
    d = entry();
  } catch (...) {
    return refuse("its entry function threw an exception");
  }
  if (std::string why = check_descriptor(d); !why.empty()) return refuse(why);
  lp->descriptor = d;

  // Names must be unique across everything loaded; a clash refuses the whole library.
  std::vector<NodeTypeInfo> infos;
  std::set<std::string> own;
  for (size_t i = 0; i < d->node_type_count; ++i) {
    auto *t = reinterpret_cast<const eg_node_type *>(reinterpret_cast<const char *>(d->node_types) +
                                                     i * d->node_type_size);
    std::string name = t->name;
    if (auto it = types_.find(name); it != types_.end())
      return refuse(fmt::format("node type '{}' is already provided by {}", name, it->second.plugin->path.string()));
    if (!own.insert(name).second) return refuse(fmt::format("node type '{}' is declared twice", name));
    NodeTypeInfo info;
    info.type = t;
    info.name = name;
    info.reads = string_list(t->reads);
    info.reads_optional = string_list(t->reads_optional);
    info.writes = string_list(t->writes);
    info.flags = t->flags;
    if (covers(d, 2, offsetof(eg_node_type, describe) + sizeof(t->describe))) info.describe = t->describe;
    if (covers(d, 3, offsetof(eg_node_type, outputs) + sizeof(t->outputs)) && t->outputs != nullptr)
      info.outputs = nlohmann::json::parse(t->outputs);
    info.params_schema = (t->params_schema != nullptr && *t->params_schema != '\0')
                             ? nlohmann::json::parse(t->params_schema)
                             : nlohmann::json::object();
    infos.push_back(std::move(info));
  }
  plugins_.push_back(std::move(lp));
  for (auto &info : infos) {
    info.plugin = plugins_.back().get();
    types_.emplace(info.name, std::move(info));
  }
  return true;
}

void PluginRegistry::load_directory(const fs::path &dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return;
  std::vector<fs::path> files;
  for (const auto &e : fs::directory_iterator(dir, ec)) {
    if (e.is_regular_file() && e.path().extension() == ".so") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  for (const auto &f : files) {
    // The same file reached through two search-path entries is loaded once.
    bool seen = std::any_of(plugins_.begin(), plugins_.end(), [&](const auto &p) {
      std::error_code e2;
      return fs::equivalent(p->path, f, e2);
    });
    if (!seen) load_file(f);
  }
}

// The node type of that name, or of the name it was renamed to (a deprecation line once); null when none.
const NodeTypeInfo *PluginRegistry::find(const std::string &name) const {
  if (auto it = types_.find(name); it != types_.end()) return &it->second;
  const char *new_name = renamed_to(name);
  if (new_name == nullptr) return nullptr;
  auto it = types_.find(new_name);
  if (it == types_.end()) return nullptr;
  say_deprecated_once(name, new_name);
  return &it->second;
}

std::vector<std::string> PluginRegistry::names() const {
  std::vector<std::string> out;
  for (const auto &[n, _] : types_) out.push_back(n);
  return out;
}

fs::path builtin_plugin_dir() {
  fs::path exe_dir = boost::dll::program_location().parent_path();
  // Build tree: <build>/evalgraph + <build>/plugins. Installed: <prefix>/bin + <prefix>/lib/evalgraph/plugins.
  for (const fs::path &cand : {exe_dir / "plugins", exe_dir.parent_path() / "lib" / "evalgraph" / "plugins",
                               exe_dir.parent_path() / "lib64" / "evalgraph" / "plugins"}) {
    std::error_code ec;
    if (fs::is_directory(cand, ec)) return cand;
  }
  return exe_dir / "plugins";
}

std::vector<fs::path> plugin_search_path(const std::vector<std::string> &extra_dirs) {
  std::vector<fs::path> dirs{builtin_plugin_dir()};
  if (const char *env = std::getenv("EVALGRAPH_PLUGIN_PATH"); env != nullptr) {
    std::string s = env;
    size_t start = 0;
    while (start <= s.size()) {
      size_t end = s.find(':', start);
      if (end == std::string::npos) end = s.size();
      if (end > start) dirs.emplace_back(s.substr(start, end - start));
      start = end + 1;
    }
  }
  for (const auto &d : extra_dirs) dirs.emplace_back(d);
  return dirs;
}

}  // namespace evalgraph
