#pragma once
#include <filesystem>
#include <string>

namespace evalgraph {
// Writes `content` to `<path>.partial`, flushes it and renames it to `path`: a crash never leaves a
// half-written file under the final name.
void write_file_atomically(const std::filesystem::path &path, const std::string &content);
}  // namespace evalgraph
