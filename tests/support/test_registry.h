// The plugin registry the in-process pipeline tests share: the built plugins (and, where the test target defines
// TEST_PLUGIN_DIR, the test fixtures), loaded once per test binary.
#pragma once

#include <filesystem>

#include "plugin/registry.h"

namespace testsupport {

inline evalgraph::PluginRegistry &registry() {
  static evalgraph::PluginRegistry reg = [] {
    evalgraph::PluginRegistry r;
    r.load_directory(evalgraph::builtin_plugin_dir());
#ifdef TEST_PLUGIN_DIR
    std::error_code ec;
    if (!std::filesystem::equivalent(TEST_PLUGIN_DIR, evalgraph::builtin_plugin_dir(), ec)) r.load_directory(TEST_PLUGIN_DIR);
#endif
    return r;
  }();
  return reg;
}

}  // namespace testsupport
