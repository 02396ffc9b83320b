// Feeding: the data set into chunks. Records are read in order (a resumed run passes over those the journal
// holds), a shard keeps its own records (or, with group_by, its own groups), sequence groups are kept whole
// and checked to be contiguous, and each record (or group) is replicated; chunks of about chunk_size records
// go to the workers as the window allows (push_chunk).
#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <functional>
#include <unordered_set>

#include "exec/engine.h"
#include "io/dataset.h"
#include "util/stop.h"

namespace evalgraph::exec_detail {

// The group a record belongs to: its group_by value as JSON text, written the same way however the dataset
// spelled it ("c\u0031" and "c1" are one group). Empty when the record has no such field.
std::string group_of(const RawRecord &rec, const std::string &field) {
  std::string_view raw = rec.get(field).value_or("");
  if (raw.find('\\') == std::string_view::npos) return std::string(raw);
  return json::parse(raw, nullptr, false).dump(-1, ' ', false, json::error_handler_t::replace);
}

namespace {

std::size_t count_lines(const fs::path &file) {
  std::ifstream in(file, std::ios::binary);
  std::vector<char> buf(1 << 16);
  std::size_t n = 0;
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    n += static_cast<std::size_t>(std::count(buf.data(), buf.data() + in.gcount(), '\n'));
  }
  return n;
}

// Collects records into chunks: replications of a record (or of a whole group) side by side.
class Feeder {
 public:
  Feeder(const Pipeline &p, const Plan &plan, const RunOptions &opt, std::function<void(std::unique_ptr<Chunk>)> push)
      : p_(p), plan_(plan), opt_(opt), push_(std::move(push)), reps_(p.replications) {}

  void add(Slot s) { chunk_->slots.push_back(std::move(s)); }
  void maybe_flush(bool force) {
    if (!chunk_->slots.empty() && (force || chunk_->slots.size() >= opt_.chunk_records())) {
      push_(std::move(chunk_));
      chunk_ = std::make_unique<Chunk>();
    }
  }
  void close_group() {
    if (group_.empty()) return;
    for (int r = 0; r < reps_; ++r)
      for (const auto &g : group_) {
        Slot s = g;
        s.replication = r;
        if (reps_ > 1) s.rec.set("_replication", std::to_string(r));
        add(std::move(s));
      }
    group_.clear();
    maybe_flush(false);
  }
  // A record without group_by: its replications.
  void take_record(Slot s) {
    for (int r = 0; r < reps_; ++r) {
      Slot c = r + 1 < reps_ ? s : std::move(s);
      c.replication = r;
      if (reps_ > 1) c.rec.set("_replication", std::to_string(r));
      add(std::move(c));
    }
    maybe_flush(false);
  }
  // A record of a sequence pipeline: it joins its group (a new key closes the group before).
  void take_grouped(Slot s) {
    // A record that fails alone and lost its group field stays with the group it is read in.
    std::string key = !s.problem.empty() && in_group_ && !s.rec.get(plan_.group_by) ? group_key_
                                                                                   : group_of(s.rec, plan_.group_by);
    if (key != group_key_ || !in_group_) {
      if (in_group_) closed_groups_.insert(group_key_);
      in_group_ = true;
      close_group();
      if (closed_groups_.count(key) != 0)
        throw io::DataError(p_.dataset.path, s.line,
                            fmt::format("record of group {}={} appears after that group ended (first seen near line {})",
                                        plan_.group_by, key, group_line_),
                            fmt::format("sort the dataset by '{}' so each group's records are together", plan_.group_by));
      group_key_ = key;
      group_line_ = s.line;
      group_mine_ = opt_.shard_count <= 0 || shard_of_group(key, opt_.shard_count) == opt_.shard_index;
    }
    if (!group_mine_) return;  // another shard's group (still read: a group split in the data is an error)
    group_.push_back(std::move(s));
  }

 private:
  const Pipeline &p_;
  const Plan &plan_;
  const RunOptions &opt_;
  std::function<void(std::unique_ptr<Chunk>)> push_;
  const int reps_;
  std::unique_ptr<Chunk> chunk_ = std::make_unique<Chunk>();
  std::vector<Slot> group_;  // sequence mode: the records of the current group
  std::string group_key_;
  std::unordered_set<std::string> closed_groups_;
  std::size_t group_line_ = 0;
  bool in_group_ = false;    // a group has started (group_ may be empty when it is another shard's)
  bool group_mine_ = true;   // sequence mode: whether the current group belongs to this shard
};

}  // namespace

std::size_t Engine::expected_total(long long limit) const {
  if (run_folder::data_format(p_.dataset.path, p_.dataset.format) == "otlp") return 0;  // records are not lines
  std::size_t lines = count_lines(p_.dataset.path);
  // (the format as the reader takes it: .ndjson and .json are JSON lines, not CSV with a header line)
  if (run_folder::has_header_line(run_folder::data_format(p_.dataset.path, p_.dataset.format)) && lines > 0) --lines;
  if (limit >= 0) lines = std::min<std::size_t>(lines, static_cast<std::size_t>(limit));
  std::size_t total = lines * static_cast<std::size_t>(p_.replications);
  if (opt_.shard_count > 0) total /= static_cast<std::size_t>(opt_.shard_count);
  return total;
}

// Reads the data set from record `skip` on (up to `limit`) into chunks; a merge reads nothing.
void Engine::feed(std::size_t skip, long long limit, bool merging) {
  auto reader = io::open_dataset(p_.dataset.path, p_.dataset.format, p_.dataset.options, p_.limits.record);
  const bool seq = !plan_.group_by.empty();
  Feeder feeder(p_, plan_, opt_, [this](std::unique_ptr<Chunk> c) { push_chunk(std::move(c)); });
  std::string text;
  std::vector<rawjson::Member> members;  // the record's fields, found by the reader's check
  std::size_t index = 0;
  for (; index < skip && reader->next_text(text); ++index) {
  }  // finished before the resume
  const bool sharded = opt_.shard_count > 0;
  const auto shard_n = static_cast<std::size_t>(std::max(1, opt_.shard_count));
  const auto shard_i = static_cast<std::size_t>(std::max(0, opt_.shard_index));
  while (!merging && !stop_requested() && !host_.cancelled() && (limit < 0 || static_cast<long long>(index) < limit) &&
         !(record_budget_ && record_budget_->exhausted())) {
    if (sharded && !seq && index % shard_n != shard_i) {  // another shard's record: only passed over
      if (!reader->skip()) break;
      ++index;
      continue;
    }
    if (!reader->next_text(text, &members)) break;
    Slot s;
    s.index = index++;
    s.line = reader->line();
    if (members.empty() && !rawjson::object_members(text, members))  // (the readers hand out checked objects)
      throw io::DataError(p_.dataset.path, s.line, "the record could not be split into its fields", "");
    s.rec.assign(std::move(text), members);
    text = std::string();
    s.problem = reader->record_problem();  // over a limit: it fails alone
    if (seq) feeder.take_grouped(std::move(s));
    else feeder.take_record(std::move(s));
  }
  feeder.close_group();
  feeder.maybe_flush(true);
  note_reader_stats(*reader);
}

// The reader's counts go to run.json (dataset_reader); what a trace reader could not map is also said on stderr.
void Engine::note_reader_stats(const io::RecordReader &reader) {
  dataset_stats_ = reader.stats();
  if (!dataset_stats_.is_object() || dataset_stats_.value("unmapped", json::object()).empty()) return;
  std::string reasons;
  for (const auto &[reason, n] : dataset_stats_["unmapped"].items())
    reasons += fmt::format("{}{} x {}", reasons.empty() ? "" : "; ", n.get<long long>(), reason);
  host_.log(EG_LOG_WARN, fmt::format("{}: {} records from {} traces; not mapped: {} (run.json dataset_reader)",
                                     p_.dataset.path.string(), dataset_stats_.value("records", 0LL),
                                     dataset_stats_.value("traces", 0LL), reasons));
}

// Hands a chunk read to the workers once the window has room for it (a chunk larger than the window, a big
// group, goes alone).
void Engine::push_chunk(std::unique_ptr<Chunk> c) {
  if (record_budget_) {  // under a budget: only the records it can finish (record_budget.h)
    const std::size_t fit = record_budget_->admit(c->slots.size(), !plan_.group_by.empty());
    if (fit == 0) return;
    c->slots.resize(fit);
  }
  std::unique_lock lk(mu_);
  const std::size_t n = c->slots.size();
  cv_space_.wait(lk, [&] { return records_in_flight_ == 0 || records_in_flight_ + n <= window_; });
  c->seq = total_chunks_++;
  c->remaining = n;
  records_in_flight_ += n;
  ++unfinished_;
  Chunk *raw = c.get();
  chunks_.emplace(raw->seq, std::move(c));
  cpu_start_.push_back({Task::START, raw, 0, 0, 0});
  lk.unlock();
  cv_work_.notify_one();
}

}  // namespace evalgraph::exec_detail
