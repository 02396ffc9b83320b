// Shared helpers of the libFuzzer targets (tests/fuzz/fuzz_*.cpp): in-memory files for readers that take a
// path, the bundled plugins loaded once, and what counts as a finding besides a crash.
#pragma once
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <string>
#include <string_view>

#include "config/diagnostics.h"
#include "plugin/registry.h"

namespace fuzz {

inline std::string_view view(const std::uint8_t *data, std::size_t size) {
  return {reinterpret_cast<const char *>(data), size};
}

// A file that lives in memory (memfd), opened by path (/proc/self/fd/N) by readers that only take a path:
// no disk I/O per input, nothing left behind.
class MemFile {
 public:
  explicit MemFile(const char *name) {
    fd_ = memfd_create(name, 0);
    if (fd_ < 0) {
      std::perror("memfd_create");
      std::abort();
    }
    path_ = "/proc/self/fd/" + std::to_string(fd_);
  }
  ~MemFile() { close(fd_); }
  MemFile(const MemFile &) = delete;
  MemFile &operator=(const MemFile &) = delete;

  // Replaces the file's content; returns its path.
  const std::filesystem::path &write(std::string_view bytes) {
    if (ftruncate(fd_, 0) != 0) std::abort();
    std::size_t done = 0;
    while (done < bytes.size()) {
      ssize_t n = pwrite(fd_, bytes.data() + done, bytes.size() - done, static_cast<off_t>(done));
      if (n <= 0) std::abort();
      done += static_cast<std::size_t>(n);
    }
    return path_;
  }
  const std::filesystem::path &path() const { return path_; }

 private:
  int fd_ = -1;
  std::filesystem::path path_;
};

// The bundled plugins (<build>/plugins), loaded once per process and kept loaded.
inline const evalgraph::PluginRegistry &registry() {
  static const evalgraph::PluginRegistry *reg = [] {
    auto *r = new evalgraph::PluginRegistry;
    r->load_directory(EVALGRAPH_FUZZ_PLUGIN_DIR);
    if (r->types().empty()) {
      std::fprintf(stderr, "fuzz: no plugins found in %s (build them first)\n", EVALGRAPH_FUZZ_PLUGIN_DIR);
      std::abort();
    }
    return r;
  }();
  return *reg;
}

// EVALGRAPH_FUZZ_STRICT=1: an exception other than the reader's own error type (ConfigError, DataError, ...)
// is a finding too, i.e. a library's message (nlohmann, yaml-cpp, std::stoul) that would reach the user.
// Off by default (CI): those are error-message work (issue #15 part 3), not crashes.
inline bool strict() {
  static const bool s = [] {
    const char *v = std::getenv("EVALGRAPH_FUZZ_STRICT");
    return v != nullptr && *v != '\0' && *v != '0';
  }();
  return s;
}

inline void foreign_exception(const char *where, const std::exception &e) {
  if (!strict()) return;
  std::fprintf(stderr, "fuzz: %s: an exception of a library reached the caller: %s\n", where, e.what());
  std::abort();
}

// A broken invariant: always a finding.
[[noreturn]] inline void fail(const char *what, std::string_view detail = {}) {
  std::fprintf(stderr, "fuzz: %s%s%.*s\n", what, detail.empty() ? "" : ": ", static_cast<int>(detail.size()),
               detail.data());
  std::abort();
}

// Runs `read` (a configuration reader on one input): the ConfigError it throws must carry a diagnostic (file,
// line, what is wrong); any other exception is a library's (foreign_exception, `where` naming the reader).
template <class Read>
void expect_config_errors(const char *where, Read &&read) {
  try {
    read();
  } catch (const evalgraph::ConfigError &e) {
    if (e.diagnostics().empty()) fail("ConfigError without a diagnostic");
  } catch (const std::exception &e) {
    foreign_exception(where, e);
  }
}

}  // namespace fuzz
