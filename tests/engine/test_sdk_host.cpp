// The host's run_info service (ABI 1.1) through the SDK's C++ Host: what the executor sets is what a plugin
// reads; a host table of ABI 1.0 (shorter, no run_info) gives an empty object instead of a crash. Also the SDK's
// node declaration (NodeSpec by field name, ports by name) and its reading of the host's `_` parameters.
#include <catch2/catch.hpp>
#include <cstddef>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "evalgraph/input.hpp"
#include "evalgraph/output_file.hpp"
#include "evalgraph/plugin.hpp"
#include "exec/host.h"

using nlohmann::json;

TEST_CASE("Host::run_info: the executor's answer, the LLM-only fallback, errors, and a 1.0 host", "[host][abi]") {
  evalgraph::HostServices services(nullptr, "", "");
  const eg_host *table = services.table();
  REQUIRE(table->abi_minor == EG_ABI_MINOR);
  REQUIRE(table->struct_size == sizeof(eg_host));
  REQUIRE(table->run_info != nullptr);
  evalgraph::Host host(table);

  // No run going on and no provider: only the (empty) LLM usage.
  CHECK(host.run_info() == json{{"llm", json::object()}});

  int asked = 0;
  services.set_run_info([&] {
    ++asked;
    return json{{"records", 3}, {"failed_records", 1}, {"llm", {{"judge", {{"calls", 3}}}}}};
  });
  eg_call c{};
  evalgraph::Call call(&c);
  json info = host.run_info(&call);
  CHECK(info["records"] == 3);
  CHECK(info["failed_records"] == 1);
  CHECK(info["llm"]["judge"]["calls"] == 3);
  CHECK(asked == 1);

  // A host of ABI 1.0: its table ends before run_info (whatever lies beyond is not read).
  eg_host old = *table;
  old.abi_minor = 0;
  old.struct_size = offsetof(eg_host, run_info);
  evalgraph::Host old_host(&old);
  CHECK_FALSE(old_host.offers(offsetof(eg_host, run_info)));
  CHECK(old_host.run_info(&call) == json::object());
  CHECK(asked == 1);  // not called
  CHECK(evalgraph::Host(nullptr).run_info() == json::object());

  // A failure inside the host is an error status, thrown as HostError by the C++ layer.
  services.set_run_info([]() -> json { throw std::runtime_error("no counts"); });
  CHECK_THROWS_AS(host.run_info(), evalgraph::HostError);
  eg_buffer b{};
  CHECK(table->run_info(table, nullptr, &b) == EG_ERROR);
  CHECK_THAT(evalgraph::take_host_buffer(b), Catch::Contains("no counts"));

  services.set_run_info(nullptr);  // the run ended
  CHECK(host.run_info() == json{{"llm", json::object()}});
}

// ---- the node declaration (evalgraph::NodeSpec by field name), ports by name, the host's `_` parameters ----
namespace {
const evalgraph::NodeSpec kPair{.name = "test.pair",
                                .reads = {"a"},
                                .reads_optional = {"b", "c"},
                                .writes = {{"score", "number", "lower"}, "details", {"n", "integer"}},
                                .flags = EG_FLAG_THREAD_SAFE,
                                .params = evalgraph::no_params()};
// Reads port "c" by name (resolved in the constructor) and "a", through a Record of the spec.
class PairNode : public evalgraph::RawNode {
 public:
  PairNode(const evalgraph::Host &, const evalgraph::NoParams &) {}
  std::string process_raw(evalgraph::Call &, std::string_view input) override {
    const evalgraph::Record in(input, kPair);
    return json{{"a", in.text(a_)}, {"c", in.text(c_)}, {"c_port", in.port(c_)}}.dump();
  }
  const evalgraph::Port a_ = kPair.port("a"), c_ = kPair.port("c");
};
// Asks for a port its spec does not declare.
class Misdeclared : public PairNode {
 public:
  using PairNode::PairNode;
  const evalgraph::Port d_ = kPair.port("d");
};
std::vector<std::string> names(const char *const *list) {
  std::vector<std::string> out;
  for (; list != nullptr && *list != nullptr; ++list) out.emplace_back(*list);
  return out;
}
}  // namespace

TEST_CASE("NodeSpec: declared by field name, ports resolved by name, typed writes as the outputs JSON", "[sdk][abi]") {
  const eg_node_type t = evalgraph::node_type<PairNode>(kPair);
  CHECK(t.kind == EG_KIND_OPERATOR);  // the default kind
  CHECK(std::string(t.name) == "test.pair");
  REQUIRE(t.params_schema != nullptr);  // no_params(): an object without properties
  CHECK(json::parse(t.params_schema).at("additionalProperties") == false);
  CHECK(names(t.reads) == std::vector<std::string>{"a"});
  CHECK(names(t.reads_optional) == std::vector<std::string>{"b", "c"});
  CHECK(names(t.writes) == std::vector<std::string>{"score", "details", "n"});
  CHECK(t.flags == EG_FLAG_THREAD_SAFE);
  // The typed writes as the outputs JSON; "details", a plain name, has none.
  REQUIRE(t.outputs != nullptr);
  CHECK(json::parse(t.outputs) ==
        json{{"score", {{"type", "number"}, {"better", "lower"}}}, {"n", {{"type", "integer"}}}});
  // Without any typed write: no outputs at all.
  const eg_node_type plain =
      evalgraph::node_type<PairNode>({.name = "test.plain", .writes = {"x"}, .params = evalgraph::no_params()});
  CHECK(plain.outputs == nullptr);

  CHECK(kPair.port("a").index == 0);
  CHECK(kPair.port("c").index == 2);
  CHECK_THROWS_WITH(kPair.port("d"), "test.pair: port 'd' is not declared in the node type's reads or reads_optional");

  void *inst = nullptr;
  eg_buffer err{};
  REQUIRE(t.create(nullptr, "{}", &inst, &err) == EG_OK);
  const std::string in = R"({"c": "see", "b": 1, "a": "ay", "other": [1]})";
  eg_buffer out{};
  REQUIRE(t.process(inst, nullptr, in.data(), in.size(), &out) == EG_OK);
  CHECK(json::parse(evalgraph::detail::take_buffer(out)) == json{{"a", "ay"}, {"c", "see"}, {"c_port", "c"}});
  t.destroy(inst);

  // A node that reads an undeclared port fails at create(), naming the node and the port.
  const eg_node_type bad = evalgraph::node_type<Misdeclared>(kPair);
  CHECK(bad.create(nullptr, "{}", &inst, &err) == EG_ERROR);
  CHECK(evalgraph::detail::take_buffer(err) ==
        "test.pair: port 'd' is not declared in the node type's reads or reads_optional");
}

TEST_CASE("SDK: the host's _limits and _output_dir, read for every plugin", "[sdk]") {
  const evalgraph::InputLimits d = evalgraph::input_limits(json::object());
  CHECK(d.sentences_per_answer == 10000);
  CHECK(d.nesting_depth == evalgraph::kDefaultNestingDepth);
  const evalgraph::InputLimits l =
      evalgraph::input_limits(json{{"_limits", {{"sentences_per_answer", 7}, {"nesting_depth", 3}}}});
  CHECK(l.sentences_per_answer == 7);
  CHECK(l.nesting_depth == 3);
  // Values a host would not send keep the defaults.
  const json odd{{"_limits", {{"sentences_per_answer", -1}, {"nesting_depth", "x"}}}};
  CHECK(evalgraph::input_limits(odd).sentences_per_answer == 10000);
  CHECK(evalgraph::input_limits(odd).nesting_depth == evalgraph::kDefaultNestingDepth);
  // Values beyond what the field holds are its largest value, not a wrapped one (2^32 + 1 read as an int is 1).
  const json big{{"_limits", {{"sentences_per_answer", 18446744073709551615ull}, {"nesting_depth", 4294967297ll}}}};
  CHECK(evalgraph::input_limits(big).sentences_per_answer == std::numeric_limits<std::size_t>::max());
  CHECK(evalgraph::input_limits(big).nesting_depth == std::numeric_limits<int>::max());
  CHECK(evalgraph::input_limits(json{{"_limits", {{"nesting_depth", 2147483648ll}}}}).nesting_depth ==
        std::numeric_limits<int>::max());

  // A sink's files: inside the host's _output_dir, at relative paths that stay there (their folders made).
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "eg_test_sink_files";
  std::filesystem::remove_all(dir);
  const evalgraph::SinkFiles files(json{{"_output_dir", dir.string()}}, "acme.sink");
  CHECK(files.dir() == dir);
  CHECK(files.path("out.jsonl") == dir / "out.jsonl");
  CHECK(files.path("sub/deeper/out.csv") == dir / "sub/deeper/out.csv");
  CHECK(std::filesystem::is_directory(dir / "sub/deeper"));
  for (const char *bad : {"", "/etc/passwd", "../out.csv", "sub/../../out.csv"})
    CHECK_THROWS_WITH(files.path(bad),
                      "parameter file '" + std::string(bad) + "' must be a relative path inside the output directory");
  std::filesystem::remove_all(dir);
  CHECK_THROWS_WITH(evalgraph::SinkFiles(json::object(), "acme.sink"), "acme.sink: the host did not pass _output_dir");
  CHECK_THROWS_WITH(evalgraph::SinkFiles(json{{"_output_dir", ""}}, "acme.sink"),
                    "acme.sink: the host did not pass _output_dir");
}
