// Cells of a CSV file the engine wrote (quotes and doubled quotes, the given separator), for the chatbot tests'
// checks of results.csv and combined tables: a small independent reader, so that the tests do not read the
// engine's output with the engine's own CSV code.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "test_support.h"

namespace chatbot_test {

inline std::vector<std::vector<std::string>> read_csv(const std::filesystem::path &p, char sep) {
  std::vector<std::vector<std::string>> rows;
  std::string text = testsupport::read_file(p), cell;
  std::vector<std::string> row;
  bool q = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (q) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') cell += '"', ++i;
      else if (c == '"') q = false;
      else cell += c;
    } else if (c == '"') {
      q = true;
    } else if (c == sep) {
      row.push_back(cell), cell.clear();
    } else if (c == '\n') {
      row.push_back(cell), cell.clear();
      rows.push_back(row), row.clear();
    } else {
      cell += c;
    }
  }
  return rows;
}

}  // namespace chatbot_test
