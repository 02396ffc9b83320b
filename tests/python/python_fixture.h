// Helpers of the python node's tests: a pipeline of one python node (run it with testsupport::run_pipeline).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "test_support.h"

namespace pytest {

// A pipeline of one python node over data.jsonl with a sink.jsonl (out.jsonl), results under <dir>/out.
inline std::string pipeline(const std::string &node_yaml, const std::string &extra = "") {
  return "name: py\ndataset: {path: data.jsonl, format: jsonl}\nnodes:\n" + node_yaml + extra +
         "sinks:\n  - uses: sink.jsonl\n    with: {file: out.jsonl}\noutput: {dir: out}\n";
}

// A python node `id` calling `function` of the script `file` (checks.py), `with_extra`: further keys of its with.
inline std::string node(const std::string &id, const std::string &function, const std::string &with_extra = "",
                        const std::string &file = "checks.py") {
  return "  - id: " + id + "\n    uses: python\n    with: {file: " + file + ", function: " + function + with_extra + "}\n";
}

// Writes <d>/p.yaml, the pipeline of `node_yaml`, and runs it (`evalgraph run -q`).
inline testsupport::RunResult run_node(const testsupport::TempDir &d, const std::string &node_yaml) {
  d.write("p.yaml", pipeline(node_yaml));
  return testsupport::run_pipeline(d, "p.yaml");
}

// run_node's records (its out.jsonl), the run required to end with `exit_code` (1: some records failed).
inline std::vector<nlohmann::json> run_node_records(const testsupport::TempDir &d, const std::string &node_yaml,
                                                    int exit_code) {
  auto r = run_node(d, node_yaml);
  INFO(r.output);
  REQUIRE(r.exit_code == exit_code);
  return testsupport::read_jsonl(r.dir / "out.jsonl");
}

}  // namespace pytest
