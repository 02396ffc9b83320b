#pragma once
// Streaming dataset readers: CSV/TSV (RFC 4180) and JSON Lines, one record at a time in constant memory.
//
//   auto reader = evalgraph::io::open_dataset("data.csv", "", {{"separator", "auto"}});
//   nlohmann::json rec;
//   while (reader->next(rec)) { ... rec["question"] ... }
//
// Every problem with the data throws DataError with a message "<file>:<line>[:<column>]: <what> — <what to
// do>"; a record over a limit (RecordLimits) fails alone instead (record_problem()).
#include <cstddef>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "util/raw_json.h"

namespace evalgraph::io {

// A problem with a dataset file. what() is "<file>:<line>[:<column>]: <problem> — <hint>"; line 0 (the file
// as a whole, e.g. it cannot be opened) is written as "<file>: <problem> — <hint>".
class DataError : public std::runtime_error {
 public:
  DataError(const std::filesystem::path &file, std::size_t line, const std::string &problem, const std::string &hint,
            std::size_t column = 0);
  // The message a DataError with these parts has (also the form of RecordReader::record_problem()).
  static std::string format(const std::filesystem::path &file, std::size_t line, std::size_t column,
                            const std::string &problem, const std::string &hint);
  const std::filesystem::path &file() const noexcept { return file_; }
  std::size_t line() const noexcept { return line_; }
  std::size_t column() const noexcept { return column_; }
  const std::string &problem() const noexcept { return problem_; }
  const std::string &hint() const noexcept { return hint_; }

 private:
  std::filesystem::path file_;
  std::size_t line_, column_;
  std::string problem_, hint_;
};

// What one record may hold (pipeline section `limits:`, docs/concepts.md "Limits and hostile data"). A record over a
// limit is not refused with the data set: it is handed out with a problem (RecordReader::record_problem) and
// fails alone. Its values over a limit are replaced by null, and a line over record_bytes is not even held in
// memory (its record is handed out as {}).
struct RecordLimits {
  static constexpr std::size_t kMiB = std::size_t{1} << 20;
  std::size_t field_bytes = kMiB;       // the JSON text of one top-level field (a CSV cell: its text)
  std::size_t record_bytes = 8 * kMiB;  // one record: a JSONL line, a CSV row's cells together
  std::size_t array_items = 10000;      // elements of one array, at any depth
  int nesting_depth = 64;               // objects and arrays inside each other (1..rawjson::kMaxDepth)
  // A record over record_bytes is read past; one that runs on past 64 times that (512 MB by default) is no
  // record at all (a device such as /dev/zero, a binary file): the data set is refused rather than read for ever.
  std::size_t skip_bytes() const { return 64 * record_bytes; }
};

// Reads records one at a time.
class RecordReader {
 public:
  virtual ~RecordReader();
  // The limits records are checked against (RecordLimits' defaults until this is called).
  void set_limits(const RecordLimits &limits) { limits_ = limits; }
  const RecordLimits &limits() const noexcept { return limits_; }
  // Why the record last handed out by next_text() cannot be evaluated though the data set goes on: a limit it
  // is over, a number beyond a double's range, a key given twice. "<file>:<line>[:<column>]: <what> — <what
  // to do>"; empty when the record is fine. next() throws DataError with this message instead.
  const std::string &record_problem() const noexcept { return problem_; }
  // Reads the next record into `record` (a JSON object); false at the end of the data. Reusing the same
  // `record` object between calls is the fast path (its storage is reused).
  virtual bool next(nlohmann::json &record) = 0;
  // Reads the next record as the text of one JSON object (its keys in file order); false at the end of the
  // data. The engine's fast path: JSONL hands over the checked line itself; other formats serialise a record.
  // When `members` is non-null it receives the record's top-level members (spans into `text`), found by the
  // same scan that checked the text.
  virtual bool next_text(std::string &text, std::vector<rawjson::Member> *members);
  bool next_text(std::string &text) { return next_text(text, nullptr); }
  // Passes over the next record without handing it out (a shard's run over another shard's records); false
  // at the end of the data. JSONL only finds the line's end: the record is checked by the shard that runs it.
  virtual bool skip();
  // CSV: the header, in file order. JSONL: the keys of the first record (the first that is not over a limit), in
  // file order.
  virtual const std::vector<std::string> &columns() const = 0;
  // 1-based line where the record last returned by next() started (0 before the first record).
  virtual std::size_t line() const = 0;
  // What the reader counted once the data is read (run.json's dataset_reader): null for CSV and JSONL; the trace
  // reader's spans, traces, records and what it could not map, by reason.
  virtual nlohmann::json stats() const;

 protected:
  RecordLimits limits_;
  std::string problem_;
};

// Opens a dataset. format: "csv", "tsv" (CSV with a tab separator), "jsonl" ("ndjson" too), "otlp"
// (OpenTelemetry traces: docs/traces.md; options logs, unit, mapping, max_request_mb, max_trace_spans), or "" to pick by
// extension: .csv → csv, .tsv/.tab → tsv, .jsonl/.ndjson/.json → jsonl (a .json file must hold JSON lines).
// options (a JSON object or null):
//   CSV:   separator     one character, "tab", or "auto" (sniffed from the header among , ; tab |).
//                        Default "," (tab for tsv).
//          quote         one character (default "\""); "" turns quoting off.
//          json_columns  [names]: those columns' text is parsed as JSON (an empty cell → null).
//   JSONL: none.
// Unknown options, an unknown format or an unreadable file throw DataError. CSV cells are strings.
// `limits`: what one record may hold (the reader's set_limits() changes them later).
std::unique_ptr<RecordReader> open_dataset(const std::filesystem::path &file, const std::string &format,
                                           const nlohmann::json &options, const RecordLimits &limits = RecordLimits());

}  // namespace evalgraph::io
