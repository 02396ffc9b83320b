// The compression family's node types were renamed compress.* → compression.* (engine/plugin/defaults.h): the
// old names still resolve to the same node type, and say so once per process on stderr.
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "plugin/registry.h"
#include "test_registry.h"

namespace {
// What `f` writes to stderr (fd 2), through a temporary file.
template <class F>
std::string stderr_of(F f) {
  std::fflush(stderr);
  std::FILE *tmp = std::tmpfile();
  REQUIRE(tmp != nullptr);
  int saved = dup(2);
  dup2(fileno(tmp), 2);
  f();
  std::fflush(stderr);
  dup2(saved, 2);
  close(saved);
  std::rewind(tmp);
  std::string out;
  for (int c = std::fgetc(tmp); c != EOF; c = std::fgetc(tmp)) out.push_back(static_cast<char>(c));
  std::fclose(tmp);
  return out;
}
}  // namespace

TEST_CASE("the old compress.* names resolve to the compression.* node types, with one deprecation line",
          "[compression][registry]") {
  const evalgraph::PluginRegistry &reg = testsupport::registry();
  for (const char *method : {"anchored", "opaque", "regenerative"}) {
    DYNAMIC_SECTION(method) {
      const std::string old_name = std::string("compress.") + method;
      const std::string new_name = std::string("compression.") + method;
      const evalgraph::NodeTypeInfo *now = reg.find(new_name);
      REQUIRE(now != nullptr);
      const evalgraph::NodeTypeInfo *first = nullptr;
      std::string said = stderr_of([&] { first = reg.find(old_name); });
      CHECK(first == now);
      std::string again = stderr_of([&] { CHECK(reg.find(old_name) == now); });
      CHECK_THAT(said, Catch::Contains("node type '" + old_name + "' is deprecated, it is now '" + new_name + "'"));
      CHECK(std::count(said.begin(), said.end(), '\n') == 1);
      CHECK(again.empty());  // once per process
      CHECK(stderr_of([&] { reg.find(new_name); }).empty());
    }
  }
  CHECK(reg.find("compress.unknown") == nullptr);
}
