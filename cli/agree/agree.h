#pragma once
// `evalgraph agree RUN_DIR [--labels FILE] [--agreement METRIC~LABEL ...] [--json] [-o DIR]`: the agreement of a
// finished run with people's labels (engine/entry/agree_entry.h), printed as a table (or one JSON object with
// --json); -o writes agreement.json and junit.xml. Exit 4 when an expect: gate on agreement fails.
#include <string>
#include <vector>

namespace evalgraph::agree_cli {

struct Options {
  std::string labels_file;
  std::vector<std::string> entries;
  bool json = false;
  bool quiet = false;
  std::string output_dir;
};

int run_command(const std::vector<std::string> &args, const Options &o);

}  // namespace evalgraph::agree_cli
