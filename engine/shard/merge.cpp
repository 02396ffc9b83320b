#include "shard/merge.h"

#include <fmt/format.h>

#include <condition_variable>
#include <deque>
#include <exception>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "io/raw_record.h"
#include "io/dataset.h"
#include "util/raw_json.h"

namespace evalgraph::shard {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// One shard journal, read a record line at a time.
struct Source {
  fs::path path;
  std::ifstream in;
  std::string line;
  std::size_t index = 0, max_seen = 0, line_no = 0;
  bool has = false, seen = false;
  void advance() {
    has = false;
    while (std::getline(in, line)) {
      ++line_no;
      if (line.empty() || line.rfind("{\"_chunk_end\"", 0) == 0) continue;
      std::size_t tab = line.find('\t');
      if ((line[0] != 'D' && line[0] != 'F') || tab == std::string::npos || tab < 2)
        throw std::runtime_error(fmt::format("{}:{}: not a shard journal line; is the shard folder damaged?",
                                             path.string(), line_no));
      index = std::stoull(line.substr(1, tab - 1));
      has = true;
      return;
    }
  }
  bool starts_unit() const { return !seen || index > max_seen; }
};

// The data set's records from the current unit on, read in order as the "D" lines ask for them.
class DatasetWindow {
 public:
  explicit DatasetWindow(const Pipeline &p) : p_(p) {}
  const RawRecord &at(std::size_t index) {
    if (!dataset_) dataset_ = io::open_dataset(p_.dataset.path, p_.dataset.format, p_.dataset.options, p_.limits.record);
    while (next_read_ <= index && dataset_->next_text(text_, &members_)) {
      if (members_.empty() && !rawjson::object_members(text_, members_))
        throw io::DataError(p_.dataset.path, dataset_->line(), "the record could not be split into its fields", "");
      window_[next_read_].assign(std::move(text_), members_);
      text_ = std::string();
      ++next_read_;
    }
    auto it = window_.find(index);
    if (it == window_.end())
      throw std::runtime_error(fmt::format("a shard names dataset record {}, which {} does not hold", index + 1,
                                           p_.dataset.path.string()));
    return it->second;
  }
  void drop_before(std::size_t index) { window_.erase(window_.begin(), window_.lower_bound(index)); }

 private:
  const Pipeline &p_;
  std::unique_ptr<io::RecordReader> dataset_;
  std::map<std::size_t, RawRecord> window_;
  std::size_t next_read_ = 0;
  std::string text_;
  std::vector<rawjson::Member> members_;  // found by the reader's check: the record is scanned once
};

// Reading and combining (the merging thread) overlap with the sinks' writing (this writer thread): batches of
// records through a short queue.
class BatchWriter {
 public:
  using Write = std::function<void(std::size_t, const std::string &)>;
  explicit BatchWriter(const Write &write) : write_(write), thread_([this] { loop(); }) {}
  void emit(std::size_t index, std::string record) {
    batch_.emplace_back(index, std::move(record));
    if (batch_.size() >= 512) flush();
  }
  void flush() {
    std::unique_lock lk(mu_);
    cv_.wait(lk, [&] { return queue_.size() < 8 || error_; });
    if (error_) return;
    queue_.push_back(std::move(batch_));
    batch_ = Batch();
    lk.unlock();
    cv_.notify_all();
  }
  bool pending() const { return !batch_.empty(); }
  void finish() {
    {
      std::lock_guard lk(mu_);
      done_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  std::exception_ptr error() const { return error_; }

 private:
  using Batch = std::vector<std::pair<std::size_t, std::string>>;
  void loop() {
    try {
      for (;;) {
        Batch batch;
        {
          std::unique_lock lk(mu_);
          cv_.wait(lk, [&] { return !queue_.empty() || done_; });
          if (queue_.empty()) return;
          batch = std::move(queue_.front());
          queue_.pop_front();
        }
        cv_.notify_all();
        for (auto &[index, record] : batch) write_(index, record);
      }
    } catch (...) {
      std::lock_guard lk(mu_);
      error_ = std::current_exception();
      done_ = true;
      queue_.clear();
      cv_.notify_all();
    }
  }
  const Write &write_;
  std::deque<Batch> queue_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  std::exception_ptr error_;
  Batch batch_;
  std::thread thread_;  // last: it starts once the rest is set up
};

}  // namespace

// The shard journals hold disjoint units (a record with its replications, or a whole sequence group with its
// replications), each journal in dataset order. A line starts a new unit when its dataset index is above every
// index that journal has shown so far (a group's next replication starts over at the group's first record).
// Units go to the sinks by their first index: the order of one unsharded run. Memory: one line per journal and
// the dataset records of the current unit.
std::size_t merge_journals(const std::vector<fs::path> &journals, const Pipeline &p,
                           const std::function<void(const json &status)> &count,
                           const std::function<void(std::size_t index, const std::string &record)> &write) {
  std::vector<std::unique_ptr<Source>> src;
  for (const auto &path : journals) {
    auto s = std::make_unique<Source>();
    s->path = path;
    s->in.open(path, std::ios::binary);
    if (!s->in) throw std::runtime_error("cannot read " + path.string());
    s->advance();
    src.push_back(std::move(s));
  }
  DatasetWindow dataset(p);
  std::size_t merged = 0;
  BatchWriter writer(write);
  try {
    for (;;) {
      Source *best = nullptr;
      for (auto &s : src)
        if (s->has && (best == nullptr || s->index < best->index)) best = s.get();
      if (best == nullptr) break;
      for (auto &s : src)
        if (s.get() != best && s->has && s->index == best->index)
          throw std::runtime_error(fmt::format("dataset record {} is in two shards ({} and {})", best->index + 1,
                                               best->path.string(), s->path.string()));
      dataset.drop_before(best->index);
      do {
        Source &s = *best;
        if (!s.seen || s.index > s.max_seen) s.max_seen = s.index;
        s.seen = true;
        std::size_t tab = s.line.find('\t');
        std::string_view body = std::string_view(s.line).substr(tab + 1);
        json status = json::object();  // only what the counts need: the record itself is not parsed
        if (auto e = member_of(body, "_errors")) status["_errors"] = json::parse(*e);
        if (auto k = member_of(body, "_skipped")) status["_skipped"] = json::parse(*k);
        count(status);
        writer.emit(s.index, s.line[0] == 'D' ? RawRecord::combine(dataset.at(s.index), body) : std::string(body));
        ++merged;
        s.advance();
      } while (best->has && !best->starts_unit());
    }
    if (writer.pending()) writer.flush();
  } catch (...) {
    writer.finish();
    throw;
  }
  writer.finish();
  if (writer.error()) std::rethrow_exception(writer.error());
  return merged;
}

}  // namespace evalgraph::shard
