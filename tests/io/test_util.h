#pragma once
// Helpers shared by the io tests: a scratch directory per test and file writing.
#include <atomic>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "io/dataset.h"

namespace iotest {

// A fresh directory, removed with everything in it when the object goes away.
class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter{0};
    path_ = std::filesystem::temp_directory_path() /
            ("evalgraph-io-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir &) = delete;
  TempDir &operator=(const TempDir &) = delete;
  const std::filesystem::path &path() const { return path_; }
  std::filesystem::path operator/(const std::string &name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

inline std::filesystem::path write_file(const std::filesystem::path &p, const std::string &content) {
  std::ofstream out(p, std::ios::binary);
  out << content;
  return p;
}

inline std::string read_file(const std::filesystem::path &p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Everything a reader gives for a file: its records with their line numbers, and its columns (asked after the
// records: a JSONL file's columns are those its records had).
struct Read {
  std::vector<std::string> columns;
  std::vector<nlohmann::json> records;
  std::vector<std::size_t> lines;
};
inline Read read_all(const std::filesystem::path &file, const nlohmann::json &options = nlohmann::json::object(),
                     const std::string &format = "", const evalgraph::io::RecordLimits &limits = {}) {
  auto reader = evalgraph::io::open_dataset(file, format, options, limits);
  Read r;
  nlohmann::json rec;
  while (reader->next(rec)) {
    r.records.push_back(rec);
    r.lines.push_back(reader->line());
  }
  r.columns = reader->columns();
  return r;
}

// The DataError that read() throws (the test fails when none is thrown).
template <class Read> evalgraph::io::DataError data_error(Read &&read) {
  try {
    read();
  } catch (const evalgraph::io::DataError &e) {
    return e;
  }
  FAIL("no DataError was thrown");
  throw std::logic_error("unreachable");
}

}  // namespace iotest
