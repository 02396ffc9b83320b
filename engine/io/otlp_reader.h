#pragma once
// Internal to engine/io: the OTLP trace reader (`dataset: {format: otlp}`, docs/traces.md).
//
// Spans of one trace may stand anywhere in a file (exporters send batches; children often come before their
// root), so no trace can be finished before the file is read to its end. Memory stays bounded whatever the
// file's size by spilling to temporary files:
//   1. partition: each export request (a line; or the whole file when it is one JSON document) is walked in
//      place (otlp_scan.h); every span and log record is copied, with its trace id, into one of P partition
//      files chosen by a hash of the trace id; resources and scopes go once each into a context file.
//   2. assemble: partition by partition, the pieces are grouped by trace, each trace mapped (otlp_mapping.h),
//      and its records written into one of R record files chosen by a hash of the session (or trace) id.
//   3. hand out: record file by record file, the records are sorted (session, start, id) and handed out, so a
//      session's records come together and in time order, as sequence nodes (group_by, order_by) need them.
// P and R grow with the input's size, so one partition or record file holds some tens of MB.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "io/otlp_mapping.h"

namespace evalgraph::io::otlp {

// A file written in large blocks, read back whole.
class SpillFile {
 public:
  explicit SpillFile(std::filesystem::path path);
  ~SpillFile();
  SpillFile(const SpillFile &) = delete;
  SpillFile &operator=(const SpillFile &) = delete;
  void append(const void *data, std::size_t n);
  void append_u32(std::uint32_t v) { append(&v, sizeof v); }
  void append_u64(std::uint64_t v) { append(&v, sizeof v); }
  void flush();
  std::uint64_t size() const { return written_ + buf_.size(); }
  const std::filesystem::path &path() const { return path_; }
  // Reads bytes [off, off + n) (after a flush).
  // `out` becomes the n bytes at `off`. Give it the buffer of the last read: only its growth is zeroed first.
  void read_at(std::uint64_t off, std::size_t n, std::string &out) const;
  // The whole file (after a flush), mapped read-only (no copy made; read into memory where it cannot be
  // mapped). Valid while the file lives.
  std::string_view whole();

 private:
  std::filesystem::path path_;
  int fd_ = -1;
  std::string buf_;
  std::uint64_t written_ = 0;
  void *map_ = nullptr;
  std::size_t mapped_ = 0;
  std::string copy_;  // whole() where mmap failed
};

// How the reader was set up (dataset options, docs/traces.md).
struct Settings {
  std::vector<std::filesystem::path> files;  // the traces file, then a `logs:` file if given
  Mapping mapping;
  std::size_t max_request_bytes = std::size_t{64} << 20;  // one export request (a line) held in memory
  std::size_t max_trace_spans = 100000;                   // spans and log records of one trace
  std::size_t max_trace_bytes = std::size_t{128} << 20;   // their text
};

// Step 1's result: the partition files and what was seen.
struct Partitions {
  std::vector<std::unique_ptr<SpillFile>> parts;
  std::unique_ptr<SpillFile> contexts, context_index;  // contexts: resource and scope text; index: u64 offsets
  std::uint64_t input_bytes = 0, requests = 0, spans = 0, logs = 0;
};

// Step 1: reads every input file into partitions under `dir`, counting what cannot be read in `counts`.
// Throws DataError for a file that cannot be opened or read.
void partition_inputs(const Settings &s, const std::filesystem::path &dir, Partitions &out, Counts &counts);

// Where an entry of a partition file starts: its header. Entries are [header][text of `len` bytes].
#pragma pack(push, 1)
struct EntryHeader {
  std::uint8_t trace[16];
  std::uint8_t is_log;
  std::uint32_t context;
  std::uint32_t len;
  std::uint64_t line;
};
#pragma pack(pop)

}  // namespace evalgraph::io::otlp
