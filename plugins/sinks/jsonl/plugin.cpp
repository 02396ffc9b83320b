// sink.jsonl — writes every finished record as one line of JSON.
//
// A RawNode (plugin.hpp): a record is written as the exact bytes the host handed over (compact JSON
// already) without parsing it again. Files are written to "<file>.partial" and renamed to
// "<file>" in finish(), so a crash never leaves a half-written file under its final name.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <new>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <unistd.h>

#include "evalgraph/plugin.hpp"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct Config {
  std::string file = "records.jsonl";
};
const evalgraph::Params<Config> kParams{"Writes every finished record as one line of compact JSON (JSON Lines).", {
  evalgraph::param(&Config::file, "file", "Output file, relative to the run's output directory (subfolders are created).").min_length(1),
}};

constexpr std::size_t kBufferSize = std::size_t{4} << 20;

std::string errno_text() { return std::strerror(errno); }

class JsonlSink : public evalgraph::RawNode {
 public:
  JsonlSink(const evalgraph::Host &, const json &params) {
    file_ = kParams.parse(params).file;
    auto dir = params.find("_output_dir");
    if (dir == params.end() || !dir->is_string())
      throw std::invalid_argument("the host passed no _output_dir (a string) to the sink");
    fs::path rel(file_);
    fs::path norm = rel.lexically_normal();
    if (rel.is_absolute() || (!norm.empty() && *norm.begin() == ".."))
      throw std::invalid_argument("parameter file '" + file_ + "' must be a relative path inside the output directory");
    final_ = fs::path(dir->get<std::string>()) / rel;
    partial_ = final_;
    partial_ += ".partial";
    if (final_.has_parent_path()) fs::create_directories(final_.parent_path());
    fp_ = std::fopen(partial_.c_str(), "wb");
    if (fp_ == nullptr) throw std::runtime_error("cannot create " + partial_.string() + ": " + errno_text());
    buffer_ = std::make_unique<char[]>(kBufferSize);
    std::setvbuf(fp_, buffer_.get(), _IOFBF, kBufferSize);
  }

  ~JsonlSink() override {
    if (fp_ != nullptr) std::fclose(fp_);  // not finished: the .partial file stays as the trace of the run
  }

  std::string process_raw(evalgraph::Call &, std::string_view in) override {
    write(in.data(), in.size());
    return {};
  }

  json finish(evalgraph::Call &) override {
    if (fp_ == nullptr) throw std::runtime_error("finish() called twice");
    std::FILE *fp = fp_;
    fp_ = nullptr;
    bool ok = std::fflush(fp) == 0 && ::fsync(fileno(fp)) == 0;
    std::string err = ok ? std::string() : errno_text();
    if (std::fclose(fp) != 0 && ok) {
      ok = false;
      err = errno_text();
    }
    if (!ok) throw std::runtime_error("cannot write " + partial_.string() + ": " + err);
    fs::rename(partial_, final_);
    return {{"files", json::array({file_})}, {"records", records_}};
  }

 private:
  void write(const char *data, std::size_t len) {
    if (fp_ == nullptr) throw std::runtime_error("process() after finish()");
    // Trim surrounding whitespace; the host sends compact JSON, but a record with a raw line break (pretty
    // printed) must still become exactly one line.
    while (len > 0 && (data[len - 1] == '\n' || data[len - 1] == '\r' || data[len - 1] == ' ')) --len;
    if (len == 0) throw std::invalid_argument("received an empty record");
    if (std::memchr(data, '\n', len) != nullptr || std::memchr(data, '\r', len) != nullptr) {
      std::string line = json::parse(data, data + len).dump(-1, ' ', false, json::error_handler_t::replace);
      put(line.data(), line.size());
    } else {
      put(data, len);
    }
    ++records_;
  }

  void put(const char *data, std::size_t len) {
    if (std::fwrite(data, 1, len, fp_) != len || std::fputc('\n', fp_) == EOF)
      throw std::runtime_error("cannot write " + partial_.string() + ": " + errno_text());
  }

  std::string file_;
  fs::path final_, partial_;
  std::FILE *fp_ = nullptr;
  std::unique_ptr<char[]> buffer_;
  std::size_t records_ = 0;
};

constexpr uint32_t kFlags = 0;  // one instance, records in order

}  // namespace

EVALGRAPH_PLUGIN("sink_jsonl", "0.1.0", "JSON Lines sink",
                 evalgraph::node_type<JsonlSink>({EG_KIND_SINK, "sink.jsonl",
                                                  "Writes every finished record as one line of JSON (JSON Lines)", kParams.schema(),
                                                  {}, {}, {}, kFlags}))
