// Helpers of the python node's tests: a folder with a pipeline, its data and its scripts, run through the CLI.
#pragma once

#include <filesystem>
#include <string>

#include "test_support.h"

namespace pytest {

struct Run {
  int exit_code = -1;
  std::string output;
  std::filesystem::path dir;  // the results folder (the last line `evalgraph run` prints)
};

// `evalgraph run` (extra: flags) of <dir>/<pipeline>; the run's folder from its last output line.
inline Run run(const testsupport::TempDir &d, const std::string &pipeline, const std::string &extra = "") {
  auto r = testsupport::run_cmd(testsupport::evalgraph_cmd("run -q " + extra + " " + (d.path / pipeline).string()));
  Run out{r.exit_code, r.output, {}};
  std::filesystem::path last = testsupport::last_line(r.output);
  if (std::filesystem::is_directory(last)) out.dir = last;
  return out;
}

// A pipeline of one python node over data.jsonl with a sink.jsonl (out.jsonl), results under <dir>/out.
inline std::string pipeline(const std::string &node_yaml, const std::string &extra = "") {
  return "name: py\ndataset: {path: data.jsonl, format: jsonl}\nnodes:\n" + node_yaml + extra +
         "sinks:\n  - uses: sink.jsonl\n    with: {file: out.jsonl}\noutput: {dir: out}\n";
}

}  // namespace pytest
