#pragma once
#include <string>

#include "compression/aggregate.hpp"

namespace compression {
// Grouped bar chart (cairo, PNG): one group per column of the table (overall + six dimensions), one bar per
// method, scores 0–5. Throws std::runtime_error when the file cannot be written.
void write_chart(const json &result, const std::string &title, const std::string &png_path);
}  // namespace compression
