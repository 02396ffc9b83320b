#include "llm/response_cache.h"

#include <chrono>
#include <filesystem>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>
#include <sqlite3.h>

#include "util/named_thread.h"
#include "util/stop.h"

namespace evalgraph::llm {
namespace {

void exec(sqlite3* db, const char* sql, const std::string& path) {
  char* err = nullptr;
  if (sqlite3_exec(db, sql, nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err ? err : sqlite3_errmsg(db);
    sqlite3_free(err);
    throw std::runtime_error(fmt::format("LLM cache {}: {} (in: {})", path, msg, sql));
  }
}

// Waits for a lock another connection holds (another process sharing the cache): up to 10 s, as
// sqlite3_busy_timeout did, but no longer than the stop grace once the run is asked to stop (util/stop.h), so a
// cache that stays locked cannot hold a stopping run up. The answers not written are asked again on --resume.
int busy_wait(void*, int count) {
  constexpr int kStepMs = 10, kMaxMs = 10000;
  if (stop_requested() && (stop_now_requested() || seconds_since_stop() >= stop_grace_s())) return 0;
  if (count * kStepMs >= kMaxMs) return 0;
  std::this_thread::sleep_for(std::chrono::milliseconds(count < 5 ? 1 : kStepMs));
  return 1;
}

sqlite3* open_db(const std::string& path) {
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                           nullptr);
  if (rc != SQLITE_OK) {
    std::string msg = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    if (db) sqlite3_close(db);
    throw std::runtime_error(fmt::format("cannot open LLM cache {}: {}", path, msg));
  }
  sqlite3_busy_handler(db, &busy_wait, nullptr);
  return db;
}

constexpr int kPageCacheKiB = 256;  // each connection's page cache
constexpr auto kBatchWait = std::chrono::milliseconds(50);
constexpr std::size_t kBatchMax = 512;

}  // namespace

ResponseCache::ResponseCache(const std::string& path, bool snapshot) : path_(path), snapshot_(snapshot) {
  std::error_code ec;
  auto parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  if (ec) throw std::runtime_error(fmt::format("cannot create directory {} for the LLM cache: {}", parent.string(),
                                               ec.message()));
  try {
    wdb_ = open_db(path);
    // A new cache file is created without syncing (synchronous=OFF for the two statements that may write: the
    // WAL header and the empty table): an empty cache is nothing to lose, and the six fsyncs of a rollback
    // journal's first transaction plus the WAL's creation took 60-70 ms before the first request could go out.
    // An existing cache is not written by them. Then the cache's own setting: WAL, synced at checkpoints.
    exec(wdb_, "PRAGMA synchronous=OFF", path);
    exec(wdb_, "PRAGMA journal_mode=WAL", path);
    exec(wdb_,
         "CREATE TABLE IF NOT EXISTS llm_cache(key TEXT PRIMARY KEY, kind TEXT NOT NULL, provider TEXT NOT NULL, "
         "model TEXT NOT NULL, created_at INTEGER NOT NULL, response TEXT NOT NULL) WITHOUT ROWID",
         path);
    // The answer's latency when it was fetched (seconds; NULL in caches written before it was kept), for
    // `evalgraph estimate`'s wall time.
    {
      sqlite3_stmt* st = nullptr;
      bool has = false;
      if (sqlite3_prepare_v2(wdb_, "SELECT 1 FROM pragma_table_info('llm_cache') WHERE name='latency_s'", -1, &st, nullptr) ==
          SQLITE_OK)
        has = sqlite3_step(st) == SQLITE_ROW;
      sqlite3_finalize(st);
      if (!has) exec(wdb_, "ALTER TABLE llm_cache ADD COLUMN latency_s REAL", path);
    }
    exec(wdb_, "PRAGMA synchronous=NORMAL", path);
    rdb_ = open_db(path);
    // Small page caches: lookups and inserts go to one random leaf each (keys are hashes), which the OS's
    // file cache serves as well; SQLite's default (2 MB a connection) only added to the run's peak memory.
    const std::string cache_size = fmt::format("PRAGMA cache_size=-{}", kPageCacheKiB);
    exec(wdb_, cache_size.c_str(), path);
    exec(rdb_, cache_size.c_str(), path);
    if (sqlite3_prepare_v2(rdb_, "SELECT response, latency_s FROM llm_cache WHERE key=?1", -1, &get_stmt_, nullptr) != SQLITE_OK)
      throw std::runtime_error(fmt::format("LLM cache {}: {}", path, sqlite3_errmsg(rdb_)));
    if (sqlite3_prepare_v2(wdb_,
                           "INSERT OR REPLACE INTO llm_cache(key,kind,provider,model,created_at,response,latency_s) "
                           "VALUES(?1,?2,?3,?4,?5,?6,?7)",
                           -1, &put_stmt_, nullptr) != SQLITE_OK)
      throw std::runtime_error(fmt::format("LLM cache {}: {}", path, sqlite3_errmsg(wdb_)));
  } catch (...) {
    sqlite3_finalize(get_stmt_);
    sqlite3_finalize(put_stmt_);
    if (rdb_) sqlite3_close(rdb_);
    if (wdb_) sqlite3_close(wdb_);
    throw;
  }
  writer_ = named_thread("eg-llm-cache", [this] { writer_loop(); });
}

ResponseCache::~ResponseCache() {
  {
    std::lock_guard lk(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (writer_.joinable()) writer_.join();
  for (auto& r : readers_) {  // (their read transactions end with them: nothing was written)
    sqlite3_finalize(r->get);
    sqlite3_close(r->db);
  }
  sqlite3_finalize(get_stmt_);
  sqlite3_finalize(put_stmt_);
  sqlite3_close(rdb_);
  sqlite3_close(wdb_);
}

ResponseCache::Reader* ResponseCache::take_reader() {
  {
    std::lock_guard lk(readers_mu_);
    if (!free_readers_.empty()) {
      Reader* r = free_readers_.back();
      free_readers_.pop_back();
      return r;
    }
  }
  auto r = std::make_unique<Reader>();
  try {
    r->db = open_db(path_);
    // The file mapped: a lookup's pages are read from the OS's file cache without a copy (up to 1 GiB; the rest
    // of a larger cache is read as before).
    exec(r->db, "PRAGMA mmap_size=1073741824", path_);
    if (sqlite3_prepare_v2(r->db, "SELECT response, latency_s FROM llm_cache WHERE key=?1", -1, &r->get, nullptr) != SQLITE_OK)
      throw std::runtime_error(fmt::format("LLM cache {}: {}", path_, sqlite3_errmsg(r->db)));
    exec(r->db, "BEGIN", path_);  // held until the cache closes: the snapshot begins at its first lookup
  } catch (...) {
    sqlite3_finalize(r->get);
    if (r->db) sqlite3_close(r->db);
    return nullptr;  // the lookup goes through the shared read connection instead
  }
  std::lock_guard lk(readers_mu_);
  readers_.push_back(std::move(r));
  return readers_.back().get();
}

void ResponseCache::give_reader(Reader* r) {
  std::lock_guard lk(readers_mu_);
  free_readers_.push_back(r);
}

std::optional<std::string> ResponseCache::read(sqlite3_stmt* st, const std::string& key, double* latency_s) {
  sqlite3_reset(st);
  sqlite3_bind_text(st, 1, key.data(), static_cast<int>(key.size()), SQLITE_STATIC);
  std::optional<std::string> out;
  if (sqlite3_step(st) == SQLITE_ROW) {
    const auto* txt = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
    int n = sqlite3_column_bytes(st, 0);
    out = std::string(txt ? txt : "", static_cast<std::size_t>(n));
    if (latency_s != nullptr && sqlite3_column_type(st, 1) != SQLITE_NULL) *latency_s = sqlite3_column_double(st, 1);
  }
  sqlite3_reset(st);
  return out;  // a read error (e.g. locked past busy_timeout) is a miss: the call simply goes to the server
}

std::optional<std::string> ResponseCache::get(const std::string& key, double* latency_s) {
  if (latency_s != nullptr) *latency_s = -1;
  {
    std::lock_guard lk(mu_);
    auto it = pending_.find(key);
    if (it != pending_.end()) return it->second;
  }
  if (snapshot_) {
    if (Reader* r = take_reader()) {
      auto out = read(r->get, key, latency_s);
      give_reader(r);
      return out;
    }
  }
  std::lock_guard lk(read_mu_);
  return read(get_stmt_, key, latency_s);
}

ResponseCache::Observed ResponseCache::observed(const std::string& provider, const std::string& model) {
  Observed o;
  std::lock_guard lk(read_mu_);
  sqlite3_stmt* st = nullptr;
  const char* sql =
      "SELECT count(*), avg(c), avg(l) FROM (SELECT json_extract(response,'$.usage.completion_tokens') AS c, latency_s AS l "
      "FROM llm_cache WHERE kind='chat' AND provider=?1 AND model=?2 ORDER BY created_at DESC LIMIT 10000)";
  if (sqlite3_prepare_v2(rdb_, sql, -1, &st, nullptr) != SQLITE_OK) return o;
  sqlite3_bind_text(st, 1, provider.data(), static_cast<int>(provider.size()), SQLITE_TRANSIENT);
  sqlite3_bind_text(st, 2, model.data(), static_cast<int>(model.size()), SQLITE_TRANSIENT);
  if (sqlite3_step(st) == SQLITE_ROW) {
    o.answers = sqlite3_column_int64(st, 0);
    if (sqlite3_column_type(st, 1) != SQLITE_NULL) o.mean_completion_tokens = sqlite3_column_double(st, 1);
    if (sqlite3_column_type(st, 2) != SQLITE_NULL) o.mean_latency_s = sqlite3_column_double(st, 2);
  }
  sqlite3_finalize(st);
  return o;
}

void ResponseCache::put(const std::string& key, const std::string& kind, const std::string& provider,
                        const std::string& model, std::string response, double latency_s) {
  bool was_empty;
  {
    std::lock_guard lk(mu_);
    pending_[key] = response;
    was_empty = queue_.empty();
    queue_.push_back(Entry{key, kind, provider, model, std::move(response), latency_s});
    ++enqueued_;
    if (queue_.size() == kBatchMax) was_empty = true;  // a full batch goes at once
  }
  // The writer waits for the first entry of a batch only; the later ones join it without a wake-up.
  if (was_empty) cv_.notify_all();
}

void ResponseCache::flush() {
  std::unique_lock lk(mu_);
  std::uint64_t target = enqueued_;
  ++flush_waiters_;
  cv_.notify_all();
  flushed_cv_.wait(lk, [&] { return written_ >= target || stop_; });
  --flush_waiters_;
}

void ResponseCache::write_batch(std::deque<Entry>& batch) {
  auto now = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
                 .count();
  bool ok = sqlite3_exec(wdb_, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr) == SQLITE_OK;
  for (auto& e : batch) {
    sqlite3_reset(put_stmt_);
    sqlite3_bind_text(put_stmt_, 1, e.key.data(), static_cast<int>(e.key.size()), SQLITE_STATIC);
    sqlite3_bind_text(put_stmt_, 2, e.kind.data(), static_cast<int>(e.kind.size()), SQLITE_STATIC);
    sqlite3_bind_text(put_stmt_, 3, e.provider.data(), static_cast<int>(e.provider.size()), SQLITE_STATIC);
    sqlite3_bind_text(put_stmt_, 4, e.model.data(), static_cast<int>(e.model.size()), SQLITE_STATIC);
    sqlite3_bind_int64(put_stmt_, 5, static_cast<sqlite3_int64>(now));
    sqlite3_bind_text(put_stmt_, 6, e.response.data(), static_cast<int>(e.response.size()), SQLITE_STATIC);
    if (e.latency_s >= 0) sqlite3_bind_double(put_stmt_, 7, e.latency_s);
    else sqlite3_bind_null(put_stmt_, 7);
    if (sqlite3_step(put_stmt_) != SQLITE_DONE) ok = false;
    sqlite3_reset(put_stmt_);
  }
  if (sqlite3_exec(wdb_, "COMMIT", nullptr, nullptr, nullptr) != SQLITE_OK) {
    ok = false;
    sqlite3_exec(wdb_, "ROLLBACK", nullptr, nullptr, nullptr);
  }
  if (!ok) {
    std::lock_guard lk(mu_);
    write_error_ = sqlite3_errmsg(wdb_);
  }
}

void ResponseCache::writer_loop() {
  std::unique_lock lk(mu_);
  for (;;) {
    cv_.wait(lk, [&] { return stop_ || !queue_.empty(); });
    if (queue_.empty() && stop_) break;
    // Answers arrive one by one: gathering them for a moment makes one transaction of many instead of one
    // transaction (WAL append, locks) and one wake-up of this thread per answer. Until written they are
    // answered from pending_; flush() and shutdown do not wait for the batch to fill.
    cv_.wait_for(lk, kBatchWait, [&] { return stop_ || flush_waiters_ > 0 || queue_.size() >= kBatchMax; });
    std::deque<Entry> batch;
    batch.swap(queue_);
    lk.unlock();
    write_batch(batch);
    lk.lock();
    for (auto& e : batch) {
      auto it = pending_.find(e.key);
      if (it != pending_.end() && it->second == e.response) pending_.erase(it);
    }
    written_ += batch.size();
    flushed_cv_.notify_all();
  }
  flushed_cv_.notify_all();
}

CacheMergeCounts merge_cache_files(const std::vector<std::string>& inputs, const std::string& out) {
  { ResponseCache create(out); }  // the schema, as the engine makes it
  sqlite3 *db = nullptr;
  if (sqlite3_open_v2(out.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_URI, nullptr) != SQLITE_OK) {
    std::string m = db ? sqlite3_errmsg(db) : "out of memory";
    sqlite3_close(db);
    throw std::runtime_error("cannot open " + out + ": " + m);
  }
  auto exec = [&](const std::string &sql) {
    char *err = nullptr;
    if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
      std::string m = err ? err : sqlite3_errmsg(db);
      sqlite3_free(err);
      sqlite3_close(db);
      throw std::runtime_error(fmt::format("cache merge into {}: {}", out, m));
    }
  };
  auto count = [&]() {
    sqlite3_stmt *st = nullptr;
    long long c = 0;
    if (sqlite3_prepare_v2(db, "SELECT count(*) FROM llm_cache", -1, &st, nullptr) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
      c = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return c;
  };
  sqlite3_busy_timeout(db, 10000);
  CacheMergeCounts c;
  c.before = count();
  for (const auto &in : inputs) {
    std::string q;
    for (char ch : in) q += ch == '\'' ? std::string("''") : std::string(1, ch);
    exec("ATTACH DATABASE 'file:" + q + "?mode=ro' AS src");
    exec("INSERT OR IGNORE INTO main.llm_cache(key,kind,provider,model,created_at,response) "
         "SELECT key,kind,provider,model,created_at,response FROM src.llm_cache");
    exec("DETACH DATABASE src");
  }
  c.after = count();
  exec("PRAGMA wal_checkpoint(TRUNCATE)");
  sqlite3_close(db);
  return c;
}

}  // namespace evalgraph::llm
