#pragma once
// A small .xlsx reader for data files: the first worksheet as rows of text cells (shared strings, inline
// strings, numbers as written, booleans). ZIP central directory + zlib inflate; the XML is scanned by hand
// (the subset SpreadsheetML uses for cell values). Formulas give their cached value.
#include <filesystem>
#include <string>
#include <vector>

namespace evalgraph::chatbot {

// Throws std::runtime_error naming the file and the problem.
std::vector<std::vector<std::string>> read_xlsx(const std::filesystem::path &file);

}  // namespace evalgraph::chatbot
