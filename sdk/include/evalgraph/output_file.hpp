// evalgraph SDK, C++ helpers for sinks that write files (header-only).
//
// The engine's rule for output files: write `<file>.partial`, rename it to `<file>` only when it is complete,
// so a crash or Ctrl-C never leaves a half-written file under its final name (`evalgraph run --resume` then
// writes it whole). Errors are thrown as std::runtime_error naming the file; the SDK's exception firewall turns
// them into the sink's error message.
#ifndef EVALGRAPH_OUTPUT_FILE_HPP
#define EVALGRAPH_OUTPUT_FILE_HPP

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>

namespace evalgraph {

// `<file>.partial`: where a file is written before publish_partial_file() gives it its name.
inline std::filesystem::path partial_path(const std::filesystem::path &file) {
  std::filesystem::path p = file;
  p += ".partial";
  return p;
}

// Renames `<file>.partial` (written by you or by a library, e.g. a PNG writer) to `<file>`.
inline void publish_partial_file(const std::filesystem::path &file, std::string_view who) {
  std::error_code ec;
  std::filesystem::rename(partial_path(file), file, ec);
  if (ec)
    throw std::runtime_error(std::string(who) + ": cannot rename " + partial_path(file).string() + ": " + ec.message());
}

// Writes `content` to `<file>.partial`, then renames it to `file`. `who` (e.g. the node type) starts the
// error messages.
inline void write_file_whole(const std::filesystem::path &file, std::string_view content, std::string_view who) {
  const std::filesystem::path partial = partial_path(file);
  {
    std::ofstream f(partial, std::ios::binary | std::ios::trunc);
    if (!f) throw std::runtime_error(std::string(who) + ": cannot write " + partial.string());
    f.write(content.data(), static_cast<std::streamsize>(content.size()));
    f.flush();
    if (!f) throw std::runtime_error(std::string(who) + ": write failed for " + partial.string());
  }
  publish_partial_file(file, who);
}

}  // namespace evalgraph

#endif  // EVALGRAPH_OUTPUT_FILE_HPP
