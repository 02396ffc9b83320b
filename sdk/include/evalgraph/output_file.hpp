// evalgraph SDK, C++ helpers for sinks that write files (header-only): where a sink's files go (SinkFiles), a
// buffered file that throws naming itself (BufferedFile), the .partial rule and what a sink returns from
// finish() (files_written).
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

// Where a sink's files go, the one rule: inside the folder the host passes every sink as `_output_dir` (in its
// parameters: take them with the constructor T(const Host &, const S &, const json &params)), each at a relative
// path that does not leave that folder; the path's folders are created.
class SinkFiles {
 public:
  // std::invalid_argument "<node>: the host did not pass _output_dir" where the host passed none.
  SinkFiles(const nlohmann::json &params, const char *node) {
    auto d = params.find("_output_dir");
    if (d == params.end() || !d->is_string() || d->get_ref<const std::string &>().empty())
      throw std::invalid_argument(std::string(node) + ": the host did not pass _output_dir");
    dir_ = d->get<std::string>();
  }
  // The file `name` (e.g. the sink's `file` parameter) in the folder, its folders created. A name that is empty,
  // absolute or leaves the folder: std::invalid_argument naming it.
  std::filesystem::path path(const std::string &name) const {
    const std::filesystem::path rel(name), norm = rel.lexically_normal();
    if (name.empty() || rel.is_absolute() || (!norm.empty() && *norm.begin() == ".."))
      throw std::invalid_argument("parameter file '" + name + "' must be a relative path inside the output directory");
    std::filesystem::path out = dir_ / rel;
    if (out.has_parent_path()) std::filesystem::create_directories(out.parent_path());
    return out;
  }
  // The folder itself, for a sink that writes a fixed set of files (names it chose, not the pipeline's).
  const std::filesystem::path &dir() const { return dir_; }

 private:
  std::filesystem::path dir_;
};

// The `file` parameter of a sink that writes one file where SinkFiles::path() puts it: member `file` of the
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

}  // namespace evalgraph

#endif  // EVALGRAPH_OUTPUT_FILE_HPP
