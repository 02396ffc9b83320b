// Step 1 of the trace reader (otlp_reader.h): the input files, request by request, into partition files.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "io/dataset.h"
#include "io/otlp_reader.h"
#include "io/otlp_scan.h"

namespace evalgraph::io::otlp {

namespace fs = std::filesystem;

SpillFile::SpillFile(fs::path path) : path_(std::move(path)) {
  fd_ = ::open(path_.c_str(), O_CREAT | O_RDWR | O_TRUNC | O_CLOEXEC, 0600);
  if (fd_ < 0)
    throw DataError(path_, 0, std::string("cannot create a temporary file: ") + std::strerror(errno),
                    "set TMPDIR to a writable folder with room for about the size of the trace file");
}

SpillFile::~SpillFile() {
  if (map_ != nullptr) ::munmap(map_, mapped_);
  if (fd_ >= 0) ::close(fd_);
  std::error_code ec;
  fs::remove(path_, ec);
}

void SpillFile::append(const void *data, std::size_t n) {
  buf_.append(static_cast<const char *>(data), n);
  if (buf_.size() >= (std::size_t{256} << 10)) flush();
}

void SpillFile::flush() {
  std::size_t done = 0;
  while (done < buf_.size()) {
    ssize_t w = ::write(fd_, buf_.data() + done, buf_.size() - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0)
      throw DataError(path_, 0, std::string("cannot write a temporary file: ") + std::strerror(errno),
                      "set TMPDIR to a folder with room for about the size of the trace file");
    done += static_cast<std::size_t>(w);
  }
  written_ += buf_.size();
  buf_.clear();
}

void SpillFile::read_at(std::uint64_t off, std::size_t n, std::string &out) const {
  out.resize(n);
  std::size_t done = 0;
  while (done < n) {
    ssize_t r = ::pread(fd_, out.data() + done, n - done, static_cast<off_t>(off + done));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) throw DataError(path_, 0, "cannot read back a temporary file", "check the disk of TMPDIR");
    done += static_cast<std::size_t>(r);
  }
}

std::string_view SpillFile::whole() {
  flush();
  const auto n = static_cast<std::size_t>(written_);
  if (n == 0) return {};
  if (map_ == nullptr) {
    void *p = ::mmap(nullptr, n, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd_, 0);
    if (p == MAP_FAILED) {
      read_at(0, n, copy_);
      return copy_;
    }
    map_ = p;
    mapped_ = n;
  }
  return std::string_view(static_cast<const char *>(map_), mapped_);
}

namespace {

constexpr std::size_t kChunk = std::size_t{1} << 20;

// An input file (gzip or not: zlib reads both) as lines, each at most max_bytes long.
class Lines {
 public:
  Lines(const fs::path &file, std::size_t max_bytes) : file_(file), max_(max_bytes) {
    gz_ = gzopen(file.c_str(), "rb");
    if (gz_ == nullptr)
      throw DataError(file, 0, std::string("cannot open the trace file: ") + std::strerror(errno),
                      "check that the path exists and is readable");
    gzbuffer(gz_, 256 << 10);
  }
  ~Lines() { gzclose(gz_); }
  Lines(const Lines &) = delete;
  Lines &operator=(const Lines &) = delete;

  enum class Got { none, line, too_long };
  // The next line (without '\n'); too_long: a line over max_bytes, read past (`length` bytes).
  Got next(std::string_view &line, std::size_t &lineno, std::size_t &length) {
    std::size_t scanned = pos_;
    for (;;) {
      // memchr on an empty (possibly null) buffer is undefined: nothing to scan before the first fill.
      const auto *nl = end_ > scanned
                           ? static_cast<const char *>(std::memchr(buf_.data() + scanned, '\n', end_ - scanned))
                           : nullptr;
      if (nl != nullptr) {
        line = std::string_view(buf_.data() + pos_, static_cast<std::size_t>(nl - buf_.data()) - pos_);
        pos_ = static_cast<std::size_t>(nl - buf_.data()) + 1;
        lineno = ++lines_;
        return Got::line;
      }
      if (end_ - pos_ > max_) return drop(lineno, length);
      const std::size_t have = end_ - pos_;
      if (!fill()) {
        if (pos_ == end_) return Got::none;
        line = std::string_view(buf_.data() + pos_, end_ - pos_);
        pos_ = end_;
        lineno = ++lines_;
        return Got::line;
      }
      scanned = pos_ + have;
    }
  }

  // The whole (decompressed) file, if it is at most max_bytes; false otherwise.
  bool whole(std::string &out) {
    gzrewind(gz_);
    out.clear();
    std::string chunk(kChunk, '\0');
    for (;;) {
      int n = gzread(gz_, chunk.data(), static_cast<unsigned>(chunk.size()));
      if (n < 0) read_error();
      if (n == 0) return true;
      out.append(chunk.data(), static_cast<std::size_t>(n));
      if (out.size() > max_) return false;
    }
  }
  void rewind() {
    gzrewind(gz_);
    pos_ = end_ = 0;
    lines_ = 0;
    eof_ = false;
  }
  std::uint64_t bytes_read() const { return total_; }

 private:
  bool fill() {
    if (eof_) return false;
    if (pos_ > 0) {
      std::memmove(buf_.data(), buf_.data() + pos_, end_ - pos_);
      end_ -= pos_;
      pos_ = 0;
    }
    if (buf_.size() < end_ + kChunk) buf_.resize(std::max(buf_.size() * 2, end_ + kChunk));
    int n = gzread(gz_, buf_.data() + end_, static_cast<unsigned>(kChunk));
    if (n < 0) read_error();
    if (n == 0) {
      eof_ = true;
      return false;
    }
    end_ += static_cast<std::size_t>(n);
    total_ += static_cast<std::size_t>(n);
    return true;
  }
  Got drop(std::size_t &lineno, std::size_t &length) {
    length = 0;
    for (;;) {
      const auto *nl = static_cast<const char *>(std::memchr(buf_.data() + pos_, '\n', end_ - pos_));
      if (nl != nullptr) {
        length += static_cast<std::size_t>(nl - buf_.data()) - pos_;
        pos_ = static_cast<std::size_t>(nl - buf_.data()) + 1;
        break;
      }
      length += end_ - pos_;
      pos_ = end_;
      if (!fill()) break;
    }
    lineno = ++lines_;
    return Got::too_long;
  }
  [[noreturn]] void read_error() {
    int err = 0;
    const char *msg = gzerror(gz_, &err);
    throw DataError(file_, 0, std::string("cannot read the trace file: ") + (msg != nullptr ? msg : "error"),
                    "check the file (a .gz file must be complete)");
  }

  fs::path file_;
  std::size_t max_;
  gzFile gz_ = nullptr;
  std::vector<char> buf_;
  std::size_t pos_ = 0, end_ = 0, lines_ = 0;
  std::uint64_t total_ = 0;
  bool eof_ = false;
};

// Walks export requests and writes their spans and log records into the partitions.
class Walker {
 public:
  Walker(Partitions &out, Counts &counts) : out_(out), counts_(counts) {}

  // One export request, or a JSON array of them; false when its JSON is malformed or cut off.
  bool request(std::string_view text, std::size_t line) {
    Cursor c(text);
    line_ = line;
    ++out_.requests;
    if (c.peek() == '[') {
      c.begin_array();
      while (c.next_element()) one_request(c);
    } else {
      one_request(c);
    }
    return !c.failed;
  }

 private:
  void one_request(Cursor &c) {
    std::string_view k;
    if (!c.begin_object()) return;
    while (c.next_member(k)) {
      if (k == "resourceSpans")
        resources(c, false);
      else if (k == "resourceLogs")
        resources(c, true);
      else
        c.skip();
    }
  }
  void resources(Cursor &c, bool logs) {
    if (!c.begin_array()) return;
    while (c.next_element()) resource(c, logs);
  }
  void resource(Cursor &c, bool logs) {
    std::string_view k, resource_text;
    std::vector<std::pair<std::uint32_t, std::string_view>> scopes;  // context id, scope text
    if (c.begin_object()) {
      while (c.next_member(k)) {
        if (k == "resource") {
          resource_text = c.skip();
        } else if (k == "scopeSpans" || k == "scopeLogs" || k == "instrumentationLibrarySpans" ||
                   k == "instrumentationLibraryLogs") {
          if (!c.begin_array()) break;
          while (c.next_element()) scope(c, logs, scopes);
        } else {
          c.skip();
        }
      }
    }
    for (const auto &[id, scope_text] : scopes) {  // in id order: the index file is read by id
      out_.context_index->append_u64(out_.contexts->size());
      out_.contexts->append_u32(static_cast<std::uint32_t>(resource_text.size()));
      out_.contexts->append(resource_text.data(), resource_text.size());
      out_.contexts->append_u32(static_cast<std::uint32_t>(scope_text.size()));
      out_.contexts->append(scope_text.data(), scope_text.size());
    }
  }
  void scope(Cursor &c, bool logs, std::vector<std::pair<std::uint32_t, std::string_view>> &scopes) {
    const std::uint32_t id = next_context_++;
    scopes.emplace_back(id, std::string_view());
    std::string_view k;
    if (!c.begin_object()) return;
    while (c.next_member(k)) {
      if (k == "scope" || k == "instrumentationLibrary") {
        scopes.back().second = c.skip();
      } else if (k == "spans" || k == "logRecords") {
        if (!c.begin_array()) return;
        while (c.next_element()) piece(c, logs, id);
      } else {
        c.skip();
      }
    }
  }
  void piece(Cursor &c, bool is_log, std::uint32_t context) {
    const std::size_t line = line_ + c.newlines;
    const std::size_t start = c.offset();
    std::string_view k, trace_raw;
    bool has_trace = false;
    if (!c.begin_object()) return;
    while (c.next_member(k)) {
      if (k == "traceId" && c.peek() == '"')
        has_trace = c.raw_string(trace_raw);
      else
        c.skip();
    }
    if (c.failed) {
      ++counts_[is_log ? "log record cut off (malformed or truncated request)"
                       : "span cut off (malformed or truncated request)"];
      return;
    }
    const std::string_view text = c.text_between(start, c.offset());
    std::string id = has_trace ? normalise_id(trace_raw, 16) : "";
    if (is_log)
      ++out_.logs;
    else
      ++out_.spans;
    if (id.empty()) {
      ++counts_[std::string(is_log ? "log record" : "span") + (has_trace && !trace_raw.empty()
                                                                   ? " with a trace id that is not 32 hex digits"
                                                                   : " without a trace id")];
      return;
    }
    EntryHeader h{};
    auto nibble = [](char ch) { return static_cast<std::uint8_t>(ch <= '9' ? ch - '0' : ch - 'a' + 10); };
    for (std::size_t i = 0; i < 16; ++i)
      h.trace[i] = static_cast<std::uint8_t>(nibble(id[2 * i]) << 4 | nibble(id[2 * i + 1]));
    h.is_log = is_log ? 1 : 0;
    h.context = context;
    h.len = static_cast<std::uint32_t>(text.size());
    h.line = line;
    std::uint64_t key = 0;
    std::memcpy(&key, h.trace, sizeof key);
    SpillFile &part = *out_.parts[(key * 0x9E3779B97F4A7C15ULL >> 20) % out_.parts.size()];
    part.append(&h, sizeof h);
    part.append(text.data(), text.size());
  }

  Partitions &out_;
  Counts &counts_;
  std::size_t line_ = 0;
  std::uint32_t next_context_ = 0;
};

bool is_blank(std::string_view s) { return s.find_first_not_of(" \t\r\n") == std::string_view::npos; }

// A file holding one JSON document over several lines (a pretty-printed export) is read whole.
bool looks_like_document(std::string_view first_line) {
  std::size_t b = first_line.find_first_not_of(" \t\r");
  std::size_t e = first_line.find_last_not_of(" \t\r");
  if (b == std::string_view::npos) return false;
  return first_line[e] != '}' && first_line[e] != ']';
}

void read_file(const fs::path &file, const Settings &s, Walker &walker, Counts &counts, std::uint64_t &bytes) {
  Lines lines(file, s.max_request_bytes);
  std::string_view line;
  std::size_t lineno = 0, length = 0;
  bool first = true;
  for (Lines::Got got; (got = lines.next(line, lineno, length)) != Lines::Got::none;) {
    if (got == Lines::Got::too_long) {
      ++counts["export request (line) over max_request_mb, not read"];
      continue;
    }
    if (is_blank(line)) continue;
    if (first && looks_like_document(line)) {
      std::string whole;
      if (lines.whole(whole)) {
        if (!walker.request(whole, 1))
          ++counts["export request with malformed or truncated JSON (read up to the fault)"];
        bytes += whole.size();
        return;
      }
      ++counts["JSON document over max_request_mb, read line by line"];
      lines.rewind();
      first = false;
      continue;
    }
    first = false;
    if (!walker.request(line, lineno))
      ++counts["export request with malformed or truncated JSON (read up to the fault)"];
  }
  bytes += lines.bytes_read();
}

}  // namespace

void partition_inputs(const Settings &s, const fs::path &dir, Partitions &out, Counts &counts) {
  std::uint64_t estimate = 0;
  for (const auto &f : s.files) {
    std::error_code ec;
    if (fs::is_directory(f, ec))
      throw DataError(f, 0, "is a directory, not a file", "give the path of the trace file itself");
    auto size = fs::file_size(f, ec);
    if (ec)
      throw DataError(f, 0, "cannot open the trace file: " + ec.message(),
                      "check that the path exists and is readable");
    estimate += f.extension() == ".gz" ? 8 * size : size;
  }
  const std::size_t n = std::clamp<std::uint64_t>(estimate / (std::uint64_t{32} << 20) + 1, 1, 512);
  for (std::size_t i = 0; i < n; ++i)
    out.parts.push_back(std::make_unique<SpillFile>(dir / ("part-" + std::to_string(i))));
  out.contexts = std::make_unique<SpillFile>(dir / "contexts");
  out.context_index = std::make_unique<SpillFile>(dir / "contexts.index");
  Walker walker(out, counts);
  for (const auto &f : s.files) read_file(f, s, walker, counts, out.input_bytes);
  for (auto &p : out.parts) p->flush();
  out.contexts->flush();
  out.context_index->flush();
}

}  // namespace evalgraph::io::otlp
