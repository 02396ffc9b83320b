#pragma once
// JUnit XML, the test-report format GitLab, Jenkins, Azure DevOps and GitHub's test-report actions read:
// <testsuites><testsuite name tests failures><testcase classname name time><failure message type>text...
// Used for expect: (junit.xml in a results folder) and compare --fail-if-worse (junit.xml with -o DIR).
#include <string>
#include <vector>

namespace evalgraph::junit {

struct Case {
  std::string classname;  // e.g. the pipeline's name
  std::string name;       // one line: what was checked
  bool failed = false;
  std::string message;    // the failure's one-line summary (the <failure message=...>)
  std::string details;    // the failure's text, or a passing case's <system-out>
};

// One <testsuite> named `suite` holding `cases`, inside <testsuites>. Text that XML 1.0 cannot hold (control
// characters, bytes that are not UTF-8) is replaced, so the file always parses.
std::string document(const std::string &suite, const std::vector<Case> &cases, double seconds = 0);

}  // namespace evalgraph::junit
