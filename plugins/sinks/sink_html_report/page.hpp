// report.html as sink.html_report writes it, while the run goes (README.md in this folder): the head, the
// styles and the run's settings first; then every record, gzip-compressed and base64-encoded in chunks of
// <script type="application/octet-stream" class="eg-z"> elements as records arrive; at the end the record
// count (eg-meta), what the host says once the run is done (eg-final) and the page's script.
// Memory stays flat however many records a run has: records are compressed on a thread of the writer's own
// in batches of 64 KiB (at most 16 waiting), so the caller only copies them, and the compressed bytes are
// written base64-encoded as they come.
#ifndef EVALGRAPH_HTML_REPORT_PAGE_HPP
#define EVALGRAPH_HTML_REPORT_PAGE_HPP

#include <zlib.h>

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <filesystem>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "evalgraph/output_file.hpp"

namespace html_report {

// JSON for a <script type="application/json"> element: '<' only occurs inside JSON strings, where
// \u003c means the same, so no "</script>" or "<!--" can end or confuse the element.
std::string script_json(const nlohmann::json &j);
// Text for HTML content and attribute values: < > & " escaped.
std::string html_escape(const std::string &s);
// Appends the bytes base64-encoded (with '=' padding).
void base64_append(const unsigned char *p, std::size_t n, std::string &out);

class PageWriter {
 public:
  // Creates `path` and writes the head: `title`, the styles (`css`) and the run's settings (`run`, eg-run).
  PageWriter(const std::filesystem::path &path, const std::string &title, std::string_view css, const nlohmann::json &run);
  PageWriter(const PageWriter &) = delete;
  PageWriter &operator=(const PageWriter &) = delete;
  // Not finished (an interrupted run): stops compressing and leaves the file as it is.
  ~PageWriter();

  // One record as the host sent it: surrounding line ends and spaces are trimmed, and a record spread over
  // several lines is parsed and written compact (one record per line, always). Throws on an empty record.
  void add_record(std::string_view record);

  // Compresses what is left and writes eg-meta, eg-final (final_info(), unless it is empty) and the page's
  // script (`js`), then closes the file. Errors of the compressor thread are thrown here.
  void finish(const std::function<nlohmann::json()> &final_info, std::string_view js);

  std::size_t records() const { return records_; }

 private:
  void hand_over(bool last);
  void work();
  void put(std::string_view s) { out_.write(s); }
  void deflate_bytes(const char *data, std::size_t n, bool finish);
  void put_compressed(const unsigned char *p, std::size_t n);
  void end_chunk();

  evalgraph::BufferedFile out_;
  z_stream zs_;
  bool z_open_ = false;
  std::string carry_;  // compressed bytes of the open chunk not yet base64-encoded (fewer than 3)
  std::size_t chunk_bytes_ = 0;  // compressed bytes in the open chunk
  std::size_t records_ = 0, raw_bytes_ = 0, compressed_ = 0, chunks_ = 0;
  std::string batch_, text_;  // the records being collected; the base64 text being written (compressor thread)
  std::deque<std::string> queue_;
  std::vector<std::string> spare_;  // batches compressed, kept for reuse: the same few buffers serve a whole run
  std::mutex mu_;
  std::condition_variable cv_, cv_space_;
  bool closing_ = false, aborting_ = false;
  std::exception_ptr worker_error_;
  std::thread worker_;  // last: started when everything above exists
};

}  // namespace html_report

#endif  // EVALGRAPH_HTML_REPORT_PAGE_HPP
