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
// (2: usage, the folder is not what compare needs; 3: broken data).
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

// The command: prints the table (or the JSON), writes compare.html and compare.json into out_dir when it
// is not empty. Returns the exit code; messages go to stderr.
int run_compare(const std::vector<std::string> &args, bool as_json, const std::string &out_dir);

}  // namespace evalgraph::compare
