#include "page.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace html_report {

using nlohmann::json;

namespace {
constexpr std::size_t kChunk = 3 * 262144;  // compressed bytes per <script> chunk (a multiple of 3: base64 without padding)
// Records are handed to the compressor in batches of 64 KiB, at most 16 waiting: small enough that a run of
// 1,000 records fills them as much as one of 100,000 (memory does not grow with the record count), large
// enough that the threads meet rarely.
constexpr std::size_t kBatch = std::size_t{1} << 16, kMaxQueued = 16;
constexpr std::size_t kFileBuffer = 65536, kDeflateOut = 65536;
constexpr const char *kChunkOpen = "<script type=\"application/octet-stream\" class=\"eg-z\">";
}  // namespace

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

void base64_append(const unsigned char *p, std::size_t n, std::string &out) {
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

PageWriter::PageWriter(const std::filesystem::path &path, const std::string &title, std::string_view css, const json &run) {
  out_.open(path, "wb", kFileBuffer);
  std::memset(&zs_, 0, sizeof zs_);
  if (deflateInit2(&zs_, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) throw std::runtime_error("zlib: deflateInit2 failed");
  z_open_ = true;
  put("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
  put("<title>" + html_escape(title) + " — evalgraph report</title>\n<style>\n");
  put(css);
  put("</style></head>\n<body><div id=\"app\"><header><h1>" + html_escape(title) +
      "</h1><div class=\"sub\" id=\"loading\">loading the records…</div></header></div>\n"
      "<noscript><p>This report needs JavaScript to show its records.</p></noscript>\n");
  put("<script type=\"application/json\" id=\"eg-run\">" + script_json(run) + "</script>\n");
  worker_ = std::thread([this] { work(); });
}

PageWriter::~PageWriter() {
  if (worker_.joinable()) {  // not finished (an interrupted run): stop compressing
    {
      std::lock_guard lk(mu_);
      closing_ = aborting_ = true;
    }
    cv_.notify_all();
    worker_.join();
  }
  if (z_open_) deflateEnd(&zs_);
}

void PageWriter::add_record(std::string_view in) {
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
}

void PageWriter::finish(const std::function<json()> &final_info, std::string_view js) {
  if (!out_.is_open() || !worker_.joinable()) throw std::runtime_error("finish() called twice");
  hand_over(true);
  worker_.join();
  if (worker_error_) std::rethrow_exception(worker_error_);
  deflateEnd(&zs_);
  z_open_ = false;
  put("<script type=\"application/json\" id=\"eg-meta\">" +
      script_json({{"records", records_}, {"raw_bytes", raw_bytes_}, {"compressed_bytes", compressed_}, {"chunks", chunks_}}) +
      "</script>\n");
  const json info = final_info();
  if (!info.empty()) put("<script type=\"application/json\" id=\"eg-final\">" + script_json(info) + "</script>\n");
  put("<script>\n");
  put(js);
  put("\n</script>\n</body></html>\n");
  out_.close(false);
}

// The caller's thread only hands batches over; at most kMaxQueued wait, beyond that it waits for the
// compressor.
void PageWriter::hand_over(bool last) {
  std::unique_lock lk(mu_);
  cv_space_.wait(lk, [&] { return queue_.size() < kMaxQueued || worker_error_; });
  if (worker_error_) std::rethrow_exception(worker_error_);
  if (!batch_.empty()) queue_.push_back(std::move(batch_));
  if (!spare_.empty()) {  // a batch the compressor is done with: its memory serves again
    batch_ = std::move(spare_.back());
    spare_.pop_back();
  } else {
    batch_ = std::string();
    batch_.reserve(kBatch + 4096);
  }
  if (last) closing_ = true;
  lk.unlock();
  cv_.notify_one();
}

void PageWriter::work() {
  try {
    std::string b;
    for (;;) {
      {
        std::unique_lock lk(mu_);
        if (b.capacity() > 0) {
          b.clear();
          spare_.push_back(std::move(b));
          b = std::string();
        }
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
  } catch (...) {
    std::lock_guard lk(mu_);
    worker_error_ = std::current_exception();
  }
  cv_space_.notify_all();
}

void PageWriter::deflate_bytes(const char *data, std::size_t n, bool finish) {
  unsigned char out[kDeflateOut];
  zs_.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(data));
  zs_.avail_in = static_cast<uInt>(n);
  for (;;) {
    zs_.next_out = out;
    zs_.avail_out = sizeof out;
    int rc = deflate(&zs_, finish ? Z_FINISH : Z_NO_FLUSH);
    if (rc == Z_STREAM_ERROR) throw std::runtime_error("zlib: deflate failed");
    put_compressed(out, sizeof out - zs_.avail_out);
    if (finish ? rc == Z_STREAM_END : (zs_.avail_in == 0 && zs_.avail_out != 0)) break;
  }
  if (finish) end_chunk();
}

// Compressed bytes go out base64-encoded as they come, kChunk of them per <script> element: a chunk's
// base64 is written in whole groups of three bytes (at most two wait in carry_), so no chunk is held whole.
void PageWriter::put_compressed(const unsigned char *p, std::size_t n) {
  std::string &s = text_;
  s.clear();
  while (n > 0) {
    if (chunk_bytes_ == 0) s += kChunkOpen;
    const std::size_t take = std::min(n, kChunk - chunk_bytes_);
    std::size_t i = 0;
    while (carry_.size() % 3 != 0 && i < take) carry_.push_back(static_cast<char>(p[i++]));
    if (carry_.size() == 3) {
      base64_append(reinterpret_cast<const unsigned char *>(carry_.data()), 3, s);
      carry_.clear();
    }
    const std::size_t whole = (take - i) / 3 * 3;
    base64_append(p + i, whole, s);
    carry_.append(reinterpret_cast<const char *>(p + i + whole), take - i - whole);
    chunk_bytes_ += take;
    compressed_ += take;
    p += take;
    n -= take;
    if (chunk_bytes_ == kChunk) {  // kChunk is a multiple of 3: nothing is carried over
      s += "</script>\n";
      ++chunks_;
      chunk_bytes_ = 0;
    }
  }
  put(s);
}

// Closes the last chunk (base64 with its padding), if one is open.
void PageWriter::end_chunk() {
  if (chunk_bytes_ == 0) return;
  std::string s;
  base64_append(reinterpret_cast<const unsigned char *>(carry_.data()), carry_.size(), s);
  s += "</script>\n";
  put(s);
  carry_.clear();
  ++chunks_;
  chunk_bytes_ = 0;
}

}  // namespace html_report
