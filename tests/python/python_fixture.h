// Helpers of the python node's tests: a pipeline of one python node (run it with testsupport::run_pipeline).
#pragma once

#include <filesystem>
#include <string>

#include "test_support.h"

namespace pytest {

// A pipeline of one python node over data.jsonl with a sink.jsonl (out.jsonl), results under <dir>/out.
inline std::string pipeline(const std::string &node_yaml, const std::string &extra = "") {
  return "name: py\ndataset: {path: data.jsonl, format: jsonl}\nnodes:\n" + node_yaml + extra +
         "sinks:\n  - uses: sink.jsonl\n    with: {file: out.jsonl}\noutput: {dir: out}\n";
}

}  // namespace pytest
