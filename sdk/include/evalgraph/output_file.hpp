// evalgraph SDK, C++ helpers for sinks that write files (header-only): where a sink's file goes
// (sink_output_path), a buffered file that throws naming itself (BufferedFile), the .partial rule, what a
// sink returns from finish() (files_written) and its node type (sink_type).
//
// The engine's rule for output files: write `<file>.partial`, rename it to `<file>` only when it is complete,
// so a crash or Ctrl-C never leaves a half-written file under its final name (`evalgraph run --resume` then
// writes it whole). Errors are thrown as std::runtime_error naming the file; the SDK's exception firewall turns
// them into the sink's error message.
#ifndef EVALGRAPH_OUTPUT_FILE_HPP
#define EVALGRAPH_OUTPUT_FILE_HPP

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>

#include "evalgraph/plugin.hpp"

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

// The file a sink writes: its `file` parameter (a relative path, not leaving the output directory; its
// folders are created) inside the host's _output_dir (in the sink's parameters).
inline std::filesystem::path sink_output_path(const nlohmann::json &params, const std::string &file) {
  const std::string dir = output_dir(params, "the sink");
  const std::filesystem::path rel(file), norm = rel.lexically_normal();
  if (file.empty() || rel.is_absolute() || (!norm.empty() && *norm.begin() == ".."))
    throw std::invalid_argument("parameter file '" + file + "' must be a relative path inside the output directory");
  std::filesystem::path out = std::filesystem::path(dir) / rel;
  if (out.has_parent_path()) std::filesystem::create_directories(out.parent_path());
  return out;
}

// The output of a sink whose `file` parameter is a plain file name (no folders) in the host's _output_dir.
struct SinkTarget {
  std::string dir, file;
};
// std::invalid_argument where `file` is not a plain file name, or the host passed no _output_dir.
inline SinkTarget sink_target(const nlohmann::json &params, const std::string &file, const char *sink_name) {
  if (file.find('/') != std::string::npos || file == "." || file == "..")
    throw std::invalid_argument("parameter 'file' must be a plain file name, got '" + file + "'");
  return SinkTarget{output_dir(params, sink_name), file};
}

// The `file` parameter of a sink that writes one file where sink_output_path() puts it: member `file` of the
// sink's parameter struct C (its initialiser is the default), declared once for every such sink.
template <class C> Param<C> output_file_param() {
  return param<C>(&C::file, "file", "Output file, relative to the run's output directory (subfolders are created).")
      .min_length(1);
}

// A file written through a large buffer (a sink's stream of records); every error throws
// std::runtime_error "cannot create|write <path>: <reason>". Destroyed unclosed, it is closed unchecked (a
// sink that was not finished leaves its .partial file as the trace of the run).
class BufferedFile {
 public:
  BufferedFile() = default;
  BufferedFile(const BufferedFile &) = delete;
  BufferedFile &operator=(const BufferedFile &) = delete;
  ~BufferedFile() {
    if (fp_ != nullptr) std::fclose(fp_);
  }
  void open(const std::filesystem::path &path, const char *mode, std::size_t buffer_bytes) {
    path_ = path;
    fp_ = std::fopen(path.c_str(), mode);
    if (fp_ == nullptr) throw std::runtime_error("cannot create " + path.string() + ": " + std::strerror(errno));
    buffer_ = std::make_unique<char[]>(buffer_bytes);
    std::setvbuf(fp_, buffer_.get(), _IOFBF, buffer_bytes);
  }
  // Opens `<file>.partial`, which publish() renames to `file`.
  void open_partial(const std::filesystem::path &file, std::size_t buffer_bytes) {
    open(partial_path(file), "wb", buffer_bytes);
    final_ = file;
  }
  bool is_open() const { return fp_ != nullptr; }
  std::FILE *get() { return fp_; }
  const std::filesystem::path &path() const { return path_; }
  void write(const void *data, std::size_t len) {
    if (len > 0 && std::fwrite(data, 1, len, fp_) != len)
      throw std::runtime_error("cannot write " + path_.string() + ": " + std::strerror(errno));
  }
  void write(std::string_view s) { write(s.data(), s.size()); }
  // Flushes, syncs to disk when asked, and closes; throws on any error.
  void close(bool sync) {
    std::FILE *fp = fp_;
    fp_ = nullptr;
    bool ok = std::fflush(fp) == 0 && (!sync || ::fsync(fileno(fp)) == 0);
    std::string err = ok ? std::string() : std::strerror(errno);
    if (std::fclose(fp) != 0 && ok) {
      ok = false;
      err = std::strerror(errno);
    }
    if (!ok) throw std::runtime_error("cannot write " + path_.string() + ": " + err);
  }
  // A file opened with open_partial(): closes it (synced to disk when asked) and gives it its name.
  void publish(bool sync, std::string_view who) {
    close(sync);
    publish_partial_file(final_, who);
  }

 private:
  std::filesystem::path path_, final_;
  std::FILE *fp_ = nullptr;
  std::unique_ptr<char[]> buffer_;
};

// What a sink that wrote one file returns from finish(): {"files": [file], "records": n}.
inline nlohmann::json files_written(const std::string &file, std::size_t records) {
  return {{"files", nlohmann::json::array({file})}, {"records", records}};
}

// The node type of a sink implemented by class T: it reads every finished record and declares no fields.
template <class T> eg_node_type sink_type(const char *name, const char *description, const char *params_schema) {
  return node_type<T>({EG_KIND_SINK, name, description, params_schema, {}, {}, {}, 0});
}

}  // namespace evalgraph

#endif  // EVALGRAPH_OUTPUT_FILE_HPP
