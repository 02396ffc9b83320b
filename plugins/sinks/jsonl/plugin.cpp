// sink.jsonl — writes every finished record as one line of JSON.
//
// Written against the C ABI (plugin.h) so that a record is written as the exact bytes the host handed over
// (compact JSON already) without parsing it again. Files are written to "<file>.partial" and renamed to
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

#include "evalgraph/plugin.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char *kSchema = R"({
  "type": "object",
  "description": "Writes every finished record as one line of compact JSON (JSON Lines).",
  "properties": {
    "file": {"type": "string", "minLength": 1, "default": "records.jsonl",
             "description": "Output file, relative to the run's output directory (subfolders are created)."}
  },
  "patternProperties": {"^_": {"description": "Set by the host (e.g. _output_dir)."}},
  "additionalProperties": false
})";

constexpr std::size_t kBufferSize = std::size_t{4} << 20;

void release_string(eg_buffer *b) {
  delete static_cast<std::string *>(b->private_data);
  b->data = nullptr;
  b->size = 0;
  b->release = nullptr;
  b->private_data = nullptr;
}

void fill(eg_buffer *b, std::string s) noexcept {
  if (b == nullptr) return;
  try {
    auto *owned = new std::string(std::move(s));
    b->data = owned->data();
    b->size = owned->size();
    b->private_data = owned;
    b->release = &release_string;
  } catch (...) {  // out of memory: no message rather than an exception across the C boundary
  }
}

// The exception firewall: nothing thrown inside f() leaves the plugin.
template <class F> eg_status guard(eg_buffer *err, F &&f) noexcept {
  try {
    return f();
  } catch (const std::bad_alloc &) {
    fill(err, "sink.jsonl: out of memory");
  } catch (const std::exception &e) {
    fill(err, std::string("sink.jsonl: ") + e.what());
  } catch (...) {
    fill(err, "sink.jsonl: unknown error");
  }
  return EG_ERROR;
}

std::string errno_text() { return std::strerror(errno); }

class JsonlSink {
 public:
  explicit JsonlSink(const json &params) {
    if (!params.is_object()) throw std::invalid_argument("parameters must be a JSON object");
    for (const auto &item : params.items()) {
      const std::string &key = item.key();
      if (key != "file" && key.rfind('_', 0) != 0)
        throw std::invalid_argument("unknown parameter '" + key + "' (known: file)");
    }
    auto dir = params.find("_output_dir");
    if (dir == params.end() || !dir->is_string())
      throw std::invalid_argument("the host passed no _output_dir (a string) to the sink");
    file_ = "records.jsonl";
    if (auto f = params.find("file"); f != params.end()) {
      if (!f->is_string() || f->get_ref<const std::string &>().empty())
        throw std::invalid_argument("parameter file must be a non-empty string");
      file_ = f->get<std::string>();
    }
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

  ~JsonlSink() {
    if (fp_ != nullptr) std::fclose(fp_);  // not finished: the .partial file stays as the trace of the run
  }

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

  std::string finish() {
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
    return json{{"files", json::array({file_})}, {"records", records_}}.dump();
  }

 private:
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

eg_status create(const eg_host *, const char *params_json, void **instance_out, eg_buffer *error_out) {
  return guard(error_out, [&] {
    json params = (params_json != nullptr && *params_json != '\0') ? json::parse(params_json) : json::object();
    *instance_out = new JsonlSink(params);
    return EG_OK;
  });
}

void destroy(void *instance) { delete static_cast<JsonlSink *>(instance); }

eg_status process(void *instance, eg_call *, const char *input, std::size_t len, eg_buffer *out) {
  return guard(out, [&] {
    static_cast<JsonlSink *>(instance)->write(input, len);
    return EG_OK;
  });
}

eg_status finish(void *instance, eg_call *, eg_buffer *out) {
  return guard(out, [&] {
    fill(out, static_cast<JsonlSink *>(instance)->finish());
    return EG_OK;
  });
}

const char *const kWrites[] = {nullptr};

const eg_node_type kTypes[] = {{
    sizeof(eg_node_type), EG_KIND_SINK, "sink.jsonl", "Writes every finished record as one line of JSON (JSON Lines)",
    kSchema, nullptr, nullptr, kWrites, 0u, &create, &destroy, &process, &finish,
}};

const eg_plugin kPlugin = {
    EG_MAGIC, EG_ABI_MAJOR, EG_ABI_MINOR, sizeof(eg_plugin), sizeof(eg_node_type), sizeof(eg_host), "sink_jsonl",
    "0.1.0",  "JSON Lines sink",
    sizeof(kTypes) / sizeof(kTypes[0]), kTypes,
};

}  // namespace

extern "C" EG_EXPORT const eg_plugin *evalgraph_plugin_v1(void) { return &kPlugin; }
