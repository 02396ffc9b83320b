// sink.html_report — report.html: one self-contained page per run (README.md in this folder).
//
// The page is written while the run goes: the head, the styles and the run's settings (the host's `_run`
// parameter) when the sink is created, then every record, gzip-compressed and base64-encoded in chunks of
// <script type="application/octet-stream" class="eg-z"> elements as records arrive, and at the end the
// record count, what the host's run_info says once the run is done (eg-final: the counts and the LLM usage
// per provider; ABI 1.1) and the page's script (records are compressed on a thread of the sink's own, see
// hand_over).
// Memory stays flat however many records a run has; the browser
// decompresses the records with its own DecompressionStream and parses each record when it is needed.
#include <zlib.h>

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "evalgraph/output_file.hpp"
#include "evalgraph/plugin.hpp"
#include "report_assets.hpp"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct Config {
  std::string file = "report.html";
  std::optional<std::string> title;
};
const evalgraph::Params<Config> kParams{"Writes report.html: the run, per-output means with intervals and histograms, all records (sort, filter, search) and each record's evidence. One file, no network.", {
  evalgraph::param(&Config::file, "file", "Output file, relative to the run's output directory.").min_length(1),
  evalgraph::param(&Config::title, "title", "Page title (null: the pipeline's name)."),
}};

constexpr std::size_t kChunk = 3 * 262144;  // compressed bytes per <script> chunk (a multiple of 3: base64 without padding)

// JSON for a <script type="application/json"> element: '<' only occurs inside JSON strings, where
// \u003c means the same, so no "</script>" or "<!--" can end or confuse the element.
std::string script_json(const json &j) {
  std::string s = j.dump(-1, ' ', false, json::error_handler_t::replace), o;
  o.reserve(s.size());
  for (char c : s) {
    if (c == '<') o += "\\u003c";
    else o += c;
  }
  return o;
}

std::string html_escape(const std::string &s) {
  std::string o;
  for (char c : s) {
    if (c == '<') o += "&lt;";
    else if (c == '>') o += "&gt;";
    else if (c == '&') o += "&amp;";
    else if (c == '"') o += "&quot;";
    else o += c;
  }
  return o;
}

void base64(const unsigned char *p, std::size_t n, std::string &out) {
  static const char *t = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::size_t i = 0;
  for (; i + 3 <= n; i += 3) {
    unsigned v = (p[i] << 16) | (p[i + 1] << 8) | p[i + 2];
    out += t[v >> 18];
    out += t[(v >> 12) & 63];
    out += t[(v >> 6) & 63];
    out += t[v & 63];
  }
  if (i < n) {
    unsigned v = p[i] << 16;
    if (i + 1 < n) v |= p[i + 1] << 8;
    out += t[v >> 18];
    out += t[(v >> 12) & 63];
    out += (i + 1 < n) ? t[(v >> 6) & 63] : '=';
    out += '=';
  }
}

class HtmlReport : public evalgraph::RawNode {
 public:
  HtmlReport(const evalgraph::Host &host, const json &params) : host_(host) {
    const Config c = kParams.parse(params);
    file_ = c.file;
    final_ = evalgraph::sink_output_path(params, file_);
    fp_ = std::fopen(evalgraph::partial_path(final_).c_str(), "wb");
    if (fp_ == nullptr) throw std::runtime_error("cannot create " + evalgraph::partial_path(final_).string() + ": " + std::strerror(errno));
    std::memset(&zs_, 0, sizeof zs_);
    if (deflateInit2(&zs_, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) throw std::runtime_error("zlib: deflateInit2 failed");
    z_open_ = true;
    json run = params.contains("_run") ? params["_run"] : json::object();
    std::string title = c.title ? *c.title : run.value("pipeline", std::string("evalgraph run"));
    put("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    put("<title>" + html_escape(title) + " — evalgraph report</title>\n<style>\n");
    put(report_assets::kCss);
    put("</style></head>\n<body><div id=\"app\"><header><h1>" + html_escape(title) +
        "</h1><div class=\"sub\" id=\"loading\">loading the records…</div></header></div>\n"
        "<noscript><p>This report needs JavaScript to show its records.</p></noscript>\n");
    char stamp[32];
    std::time_t now = std::time(nullptr);
    std::strftime(stamp, sizeof stamp, "%Y-%m-%d %H:%M:%S", std::localtime(&now));
    run["report_written"] = stamp;
    put("<script type=\"application/json\" id=\"eg-run\">" + script_json(run) + "</script>\n");
    worker_ = std::thread([this] { work(); });
  }

  ~HtmlReport() override {
    if (worker_.joinable()) {  // not finished (an interrupted run): stop compressing
      {
        std::lock_guard lk(mu_);
        closing_ = aborting_ = true;
      }
      cv_.notify_all();
      worker_.join();
    }
    if (z_open_) deflateEnd(&zs_);
    if (fp_ != nullptr) std::fclose(fp_);  // not finished: report.html.partial stays as the trace
  }

  std::string process_raw(evalgraph::Call &, std::string_view in) override {
    while (!in.empty() && (in.back() == '\n' || in.back() == '\r' || in.back() == ' ')) in.remove_suffix(1);
    if (in.empty()) throw std::invalid_argument("received an empty record");
    if (in.find('\n') != std::string_view::npos)  // one record per line, always
      batch_ += json::parse(in).dump(-1, ' ', false, json::error_handler_t::replace);
    else
      batch_.append(in.data(), in.size());
    batch_ += '\n';
    raw_bytes_ += in.size() + 1;
    ++records_;
    if (batch_.size() >= kBatch) hand_over(false);
    return {};
  }

  json finish(evalgraph::Call &call) override {
    if (fp_ == nullptr || !worker_.joinable()) throw std::runtime_error("finish() called twice");
    hand_over(true);
    worker_.join();
    if (worker_error_) std::rethrow_exception(worker_error_);
    deflateEnd(&zs_);
    z_open_ = false;
    put("<script type=\"application/json\" id=\"eg-meta\">" +
        script_json({{"records", records_}, {"raw_bytes", raw_bytes_}, {"compressed_bytes", compressed_}, {"chunks", chunks_}}) +
        "</script>\n");
    // The run as the host sees it now that every record is written (counts, LLM usage per provider). A host
    // older than ABI 1.1 has no run_info (an empty object: no element); a failing one costs only this part.
    json final_info = json::object();
    try {
      final_info = host_.run_info(&call);
    } catch (const std::exception &e) {
      host_.log(EG_LOG_WARN, std::string("report.html: the run's final counts and LLM usage are missing: ") + e.what(), &call);
    }
    if (!final_info.empty()) put("<script type=\"application/json\" id=\"eg-final\">" + script_json(final_info) + "</script>\n");
    put("<script>\n");
    put(report_assets::kJs);
    put("\n</script>\n</body></html>\n");
    std::FILE *fp = fp_;
    fp_ = nullptr;
    bool ok = std::fflush(fp) == 0;
    if (std::fclose(fp) != 0) ok = false;
    if (!ok) throw std::runtime_error("cannot write " + evalgraph::partial_path(final_).string() + ": " + std::strerror(errno));
    evalgraph::publish_partial_file(final_, "sink.html_report");
    return {{"files", json::array({file_})}, {"records", records_}};
  }

 private:
  // Records are compressed on a thread of their own, in batches of ~1 MiB: the engine's writer thread only
  // copies them. At most kMaxQueued batches wait; beyond that the writer waits for the compressor.
  void hand_over(bool last) {
    std::unique_lock lk(mu_);
    cv_space_.wait(lk, [&] { return queue_.size() < kMaxQueued || worker_error_; });
    if (worker_error_) std::rethrow_exception(worker_error_);
    if (!batch_.empty()) queue_.push_back(std::move(batch_));
    batch_ = std::string();
    batch_.reserve(kBatch + 65536);
    if (last) closing_ = true;
    lk.unlock();
    cv_.notify_one();
  }

  void work() {
    try {
      for (;;) {
        std::string b;
        {
          std::unique_lock lk(mu_);
          cv_.wait(lk, [&] { return !queue_.empty() || closing_; });
          if (aborting_) return;
          if (queue_.empty()) break;  // closing and all done
          b = std::move(queue_.front());
          queue_.pop_front();
        }
        cv_space_.notify_one();
        deflate_bytes(b.data(), b.size(), false);
      }
      deflate_bytes(nullptr, 0, true);
      flush_chunks(true);
    } catch (...) {
      std::lock_guard lk(mu_);
      worker_error_ = std::current_exception();
    }
    cv_space_.notify_all();
  }

  void put(const std::string &s) {
    if (std::fwrite(s.data(), 1, s.size(), fp_) != s.size())
      throw std::runtime_error("cannot write " + evalgraph::partial_path(final_).string() + ": " + std::strerror(errno));
  }

  void deflate_bytes(const char *data, std::size_t n, bool finish) {
    zs_.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(data));
    zs_.avail_in = static_cast<uInt>(n);
    for (;;) {
      if (pending_.size() < kChunk + 65536) pending_.resize(kChunk + 65536);
      zs_.next_out = reinterpret_cast<Bytef *>(pending_.data() + used_);
      zs_.avail_out = static_cast<uInt>(pending_.size() - used_);
      int rc = deflate(&zs_, finish ? Z_FINISH : Z_NO_FLUSH);
      if (rc == Z_STREAM_ERROR) throw std::runtime_error("zlib: deflate failed");
      used_ = pending_.size() - zs_.avail_out;
      flush_chunks(false);
      if (finish ? rc == Z_STREAM_END : (zs_.avail_in == 0 && zs_.avail_out != 0)) break;
    }
  }

  // Writes every full chunk of compressed bytes (all that is left when `all`) as one base64 <script>.
  void flush_chunks(bool all) {
    std::size_t off = 0;
    while (used_ - off >= kChunk || (all && used_ > off)) {
      std::size_t n = std::min(kChunk, used_ - off);
      std::string s = "<script type=\"application/octet-stream\" class=\"eg-z\">";
      base64(reinterpret_cast<const unsigned char *>(pending_.data() + off), n, s);
      s += "</script>\n";
      put(s);
      compressed_ += n;
      ++chunks_;
      off += n;
    }
    if (off > 0) {
      std::memmove(pending_.data(), pending_.data() + off, used_ - off);
      used_ -= off;
    }
  }

  evalgraph::Host host_;  // the host's table outlives its nodes
  std::string file_;
  fs::path final_;
  std::FILE *fp_ = nullptr;
  z_stream zs_;
  bool z_open_ = false;
  std::string pending_;
  std::size_t used_ = 0, records_ = 0, raw_bytes_ = 0, compressed_ = 0, chunks_ = 0;
  static constexpr std::size_t kBatch = std::size_t{1} << 20, kMaxQueued = 8;
  std::string batch_;
  std::deque<std::string> queue_;
  std::mutex mu_;
  std::condition_variable cv_, cv_space_;
  bool closing_ = false, aborting_ = false;
  std::exception_ptr worker_error_;
  std::thread worker_;  // last: started when everything above exists
};

}  // namespace

EVALGRAPH_PLUGIN("sink_html_report", "1.0.0", "self-contained HTML report of a run",
                 evalgraph::node_type<HtmlReport>({EG_KIND_SINK, "sink.html_report",
                                                   "report.html: the run, means with intervals, histograms, all records with their evidence (one file, no network)",
                                                   kParams.schema(), {}, {}, {}, 0}))
