// sink.jsonl — writes every finished record as one line of JSON.
//
// A RawNode (plugin.hpp): a record is written as the exact bytes the host handed over (compact JSON
// already) without parsing it again. Files are written to "<file>.partial" and renamed to
// "<file>" in finish(), so a crash never leaves a half-written file under its final name.
#include <cstring>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "evalgraph/output_file.hpp"
#include "evalgraph/plugin.hpp"

namespace {

using nlohmann::json;

struct Config {
  std::string file = "records.jsonl";
};
const evalgraph::Params<Config> kParams{{
  evalgraph::output_file_param<Config>(),
}};

// 256 KiB: writes stay few and large, and a run of 1,000 records fills the buffer as one of 100,000 does, so
// memory does not grow with the record count (a 4 MiB buffer was touched further the more a run wrote).
constexpr std::size_t kBufferSize = std::size_t{256} << 10;

const evalgraph::NodeSpec kSpec{
    .kind = EG_KIND_SINK,
    .name = "sink.jsonl",
    .description = "Writes every finished record as one line of JSON (JSON Lines)",
    .params = kParams};

class JsonlSink : public evalgraph::RawNode {
 public:
  JsonlSink(const evalgraph::Host &, const Config &c, const json &params) {
    file_ = c.file;
    out_.open_partial(evalgraph::SinkFiles(params, kSpec.name).path(file_), kBufferSize);
  }

  std::string process_raw(evalgraph::Call &, std::string_view in) override {
    write(in.data(), in.size());
    return {};
  }

  json finish(evalgraph::Call &) override {
    if (!out_.is_open()) throw std::runtime_error("finish() called twice");
    out_.publish(true, kSpec.name);
    return evalgraph::files_written(file_, records_);
  }

 private:
  void write(const char *data, std::size_t len) {
    if (!out_.is_open()) throw std::runtime_error("process() after finish()");
    // Trim surrounding whitespace; the host sends compact JSON, but a record with a raw line break (pretty
    // printed) must still become exactly one line.
    while (len > 0 && (data[len - 1] == '\n' || data[len - 1] == '\r' || data[len - 1] == ' ')) --len;
    if (len == 0) throw std::invalid_argument("received an empty record");
    if (std::memchr(data, '\n', len) != nullptr || std::memchr(data, '\r', len) != nullptr) {
      out_.write(json::parse(data, data + len).dump(-1, ' ', false, json::error_handler_t::replace));
    } else {
      out_.write(data, len);
    }
    out_.write("\n", 1);
    ++records_;
  }

  std::string file_;
  evalgraph::BufferedFile out_;  // <file>.partial until finish()
  std::size_t records_ = 0;
};

}  // namespace

// One instance, records in order (no flags).
EVALGRAPH_PLUGIN("sink_jsonl", "JSON Lines sink", evalgraph::node_type<JsonlSink>(kSpec))
