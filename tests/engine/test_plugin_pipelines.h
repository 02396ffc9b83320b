// Pipelines of the engine tests' own node types (tests/engine/test_plugins).
#pragma once

#include <string>

namespace testsupport {

// test.slow (`ms` milliseconds a record) over data.jsonl, its records to out.jsonl under the folder `out_dir`.
inline std::string slow_pipeline(int ms, const std::string &out_dir) {
  return "name: r\ndataset: {path: data.jsonl}\nnodes:\n  - id: s\n    uses: test.slow\n    with: {ms: " + std::to_string(ms) +
         "}\nsinks:\n  - uses: sink.jsonl\n    with: {file: out.jsonl}\noutput: {dir: " + out_dir + "}\n";
}

}  // namespace testsupport
