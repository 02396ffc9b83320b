// The exit codes are stated once (lib/util/exit_codes.h); these hold what repeats them to it: expect:'s
// constant, the run's stop, the README's table and the usage text of `evalgraph --help`.
#include <catch2/catch.hpp>
#include <cctype>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "expect/expectations.h"
#include "test_support.h"
#include "util/exit_codes.h"
#include "util/stop.h"

namespace {

namespace ec = evalgraph::exit_code;

static_assert(evalgraph::kExitExpectationFailed == ec::check_failed, "expect: exits with exit_code::check_failed");

std::set<int> header_codes() { return std::set<int>(std::begin(ec::all), std::end(ec::all)); }

// The numbers that start the rows of the README's "## Exit codes" table.
std::set<int> readme_codes() {
  std::ifstream in(std::string(REPO_DIR) + "/README.md");
  std::set<int> codes;
  std::string line;
  bool in_section = false;
  while (std::getline(in, line)) {
    if (line.rfind("## ", 0) == 0) in_section = line == "## Exit codes";
    if (!in_section || line.rfind("| ", 0) != 0 || line.size() < 3 ||
        !std::isdigit(static_cast<unsigned char>(line[2])))
      continue;
    codes.insert(std::stoi(line.substr(2)));
  }
  return codes;
}

// The numbers of the paragraph of `evalgraph --help` that starts "exit codes:", each one followed by a word.
std::set<int> help_codes(const std::string &help) {
  std::set<int> codes;
  const auto at = help.find("exit codes:");
  if (at == std::string::npos) return codes;
  const auto end = help.find("\n\n", at);
  std::istringstream words(help.substr(at, end == std::string::npos ? std::string::npos : end - at));
  std::string w;
  while (words >> w)
    if (std::isdigit(static_cast<unsigned char>(w[0])) && w.find_first_not_of("0123456789") == std::string::npos)
      codes.insert(std::stoi(w));
  return codes;
}

}  // namespace

TEST_CASE("exit codes: the run's stop returns the codes of util/exit_codes.h", "[exit-codes]") {
  CHECK(evalgraph::stop_exit_code(evalgraph::StopReason::none) == ec::ok);
  CHECK(evalgraph::stop_exit_code(evalgraph::StopReason::signal) == ec::interrupted);
  CHECK(evalgraph::stop_exit_code(evalgraph::StopReason::budget) == ec::budget);
}

TEST_CASE("exit codes: the README's table and --help list exactly the codes of util/exit_codes.h", "[exit-codes]") {
  CHECK(header_codes() == std::set<int>{0, 1, 2, 3, 4, 5, 130});  // what users and scripts rely on
  CHECK(readme_codes() == header_codes());
  auto r = testsupport::run_cmd(std::string(EVALGRAPH_EXE) + " --help");
  INFO(r.output);
  REQUIRE(r.exit_code == ec::ok);
  CHECK(help_codes(r.output) == header_codes());
}
