#pragma once
// `evalgraph compare RUN_A RUN_B [--json] [-o DIR]`: pairs the records of two results folders by id (and
// replication) and tests every numeric or boolean node output both runs have (stats.h).
#include <filesystem>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

namespace evalgraph::compare {

// A folder that is not a finished results folder, or records that cannot be read: carries the exit code
// (util/exit_codes.h; usage: the folder is not what compare needs, runtime: broken data).
class CompareError : public std::runtime_error {
 public:
  CompareError(int exit_code, const std::string &msg) : std::runtime_error(msg), exit_code_(exit_code) {}
  int exit_code() const noexcept { return exit_code_; }

 private:
  int exit_code_;
};

// The whole comparison as the JSON that --json prints (and compare.json holds).
nlohmann::json compare_runs(const std::filesystem::path &a, const std::filesystem::path &b);

std::string text_report(const nlohmann::json &c);  // the table printed by default
std::string html_report(const nlohmann::json &c);  // compare.html

// --fail-if-worse (docs/ci.md): B fails the gate on a metric when it is worse than A (lower, or higher where
// the plugin declares lower is better) by more than min_diff, with the paired test's p below alpha.
struct Gate {
  std::vector<std::string> metrics;  // node.field
  double alpha = 0.05;
  double min_diff = 0;
};

// The gate's verdict over a comparison (compare_runs' JSON): {"passed", "failed", "results": [...]}. Throws
// CompareError(exit_code::usage) for a metric the runs do not both have.
nlohmann::json gate(const nlohmann::json &comparison, const Gate &g);

// The command: prints the table (or the JSON), writes compare.html and compare.json (and with a gate,
// junit.xml) into out_dir when it is not empty. Returns the exit code (exit_code::check_failed: the gate failed); messages go to
// stderr.
int run_compare(const std::vector<std::string> &args, bool as_json, const std::string &out_dir, const Gate &g = {});

}  // namespace evalgraph::compare
