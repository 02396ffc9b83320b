#pragma once
// Internal to engine/io: a file read in large chunks into one growable buffer.
#include <cstddef>
#include <cstdio>
#include <filesystem>
#include <memory>

namespace evalgraph::io::detail {

class ByteSource {
 public:
  static constexpr std::size_t kChunk = std::size_t{1} << 20;

  explicit ByteSource(const std::filesystem::path &file);  // throws DataError when it cannot be opened
  ~ByteSource();
  ByteSource(const ByteSource &) = delete;
  ByteSource &operator=(const ByteSource &) = delete;

  // Keeps the unread bytes [pos, end), moves them to the front (growing the buffer when they fill it), and
  // reads more after them. Returns false when nothing more could be read (end of file).
  bool refill();

  const std::filesystem::path &path() const { return path_; }
  char *data() { return buf_.get(); }

  std::size_t pos = 0;  // first unread byte
  std::size_t end = 0;  // one past the last valid byte

 private:
  std::filesystem::path path_;
  std::FILE *fp_ = nullptr;
  std::unique_ptr<char[]> buf_;
  std::size_t cap_ = 0;
  bool eof_ = false;
};

}  // namespace evalgraph::io::detail
