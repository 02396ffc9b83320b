// The command lines of the LLM test tools (eg-test-llm-server, eg-llm-bench): flags, each flag's value the next
// argument; a flag without its value ends the process with exit code 2 and says which.
#pragma once

#include <cstdlib>
#include <iostream>
#include <string>

namespace evalgraph::testing {

class CliArgs {
 public:
  CliArgs(int argc, char **argv) : argc_(argc), argv_(argv) {}
  // Moves to the next argument; false after the last.
  bool next() {
    if (++i_ >= argc_) return false;
    flag_ = argv_[i_];
    return true;
  }
  const std::string &flag() const { return flag_; }
  // The current flag's value (the argument after it).
  std::string value() {
    if (i_ + 1 >= argc_) {
      std::cerr << "missing value for " << flag_ << "\n";
      std::exit(2);
    }
    return argv_[++i_];
  }

 private:
  int argc_;
  char **argv_;
  int i_ = 0;
  std::string flag_;
};

}  // namespace evalgraph::testing
