// Plugin loading: good plugins load; each kind of broken library is refused with one clear line.
#include <catch2/catch.hpp>

#include "plugin/registry.h"

using namespace evalgraph;

TEST_CASE("test plugins load from a folder, with their node types and flags", "[registry]") {
  PluginRegistry reg;
  reg.load_directory(TEST_PLUGIN_DIR);
  INFO((reg.errors().empty() ? "" : reg.errors().front()));
  REQUIRE(reg.errors().empty());
  const NodeTypeInfo *pt = reg.find("test.passthrough");
  REQUIRE(pt != nullptr);
  CHECK(pt->type->kind == EG_KIND_OPERATOR);
  CHECK(pt->has(EG_FLAG_THREAD_SAFE));
  CHECK(pt->reads == std::vector<std::string>{"text"});
  CHECK(std::string(pt->plugin->descriptor->version) == "1.0.0");
  const NodeTypeInfo *seq = reg.find("test.seq");
  REQUIRE(seq != nullptr);
  CHECK(seq->has(EG_FLAG_SEQUENCE));
  CHECK(reg.find("test.params")->params_schema["required"][0] == "mode");
}

TEST_CASE("broken libraries are refused with the file and the reason", "[registry]") {
  struct Case {
    const char *file;
    const char *reason;
  };
  const Case cases[] = {
      {"not_a_plugin.so", "not an evalgraph plugin: it does not export evalgraph_plugin_v1()"},
      {"v2_entry_only.so", "does not export evalgraph_plugin_v1()"},
      {"wrong_magic.so", "wrong magic number 0xDEADBEEF"},
      {"abi_major.so", "built for plugin ABI 2.3, this engine speaks ABI 1.3; rebuild the plugin"},
      {"abi_minor_newer.so", "built for plugin ABI 1.4, newer than this engine's 1.3; upgrade evalgraph"},
      {"unresolved_symbol.so", "evalgraph_symbol_that_does_not_exist"},
      {"duplicate_type.so", "node type 'test.passthrough' is already provided by"},
      {"bad_outputs.so", "node type 'broken.node' output 'score': type must be one of number, integer, boolean"},
  };
  for (const auto &c : cases) {
    DYNAMIC_SECTION(c.file) {
      PluginRegistry reg;
      reg.load_directory(TEST_PLUGIN_DIR);
      REQUIRE(reg.errors().empty());
      std::size_t before = reg.types().size();
      CHECK_FALSE(reg.load_file(std::string(BROKEN_DIR) + "/" + c.file));
      REQUIRE(reg.errors().size() == 1);
      const std::string &msg = reg.errors().front();
      CHECK_THAT(msg, Catch::Contains(c.file));
      CHECK_THAT(msg, Catch::Contains(c.reason));
      CHECK(msg.find('\n') == std::string::npos);  // one line
      CHECK(reg.types().size() == before);          // nothing of it was registered
    }
  }
}

TEST_CASE("a folder with broken libraries still yields the good ones", "[registry]") {
  PluginRegistry reg;
  reg.load_directory(TEST_PLUGIN_DIR);
  reg.load_directory(BROKEN_DIR);
  CHECK(reg.find("test.passthrough") != nullptr);
  CHECK(reg.find("broken.node") == nullptr);
  CHECK(reg.errors().size() == 8);
}

TEST_CASE("a plugin built for ABI 1.0 (the shorter host table) still loads into this 1.3 host (and has no describe or outputs)", "[registry]") {
  STATIC_REQUIRE(EG_ABI_MAJOR == 1);
  STATIC_REQUIRE(EG_ABI_MINOR == 3);
  PluginRegistry reg;
  CHECK(reg.load_file(std::string(ABI10_DIR) + "/test_abi_1_0.so"));
  INFO((reg.errors().empty() ? "" : reg.errors().front()));
  CHECK(reg.errors().empty());
  const NodeTypeInfo *t = reg.find("test.abi_1_0");
  REQUIRE(t != nullptr);
  CHECK(t->plugin->descriptor->abi_minor == 0);
  CHECK(t->plugin->descriptor->host_size < sizeof(eg_host));
  CHECK(t->plugin->descriptor->node_type_size < sizeof(eg_node_type));
  CHECK(t->describe == nullptr);
  CHECK(t->outputs.empty());
  CHECK(t->has(EG_FLAG_THREAD_SAFE));
}
