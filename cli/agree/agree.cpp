#include "agree/agree.h"

#include <fmt/format.h>

#include <cstdio>
#include <filesystem>

#include "entry/agree_entry.h"
#include "entry/results_entry.h"
#include "util/atomic_file.h"
#include "util/exit_codes.h"

namespace evalgraph::agree_cli {
namespace fs = std::filesystem;
using nlohmann::json;

int run_command(const std::vector<std::string> &args, const Options &o) {
  if (args.size() != 1) {
    std::fprintf(stderr,
                 "evalgraph agree: give exactly one results folder\n\nusage:\n  evalgraph agree RUN_DIR "
                 "[--labels FILE] [--agreement METRIC~LABEL ...] [--json] [-o DIR]\n");
    return exit_code::usage;
  }
  AgreeRequest req{args[0], o.labels_file, o.entries};
  AgreeResult r = agree_run(req);
  json out = {{"run", args[0]}, {"agreement", r.agreement}};
  if (!r.verdict.is_null()) out["expectations"] = r.verdict;
  if (!o.output_dir.empty()) {
    fs::create_directories(o.output_dir);
    write_file_atomically(fs::path(o.output_dir) / "agreement.json", out.dump(2) + "\n");
    json v = r.verdict.is_null() ? json{{"passed", true}, {"failed", 0}, {"total", 0}, {"results", json::array()}}
                                 : r.verdict;
    write_file_atomically(fs::path(o.output_dir) / "junit.xml",
                          expectations_junit(v, r.pipeline_name + " agreement", r.seconds));
  }
  if (o.json)
    std::printf("%s\n", out.dump().c_str());
  else
    std::printf("%s", agree::agreement_text(r.agreement).c_str());
  if (!r.verdict.is_null() && !announce_expectations(r.verdict, r.pipeline_name, o.quiet))
    return kExitExpectationFailed;
  return 0;
}

}  // namespace evalgraph::agree_cli
