// Persistent response cache of the LLM service: SQLite in WAL mode, keyed by a hex SHA-256.
// Thread-safe. Reads go through one read connection; writes are queued to a writer thread that commits
// them in batches (a lookup sees queued writes at once, so a repeated call never misses its own answer).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <memory>
#include <unordered_map>
#include <vector>

struct sqlite3;
struct sqlite3_stmt;

namespace evalgraph::llm {

class ResponseCache {
 public:
  // snapshot (`evalgraph estimate`, which writes nothing): lookups read one snapshot of the cache, taken at the
  // first lookup, through a connection per concurrent caller that holds its read transaction (no lock and no
  // file check per lookup, no caller waiting for another's lookup) and maps the file (no copy per page read).
  // Answers written meanwhile by another process are not seen. Without it (a run) each lookup is its own read.
  explicit ResponseCache(const std::string& path, bool snapshot = false);  // creates parent directories; throws
  ~ResponseCache();                                 // flushes queued writes
  ResponseCache(const ResponseCache&) = delete;
  ResponseCache& operator=(const ResponseCache&) = delete;

  // latency_s (optional): the answer's latency when it was fetched, -1 when not known.
  std::optional<std::string> get(const std::string& key, double* latency_s = nullptr);
  void put(const std::string& key, const std::string& kind, const std::string& provider, const std::string& model,
           std::string response, double latency_s = -1);
  void flush();  // blocks until every queued write is committed
  // What the cache has seen of a provider's chat answers (the most recent 10,000): how many, their mean
  // usage.completion_tokens (< 0: none reported) and mean latency (< 0: none stored).
  struct Observed {
    long long answers = 0;
    double mean_completion_tokens = -1, mean_latency_s = -1;
  };
  Observed observed(const std::string& provider, const std::string& model);
  const std::string& path() const { return path_; }

 private:
  struct Entry {
    std::string key, kind, provider, model, response;
    double latency_s = -1;
  };
  struct Reader {
    sqlite3* db = nullptr;
    sqlite3_stmt* get = nullptr;
  };
  Reader* take_reader();  // snapshot mode: a free reader, opened (and its read transaction begun) when none is
  void give_reader(Reader* r);
  std::optional<std::string> read(sqlite3_stmt* st, const std::string& key, double* latency_s);
  void writer_loop();
  void write_batch(std::deque<Entry>& batch);

  std::string path_;
  sqlite3* rdb_ = nullptr;
  sqlite3* wdb_ = nullptr;
  sqlite3_stmt* get_stmt_ = nullptr;
  sqlite3_stmt* put_stmt_ = nullptr;
  std::mutex read_mu_;
  bool snapshot_ = false;
  std::mutex readers_mu_;
  std::vector<std::unique_ptr<Reader>> readers_;  // snapshot mode: every reader opened
  std::vector<Reader*> free_readers_;

  std::mutex mu_;
  std::condition_variable cv_, flushed_cv_;
  std::deque<Entry> queue_;
  std::unordered_map<std::string, std::string> pending_;  // key -> response, queued or being written
  std::uint64_t enqueued_ = 0, written_ = 0;
  int flush_waiters_ = 0;  // flush() callers waiting: the writer commits at once instead of gathering a batch
  bool stop_ = false;
  std::string write_error_;
  std::thread writer_;
};

// `evalgraph cache merge`: every entry of the caches `inputs` copied into the cache `out` (created with the
// engine's schema when missing; an entry it already has is kept). Throws std::runtime_error naming the file.
struct CacheMergeCounts {
  long long before = 0, after = 0;  // entries in `out` before and after
};
CacheMergeCounts merge_cache_files(const std::vector<std::string>& inputs, const std::string& out);

}  // namespace evalgraph::llm
