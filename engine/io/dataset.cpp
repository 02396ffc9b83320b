#include "io/dataset.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "io/byte_source.h"
#include "io/readers.h"
#include "run_folder/run_folder.h"

namespace evalgraph::io {

std::string DataError::format(const std::filesystem::path &file, std::size_t line, std::size_t column,
                              const std::string &problem, const std::string &hint) {
  std::string msg = file.string();
  if (line > 0) msg.append(":").append(std::to_string(line));
  if (line > 0 && column > 0) msg.append(":").append(std::to_string(column));
  msg.append(": ").append(problem);
  if (!hint.empty()) msg.append(" — ").append(hint);
  return msg;
}

DataError::DataError(const std::filesystem::path &file, std::size_t line, const std::string &problem,
                     const std::string &hint, std::size_t column)
    : std::runtime_error(format(file, line, column, problem, hint)),
      file_(file),
      line_(line),
      column_(column),
      problem_(problem),
      hint_(hint) {}

RecordReader::~RecordReader() = default;

nlohmann::json RecordReader::stats() const { return nullptr; }

bool RecordReader::skip() {
  thread_local std::string text;
  return next_text(text, nullptr);
}

bool RecordReader::next_text(std::string &text, std::vector<rawjson::Member> *members) {
  thread_local nlohmann::json record;
  if (!next(record)) return false;
  detail::serialise_record(record, columns(), text, members);
  return true;
}

namespace detail {

void serialise_record(const nlohmann::json &record, const std::vector<std::string> &columns, std::string &text,
                      std::vector<rawjson::Member> *members) {
  // Columns first, in file order; then any other keys (nlohmann's own order).
  nlohmann::ordered_json ordered;
  for (const auto &c : columns) {
    auto it = record.find(c);
    if (it != record.end()) ordered[c] = *it;
  }
  for (auto it = record.begin(); it != record.end(); ++it)
    if (!ordered.contains(it.key())) ordered[it.key()] = it.value();
  text = ordered.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (members != nullptr) rawjson::object_members(text, *members);
}

ByteSource::ByteSource(const std::filesystem::path &file) : path_(file) {
  std::error_code ec;
  if (std::filesystem::is_directory(file, ec))
    throw DataError(file, 0, "is a directory, not a file", "give the path of the dataset file itself");
  fp_ = std::fopen(file.c_str(), "rb");
  if (fp_ == nullptr) {
    int err = errno;
    throw DataError(file, 0, std::string("cannot open the dataset: ") + std::strerror(err),
                    "check that the path exists and is readable (relative paths are resolved from the "
                    "working directory)");
  }
  cap_ = kChunk;
  buf_ = std::make_unique<char[]>(cap_);
}

ByteSource::~ByteSource() {
  if (fp_ != nullptr) std::fclose(fp_);
}

bool ByteSource::refill() {
  if (eof_) return false;
  std::size_t keep = end - pos;
  if (keep > 0 && pos > 0) std::memmove(buf_.get(), buf_.get() + pos, keep);
  pos = 0;
  end = keep;
  if (end == cap_) {  // one unread piece (a long line) fills the whole buffer: grow it
    std::size_t ncap = cap_ * 2;
    auto nbuf = std::make_unique<char[]>(ncap);
    std::memcpy(nbuf.get(), buf_.get(), end);
    buf_ = std::move(nbuf);
    cap_ = ncap;
  }
  std::size_t n = std::fread(buf_.get() + end, 1, cap_ - end, fp_);
  if (n == 0) {
    if (std::ferror(fp_)) {
      int err = errno;
      throw DataError(path_, 0, std::string("read error: ") + std::strerror(err), "check the file and the disk");
    }
    eof_ = true;
    return false;
  }
  end += n;
  return true;
}

}  // namespace detail

std::unique_ptr<RecordReader> open_dataset(const std::filesystem::path &file, const std::string &format,
                                           const nlohmann::json &options, const RecordLimits &limits) {
  const std::string fmt = run_folder::data_format(file, format);  // the one rule: also the progress total's
  if (fmt.empty())
    throw DataError(file, 0, "cannot tell the dataset format from the extension '" + file.extension().string() + "'",
                    "name the file .csv/.tsv/.jsonl or set the format (csv, tsv or jsonl)");
  if (!options.is_null() && !options.is_object())
    throw DataError(file, 0, "dataset options must be a mapping, got " + std::string(options.type_name()),
                    "write them as key: value pairs");
  const nlohmann::json opts = options.is_null() ? nlohmann::json::object() : options;
  if (fmt == "csv" || fmt == "tsv") return detail::open_csv(file, opts, fmt == "tsv", limits);
  if (fmt == "jsonl") return detail::open_jsonl(file, opts, limits);
  if (fmt == "otlp") return detail::open_otlp(file, opts, limits);
  throw DataError(file, 0, "unknown dataset format '" + format + "'", "use csv, tsv, jsonl or otlp");
}

}  // namespace evalgraph::io
