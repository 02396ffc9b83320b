// Pipeline validation: every kind of mistake gives a message with file:line:column before anything runs.
#include <catch2/catch.hpp>

#include "config/pipeline.h"
#include "graph/plan.h"
#include "test_registry.h"
#include "test_support.h"

using namespace evalgraph;
using testsupport::TempDir;

namespace {

const char *kData = R"({"id":1,"text":"hello","other":"x","conv":"a","turn":1}
{"id":2,"text":"world","other":"y","conv":"a","turn":2}
)";

using testsupport::registry;

// Validates a pipeline text; returns the diagnostics (empty when valid).
std::vector<Diagnostic> check(const std::string &yaml, Plan *plan_out = nullptr) {
  TempDir dir;
  dir.write("data.jsonl", kData);
  auto file = dir.write("p.yaml", yaml);
  try {
    Pipeline p = load_pipeline(file);
    Plan plan = build_plan(p, registry(), read_dataset_columns(p));
    if (plan_out != nullptr) {
      plan_out->nodes.clear();
      for (auto &n : plan.nodes) plan_out->edge_reasons.push_back(n.decl->id);  // ids in execution order
    }
  } catch (const ConfigError &e) {
    return e.diagnostics();
  }
  return {};
}

std::string first(const std::vector<Diagnostic> &d) {
  REQUIRE_FALSE(d.empty());
  std::string s = d.front().str();
  // Make the temporary file name stable for the assertions.
  return s.substr(s.find("p.yaml"));
}

const char *kHead = "name: t\ndataset: {path: data.jsonl}\n";

}  // namespace

TEST_CASE("a valid pipeline passes and is ordered by its dependencies", "[pipeline]") {
  Plan plan;
  auto d = check(std::string(kHead) +
                     "nodes:\n"
                     "  - id: joined\n    uses: test.concat\n    inputs: {a: up.upper, b: other}\n"
                     "  - id: up\n    uses: test.upper\n",
                 &plan);
  INFO((d.empty() ? "" : d.front().str()));
  REQUIRE(d.empty());
  CHECK(plan.edge_reasons == std::vector<std::string>{"up", "joined"});
}

TEST_CASE("unknown keys are reported with a did-you-mean", "[pipeline]") {
  CHECK(first(check(std::string(kHead) + "replicatoins: 2\n")) ==
        "p.yaml:3:1: error: unknown key 'replicatoins' in the pipeline (did you mean 'replications'?); allowed: name, "
        "description, dataset, limits, replications, providers, embeddings, nodes, sinks, output, budget, expect, labels, agreement");
  CHECK(first(check(std::string(kHead) + "nodes:\n  - id: a\n    uses: test.upper\n    whith: {}\n")) ==
        "p.yaml:6:5: error: unknown key 'whith' in a node (did you mean 'with'?); allowed: id, uses, with, inputs, needs, "
        "group_by, order_by, description");
}

TEST_CASE("an unknown plugin names the closest one", "[pipeline]") {
  CHECK(first(check(std::string(kHead) + "nodes:\n  - id: a\n    uses: test.uper\n")) ==
        "p.yaml:5:11: error: unknown node type 'test.uper' (did you mean 'test.upper'?); `evalgraph plugins` lists the "
        "loaded ones (add a folder with --plugin-dir or EVALGRAPH_PLUGIN_PATH)");
}

TEST_CASE("parameters are checked against the node's schema, at the parameter's position", "[pipeline]") {
  std::string base = std::string(kHead) + "nodes:\n  - id: p\n    uses: test.params\n    with:\n";
  CHECK(first(check(base + "      mode: fsat\n")) ==
        "p.yaml:7:13: error: node 'p' (test.params): parameter at 'with/mode' \"fsat\" is not one of: fast, careful, "
        "refuse (did you mean 'fast'?)");
  CHECK(first(check(base + "      mode: fast\n      weight: 1.5\n")) ==
        "p.yaml:8:15: error: node 'p' (test.params): parameter at 'with/weight' 1.5 is above the maximum 1");
  CHECK(first(check(base + "      mode: fast\n      count: \"3\"\n")) ==
        "p.yaml:8:14: error: node 'p' (test.params): parameter at 'with/count' expected integer, got string \"3\"");
  CHECK(first(check(base + "      mode: fast\n      wieght: 0.5\n")) ==
        "p.yaml:8:7: error: node 'p' (test.params): parameter at 'with/wieght' unknown parameter 'wieght' (did you mean "
        "'weight'?); known: count, mode, weight");
  CHECK(first(check(base + "      weight: 0.5\n")) ==
        "p.yaml:7:7: error: node 'p' (test.params): parameter missing required parameter 'mode'");
}

TEST_CASE("a field nobody provides is an error naming the port and the columns", "[pipeline]") {
  std::string msg = first(check(std::string(kHead) + "nodes:\n  - id: a\n    uses: test.upper\n    inputs: {text: txet}\n"));
  CHECK_THAT(msg, Catch::StartsWith("p.yaml:6:14: error: port 'text' of node 'a' reads field 'txet', which neither the "
                                    "dataset nor an upstream node provides (did you mean 'text'?)"));
  CHECK_THAT(msg, Catch::Contains("dataset columns: id, text, other, conv, turn"));
  // Reading an output the upstream node does not write.
  CHECK_THAT(first(check(std::string(kHead) + "nodes:\n  - id: a\n    uses: test.upper\n  - id: b\n    uses: "
                                              "test.concat\n    inputs: {a: a.uper}\n")),
             Catch::StartsWith("p.yaml:8:14: error: node 'a' (test.upper) does not write 'uper' (did you mean 'upper'?)"));
}

TEST_CASE("duplicate ids, unknown needs and cycles", "[pipeline]") {
  CHECK(first(check(std::string(kHead) + "nodes:\n  - id: a\n    uses: test.upper\n  - id: a\n    uses: test.upper\n")) ==
        "p.yaml:6:9: error: duplicate node id 'a'; ids must be unique");
  CHECK(first(check(std::string(kHead) + "nodes:\n  - id: a\n    uses: test.upper\n    needs: [bb]\n  - id: b\n    uses: test.upper\n")) ==
        "p.yaml:6:13: error: node 'a' needs 'bb', which is not a node id (did you mean 'b'?)");
  CHECK(first(check(std::string(kHead) +
                    "nodes:\n"
                    "  - id: a\n    uses: test.concat\n    inputs: {a: c.joined}\n"
                    "  - id: b\n    uses: test.concat\n    inputs: {a: a.joined}\n"
                    "  - id: c\n    uses: test.concat\n    inputs: {a: b.joined}\n")) ==
        "p.yaml:4:5: error: the nodes form a cycle: a -> b -> c -> a; a node may only read from or need nodes that come "
        "before it");
}

TEST_CASE("YAML syntax errors and shape errors carry positions", "[pipeline]") {
  CHECK_THAT(first(check("name: t\ndataset: {path: data.jsonl\n")), Catch::StartsWith("p.yaml:3:1: error: YAML syntax"));
  CHECK(first(check("name: t\ndataset: {path: data.jsonl}\nnodes: {a: 1}\n")) == "p.yaml:3:8: error: 'nodes' must be a list");
  CHECK(first(check("name: t\ndataset: {path: missing.jsonl}\nnodes:\n  - id: a\n    uses: test.upper\n"))
            .rfind("p.yaml:2:17: error: dataset:", 0) == 0);
}

TEST_CASE("sinks and nodes are not interchangeable, sequence nodes need group_by", "[pipeline]") {
  CHECK_THAT(first(check(std::string(kHead) + "sinks:\n  - uses: test.upper\n")),
             Catch::Contains("'test.upper' is not a sink (its kind is operator)"));
  CHECK_THAT(first(check(std::string(kHead) + "nodes:\n  - id: s\n    uses: test.seq\n")),
             Catch::Contains("is a sequence node: give `group_by"));
  CHECK(check(std::string(kHead) + "nodes:\n  - id: s\n    uses: test.seq\n    group_by: conv\n    order_by: turn\n").empty());
}

TEST_CASE("provider settings expand VAR and VAR:-default references, an unset variable is an error", "[pipeline]") {
  TempDir dir;
  dir.write("data.jsonl", kData);
  setenv("EG_TEST_BASE", "http://10.0.0.7:8000/v1", 1);
  auto file = dir.write("p.yaml", std::string(kHead) +
                                      "providers:\n  j:\n    base_url: ${EG_TEST_BASE}\n    model: ${EG_TEST_MODEL:-qwen}\n"
                                      "nodes:\n  - id: a\n    uses: test.upper\n");
  Pipeline p = load_pipeline(file);
  CHECK(p.providers[0].config["base_url"] == "http://10.0.0.7:8000/v1");
  CHECK(p.providers[0].config["model"] == "qwen");
  unsetenv("EG_TEST_BASE");
  CHECK(first(check(std::string(kHead) + "providers:\n  j:\n    base_url: ${EG_TEST_BASE}\n")) ==
        "p.yaml:4:3: error: provider 'j': environment variable EG_TEST_BASE is not set (write ${EG_TEST_BASE:-default} "
        "for a default)");
}
