#include "exec/executor.h"

#include <fmt/chrono.h>
#include <sys/resource.h>
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <sstream>
#include <unistd.h>
#include <unordered_set>

#include "exec/raw_record.h"
#include "expect/expectations.h"
#include "io/dataset.h"
#include "report/default_report.h"
#include "run_folder/run_folder.h"
#include "util/atomic_file.h"
#include "util/named_thread.h"
#include "util/stop.h"
#include "util/version.h"

namespace evalgraph {
namespace fs = std::filesystem;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

enum : uint8_t { ST_PENDING = 0, ST_OK = 1, ST_FAILED = 2, ST_SKIPPED = 3 };
constexpr int kMaxLlmThreads = 1024;

struct Slot {
  RawRecord rec;  // the record as JSON text, node outputs spliced in
  std::size_t index = 0;  // 0-based dataset record
  std::size_t line = 0;
  int replication = 0;
  std::vector<uint8_t> status;  // per planned node
  std::map<std::string, std::string> errors, skipped;  // node id → why (written as _errors / _skipped)
  std::string problem;  // the reader's record_problem(): the record fails alone, no node runs on it
  std::uint32_t next = 0;   // the next node (plan order) this record runs
  std::int32_t group = -1;  // sequence pipelines: its group in the chunk
  bool interrupted = false;  // a call of one of its nodes was ended by the stop: not journaled, run again on --resume
};

// A unit of reading, journaling and writing: `chunk_size` records (whole groups in sequence mode). Its records
// advance through the nodes independently (see Engine::advance); the chunk is finished when the last one is.
struct Chunk {
  std::size_t seq = 0;
  std::vector<Slot> slots;
  std::atomic<std::size_t> remaining{0};  // records not yet through every node
  bool finished = false;                  // (under Engine::mu_) ready for the writer
  // Sequence mode: the records of each (replication, group) and how many of them reached each node.
  struct Group {
    std::vector<std::uint32_t> members;
    std::vector<std::uint32_t> arrived;
  };
  std::mutex mu;  // arrived
  std::vector<Group> groups;
};

// Work for a thread: start a chunk, continue one record, or run a sequence node over one group.
struct Task {
  enum Kind : std::uint8_t { START, RECORD, GROUP } kind = START;
  Chunk *chunk = nullptr;
  std::uint32_t slot = 0, group = 0, node = 0;
};

// Where a node runs: on the -j CPU workers, on the LLM threads (thread-safe record nodes that call an LLM:
// they spend their time waiting, so as many wait side by side as the providers take), or once per group.
enum Where : std::uint8_t { W_LOCAL, W_LLM, W_SEQ };

// One node with its instances: one shared instance when the type is thread-safe, else one per worker.
struct Runner {
  const PlannedNode *pn = nullptr;
  std::vector<void *> instances;
  void *instance(int worker) const { return instances.size() == 1 ? instances[0] : instances[static_cast<size_t>(worker)]; }
};

std::string params_json(const PlannedNode &pn, const Pipeline &p, const fs::path &run_dir) {
  json w = pn.decl->with.is_object() ? pn.decl->with : json::object();
  w["_pipeline_dir"] = fs::absolute(p.file).parent_path().string();
  w["_limits"] = p.limits.to_json();  // e.g. the KSODI operators count sentences against sentences_per_answer
  if (pn.type->type->kind == EG_KIND_SINK) w["_output_dir"] = run_dir.string();
  return w.dump();
}

void *create_instance(const PlannedNode &pn, const std::string &params, HostServices &host) {
  void *inst = nullptr;
  eg_buffer err{};
  eg_status st = EG_ERROR;
  try {
    st = pn.type->type->create(host.table(), params.c_str(), &inst, &err);
  } catch (...) {
    st = EG_ERROR;
  }
  std::string msg = take_host_buffer(err);
  if (st != EG_OK || inst == nullptr) {
    throw ConfigError({{pn.decl->uses_where, fmt::format("node '{}' ({}) could not be set up: {}", pn.decl->id,
                                                         pn.type->name, msg.empty() ? "create() failed" : host.redact(msg))}});
  }
  return inst;
}

// Calls process(); EG_RETRY is retried here with exponential backoff (the host owns backoff).
eg_status call_process(const eg_node_type *t, void *inst, eg_call *call, const std::string &in, std::string &out,
                       const RunOptions &opt, HostServices &host) {
  eg_status st = EG_ERROR;
  for (int attempt = 0;; ++attempt) {
    eg_buffer b{};
    try {
      st = t->process(inst, call, in.data(), in.size(), &b);
    } catch (...) {  // a C++ plugin that let an exception escape its C boundary
      st = EG_ERROR;
      b = eg_buffer{};
      fill_host_buffer(&b, "the plugin let an exception escape process()");
    }
    out = take_host_buffer(b);
    if (st != EG_RETRY || attempt + 1 >= opt.retry_attempts || host.cancelled() || stop_requested()) break;
    std::this_thread::sleep_for(std::chrono::duration<double>(opt.retry_backoff_s * (1 << attempt)));
  }
  return st;
}

const char *status_word(eg_status st) {
  switch (st) {
    case EG_INVALID_INPUT: return "invalid input";
    case EG_RETRY: return "gave up after retries";
    case EG_UNSUPPORTED: return "unsupported";
    case EG_CANCELLED: return "cancelled";
    default: return "error";
  }
}

// The JSON text a port reads: a top-level field, or a member of one (`field.sub`).
std::optional<std::string_view> lookup(const RawRecord &rec, const PortBinding &b) {
  auto top = rec.get(b.top);
  if (!top || b.sub.empty()) return top;
  return member_of(*top, b.sub);
}

// The group a record belongs to: its group_by value as JSON text, written the same way however the dataset
// spelled it ("c\u0031" and "c1" are one group). Empty when the record has no such field.
std::string group_of(const RawRecord &rec, const std::string &field) {
  std::string_view raw = rec.get(field).value_or("");
  if (raw.find('\\') == std::string_view::npos) return std::string(raw);
  return json::parse(raw, nullptr, false).dump(-1, ' ', false, json::error_handler_t::replace);
}

// A node's output as one line of JSON, if it is valid JSON: whitespace around it trimmed, and re-serialised
// only when it spans lines (a pretty-printing plugin), since records are written one per line.
bool normalise_output(std::string &out) {
  if (std::memchr(out.data(), '\n', out.size()) != nullptr || std::memchr(out.data(), '\r', out.size()) != nullptr) {
    json v = json::parse(out, nullptr, false);
    if (v.is_discarded()) return false;
    out = v.dump(-1, ' ', false, json::error_handler_t::replace);
    return true;
  }
  std::size_t b = out.find_first_not_of(" \t"), e = out.find_last_not_of(" \t");
  if (b == std::string::npos) return false;
  if (b > 0 || e + 1 < out.size()) out = out.substr(b, e + 1 - b);
  return rawjson::valid(out);
}

class Engine {
 public:
  Engine(const Pipeline &p, const Plan &plan, HostServices &host, const RunOptions &opt, fs::path run_dir)
      : p_(p), plan_(plan), host_(host), opt_(opt), run_dir_(std::move(run_dir)) {
    host_.set_run_info([this] { return run_info(); });
  }
  ~Engine() { host_.set_run_info(nullptr); }  // waits for a run_info call in flight
  Engine(const Engine &) = delete;
  Engine &operator=(const Engine &) = delete;

  RunResult run();

 private:
  void setup();
  void teardown();
  void worker_loop(int worker);
  void llm_loop();
  void writer_loop();
  void start_chunk(Chunk &c, int worker);
  void advance(Chunk &c, std::uint32_t i, int worker);
  void arrive(Chunk &c, std::uint32_t i, std::uint32_t k, int worker);
  void run_group(Chunk &c, std::uint32_t g, std::uint32_t k, int worker);
  void finish_record(Chunk &c);
  void push_cpu(Task t);
  void push_llm(Task t);
  bool yield_llm(Chunk &c, std::uint32_t i);
  void run_record_node(size_t k, Slot &s, int worker);
  void run_sequence_group(size_t k, Chunk &c, std::vector<size_t> idx, int worker);
  bool upstream_ok(size_t k, Slot &s);
  void fail(size_t k, Slot &s, const std::string &msg, uint8_t how);
  bool output_within_limits(size_t k, Slot &s, const std::string &out);
  bool build_input(size_t k, Slot &s, std::string &out);
  void push_chunk(std::unique_ptr<Chunk> c);
  void progress_line(bool final);
  json run_info() const;
  void write_to_sinks(const Slot &s, const std::string &text);
  void count_resumed(const json &rec);
  std::size_t replay_journal();
  std::size_t merge_shards();
  void journal_chunk(const Chunk &c, const std::vector<std::string> &texts, const std::vector<std::size_t> &added_at);
  // What the run has spent so far, in progress/cost.json: a resumed run starts from it (its budget too).
  void save_cost() {
    if (host_.llm() != nullptr && journal_ != nullptr)
      write_file_atomically(run_folder::cost(run_dir_), host_.cost_json().dump(2) + "\n");
  }

  const Pipeline &p_;
  const Plan &plan_;
  HostServices &host_;
  const RunOptions &opt_;
  fs::path run_dir_;
  std::vector<Runner> runners_;
  std::vector<Runner> sinks_;

  std::mutex mu_;
  std::condition_variable cv_work_, cv_llm_, cv_done_, cv_space_;
  std::deque<Task> cpu_start_, cpu_more_;  // CPU work: new chunks; records and groups under way (taken first)
  int cpu_polling_ = 0;                    // workers in their timed wait (see worker_loop)
  static constexpr std::size_t kCpuBatch = 16;
  static constexpr auto kCpuPoll = std::chrono::milliseconds(5);
  // Records waiting for an LLM thread, by the number of LLM nodes they have left (llm_left_ of their next node):
  // the record with the most LLM work left goes first, so a record's first call is not held back behind the
  // later calls of records already under way (a late first call would put two latency draws in a row at the end).
  std::vector<std::deque<Task>> llm_q_;
  std::size_t llm_queued_ = 0;
  std::vector<std::uint32_t> llm_left_;  // per planned node k (and one past the end): W_LLM nodes from k on
  std::map<std::size_t, std::unique_ptr<Chunk>> chunks_;  // read, not yet written (the reorder buffer)
  std::size_t records_in_flight_ = 0, window_ = 0;  // records read and not yet written; their bound
  std::size_t unfinished_ = 0;  // chunks with records still running
  bool reading_done_ = false;
  std::size_t total_chunks_ = 0;
  std::size_t next_write_ = 0;
  std::vector<Where> where_;  // per planned node
  bool all_local_ = false;    // every node is W_LOCAL
  int llm_threads_ = 0;

  std::mutex stats_mu_;
  std::vector<NodeStats> stats_;
  std::vector<std::size_t> sink_errors_;
  std::vector<std::string> sink_first_error_;
  std::atomic<std::size_t> written_{0}, failed_records_{0};
  // expect: (engine/expect/): fed every record the sinks get; judged before the sinks finish. A shard's
  // records are a part of the run: its expectations are judged by the merge.
  ExpectationSet expect_{p_.expect};
  mutable std::mutex verdict_mu_;  // run_info reads the verdict from any thread
  json verdict_;
  std::size_t expected_total_ = 0;
  Clock::time_point start_ = Clock::now(), last_progress_{};
  std::FILE *journal_ = nullptr;
  static constexpr std::size_t kJournalBuffer = 1 << 20;
  std::unique_ptr<char[]> journal_buffer_;  // outlives journal_ (closed in run())
  Clock::time_point last_sync_ = Clock::now();
  std::size_t next_index_ = 0;  // dataset index after the last chunk written
  bool cut_ = false;  // writer: a chunk held a record the stop interrupted; it and the later chunks are not journaled
};

// The journal: the finished records of each chunk, one line each, then a marker line
//   {"_chunk_end": <seq>, "next_index": <dataset index after this chunk>}
// A record line is "D<index>\t<object>" where <object> holds only what the run added to dataset record
// <index> (node outputs, _errors, ...): the dataset, checked unchanged on resume, gives back the rest, so the
// journal stays about as small as the results. A record whose dataset fields a node replaced is stored whole:
// "F<index>\t<record>". Only lines up to the last marker count; a resumed run truncates anything after it.
std::size_t Engine::replay_journal() {
  fs::path path = run_folder::journal(run_dir_);
  std::ifstream in(path, std::ios::binary);
  std::string line;
  std::vector<std::string> pending;
  std::size_t good_bytes = 0, bytes = 0, resumed = 0;
  // Dataset records of the chunk being replayed, read in order as the "D" lines ask for them.
  std::unique_ptr<io::RecordReader> dataset;
  std::map<std::size_t, RawRecord> window;
  std::size_t next_read = 0;
  auto dataset_record = [&](std::size_t index) -> const RawRecord & {
    if (!dataset) dataset = io::open_dataset(p_.dataset.path, p_.dataset.format, p_.dataset.options, p_.limits.record);
    std::string text;
    while (next_read <= index && dataset->next_text(text)) {
      window[next_read].assign(std::move(text));
      text = std::string();
      ++next_read;
    }
    auto it = window.find(index);
    if (it == window.end())
      throw ConfigError({{{path.string(), 0, 0},
                          fmt::format("cannot resume: the journal names dataset record {}, which the dataset does not "
                                      "hold any more; start a new run", index + 1)}});
    return it->second;
  };
  while (std::getline(in, line)) {
    bytes += line.size() + 1;
    if (in.eof()) break;  // a last line without '\n' was cut off mid-write
    if (line.rfind("{\"_chunk_end\"", 0) == 0) {
      json m = json::parse(line, nullptr, false);
      if (m.is_discarded()) break;
      for (const auto &t : pending) {
        Slot s;
        // (a line of an older journal is a whole record, without the prefix)
        std::size_t tab = (t[0] == 'D' || t[0] == 'F') ? t.find('\t') : std::string::npos;
        std::string_view body = tab == std::string::npos ? std::string_view(t) : std::string_view(t).substr(tab + 1);
        if (tab != std::string::npos) s.index = std::stoull(t.substr(1, tab - 1));
        json rec = json::parse(body, nullptr, false);  // for the counts: _errors and _skipped are among the added fields
        if (rec.is_discarded() || !rec.is_object())
          throw ConfigError({{{path.string(), 0, 0},
                              "cannot resume: the journal is damaged (a finished record is not JSON); start a new run"}});
        count_resumed(rec);
        if (t[0] == 'D') write_to_sinks(s, RawRecord::combine(dataset_record(s.index), body));
        else write_to_sinks(s, std::string(body));
        ++resumed;
      }
      pending.clear();
      next_index_ = m.at("next_index").get<std::size_t>();
      window.erase(window.begin(), window.lower_bound(next_index_));
      good_bytes = bytes;
      continue;
    }
    pending.push_back(line);
  }
  in.close();
  fs::resize_file(path, good_bytes);  // drop a chunk that was being written when the run died
  written_ = resumed;
  return resumed;
}

// Merge mode: the shard journals hold disjoint units (a record with its replications, or a whole sequence
// group with its replications), each journal in dataset order. A line starts a new unit when its dataset
// index is above every index that journal has shown so far (a group's next replication starts over at the
// group's first record). Units go to the sinks by their first index: the order of one unsharded run. Memory:
// one line per journal and the dataset records of the current unit.
std::size_t Engine::merge_shards() {
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
  std::vector<std::unique_ptr<Source>> src;
  for (const auto &p : opt_.merge_journals) {
    auto s = std::make_unique<Source>();
    s->path = p;
    s->in.open(p, std::ios::binary);
    if (!s->in) throw std::runtime_error("cannot read " + p.string());
    s->advance();
    src.push_back(std::move(s));
  }
  std::unique_ptr<io::RecordReader> dataset;
  std::map<std::size_t, RawRecord> window;
  std::size_t next_read = 0, merged = 0;
  std::string text;
  std::vector<rawjson::Member> members;  // found by the reader's check: the record is scanned once
  auto dataset_record = [&](std::size_t index) -> const RawRecord & {
    if (!dataset) dataset = io::open_dataset(p_.dataset.path, p_.dataset.format, p_.dataset.options, p_.limits.record);
    while (next_read <= index && dataset->next_text(text, &members)) {
      if (members.empty() && !rawjson::object_members(text, members))
        throw io::DataError(p_.dataset.path, dataset->line(), "the record could not be split into its fields", "");
      window[next_read].assign(std::move(text), members);
      text = std::string();
      ++next_read;
    }
    auto it = window.find(index);
    if (it == window.end())
      throw std::runtime_error(fmt::format("a shard names dataset record {}, which {} does not hold", index + 1,
                                           p_.dataset.path.string()));
    return it->second;
  };
  // Reading and combining (this thread) overlap with the sinks' writing (the writer thread): batches of
  // records through a short queue.
  using Batch = std::vector<std::pair<std::size_t, std::string>>;
  std::deque<Batch> queue;
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  std::exception_ptr write_error;
  std::thread writer([&] {
    try {
      for (;;) {
        Batch batch;
        {
          std::unique_lock lk(mu);
          cv.wait(lk, [&] { return !queue.empty() || done; });
          if (queue.empty()) return;
          batch = std::move(queue.front());
          queue.pop_front();
        }
        cv.notify_all();
        Slot slot;
        for (auto &[index, record] : batch) {
          slot.index = index;
          write_to_sinks(slot, record);
        }
      }
    } catch (...) {
      std::lock_guard lk(mu);
      write_error = std::current_exception();
      done = true;
      queue.clear();
      cv.notify_all();
    }
  });
  Batch batch;
  auto flush = [&] {
    std::unique_lock lk(mu);
    cv.wait(lk, [&] { return queue.size() < 8 || write_error; });
    if (write_error) return;
    queue.push_back(std::move(batch));
    batch = Batch();
    lk.unlock();
    cv.notify_all();
  };
  auto emit = [&](std::size_t index, std::string record) {
    batch.emplace_back(index, std::move(record));
    if (batch.size() >= 512) flush();
  };
  auto finish_writer = [&] {
    {
      std::lock_guard lk(mu);
      done = true;
    }
    cv.notify_all();
    writer.join();
  };
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
    const std::size_t unit = best->index;
    window.erase(window.begin(), window.lower_bound(unit));
    do {
      Source &s = *best;
      if (!s.seen || s.index > s.max_seen) s.max_seen = s.index;
      s.seen = true;
      std::size_t tab = s.line.find('\t');
      std::string_view body = std::string_view(s.line).substr(tab + 1);
      json status = json::object();  // only what the counts need: the record itself is not parsed
      if (auto e = member_of(body, "_errors")) status["_errors"] = json::parse(*e);
      if (auto k = member_of(body, "_skipped")) status["_skipped"] = json::parse(*k);
      count_resumed(status);
      emit(s.index, s.line[0] == 'D' ? RawRecord::combine(dataset_record(s.index), body) : std::string(body));
      ++merged;
      s.advance();
    } while (best->has && !best->starts_unit());
  }
  if (!batch.empty()) flush();
  } catch (...) {
    finish_writer();
    throw;
  }
  finish_writer();
  if (write_error) std::rethrow_exception(write_error);
  written_ = merged;
  return merged;
}

void Engine::count_resumed(const json &rec) {
  bool bad = false;
  for (size_t k = 0; k < plan_.nodes.size(); ++k) {
    const std::string &id = plan_.nodes[k].decl->id;
    auto e = rec.find("_errors"), sk = rec.find("_skipped");
    if (e != rec.end() && e->contains(id)) {
      ++stats_[k].failed;
      if (stats_[k].first_error.empty()) stats_[k].first_error = (*e)[id].get<std::string>();
      bad = true;
    } else if (sk != rec.end() && sk->contains(id)) {
      ++stats_[k].skipped;
      bad = true;
    } else {
      ++stats_[k].ok;
    }
  }
  if (auto e = rec.find("_errors"); e != rec.end() && e->is_object() && e->contains("_record")) bad = true;
  if (bad) ++failed_records_;
}

void Engine::journal_chunk(const Chunk &c, const std::vector<std::string> &texts,
                           const std::vector<std::size_t> &added_at) {
  if (journal_ == nullptr) return;
  std::string head;
  for (size_t j = 0; j < texts.size(); ++j) {
    const std::string &t = texts[j];
    const bool delta = c.slots[j].rec.dataset_fields_intact();
    head = fmt::format("{}{}\t", delta ? 'D' : 'F', c.slots[j].index);
    std::fwrite(head.data(), 1, head.size(), journal_);
    if (delta) {  // only the added fields, as one object
      std::fputc('{', journal_);
      std::fwrite(t.data() + added_at[j], 1, t.size() - added_at[j], journal_);  // they run to the closing brace
    } else {
      std::fwrite(t.data(), 1, t.size(), journal_);
    }
    std::fputc('\n', journal_);
  }
  std::size_t next = c.slots.empty() ? next_index_ : c.slots.back().index + 1;
  std::string marker = fmt::format("{{\"_chunk_end\":{},\"next_index\":{}}}\n", c.seq, next);
  std::fwrite(marker.data(), 1, marker.size(), journal_);
  std::fflush(journal_);  // in the kernel: survives kill -9
  // On disk at most a second later: survives a power cut, minus that second (recomputed on resume,
  // with the LLM answers coming from the cache).
  if (Clock::now() - last_sync_ > std::chrono::seconds(1)) {
    fdatasync(fileno(journal_));
    last_sync_ = Clock::now();
    save_cost();
  }
}

// The finished record as one JSON line: its fields, then what failed (_errors) and what was skipped (_skipped).
std::string record_text(Slot &s, std::size_t &added_at) {
  auto as_object = [](const std::map<std::string, std::string> &m) {
    std::string o = "{";
    for (const auto &[id, why] : m) {
      if (o.size() > 1) o += ',';
      rawjson::append_string(o, id);
      o += ':';
      rawjson::append_string(o, why);
    }
    return o + "}";
  };
  if (!s.errors.empty()) s.rec.set("_errors", as_object(s.errors));
  if (!s.skipped.empty()) s.rec.set("_skipped", as_object(s.skipped));
  std::string out;
  added_at = s.rec.write(out);
  return out;
}

void Engine::write_to_sinks(const Slot &s, const std::string &text) {
  if (!expect_.empty()) expect_.observe(text);
  for (size_t i = 0; i < sinks_.size(); ++i) {
    eg_call call{s.index, s.replication, &sinks_[i].pn->decl->id};
    std::string out;
    eg_status st = call_process(sinks_[i].pn->type->type, sinks_[i].instances[0], &call, text, out, opt_, host_);
    if (st != EG_OK && sink_errors_[i]++ == 0) sink_first_error_[i] = host_.redact(out);
  }
}

void Engine::setup() {
  int workers = std::max(1, opt_.jobs);
  for (const auto &pn : plan_.nodes) {
    Runner r;
    r.pn = &pn;
    std::string params = params_json(pn, p_, run_dir_);
    int n = pn.type->has(EG_FLAG_THREAD_SAFE) ? 1 : workers;
    for (int i = 0; i < n; ++i) r.instances.push_back(create_instance(pn, params, host_));
    runners_.push_back(std::move(r));
  }
  for (const auto &pn : plan_.sinks) {
    Runner r;
    r.pn = &pn;
    std::string params = params_json(pn, p_, run_dir_);
    if (pn.type->name == kReportSinkType) {  // the report also shows the run's nodes, versions and DAG
      json w = json::parse(params);
      w["_run"] = report_run_info(p_, plan_);
      params = w.dump();
    }
    r.instances.push_back(create_instance(pn, params, host_));
    sinks_.push_back(std::move(r));
  }
  // LLM threads: enough to keep every provider's window (max_in_flight) full, plus a few that have their next
  // call queued in the LLM service while the others parse answers; --llm-concurrency caps them (a global cap).
  int windows = 0;
  if (host_.llm() != nullptr)
    for (const auto &name : host_.llm()->provider_names()) windows += host_.llm()->provider(name)->max_in_flight;
  where_.clear();
  for (const auto &pn : plan_.nodes) {
    bool llm = !pn.sequence() && pn.type->has(EG_FLAG_USES_LLM) && pn.type->has(EG_FLAG_THREAD_SAFE) && windows > 0;
    where_.push_back(pn.sequence() ? W_SEQ : llm ? W_LLM : W_LOCAL);
  }
  all_local_ = std::all_of(where_.begin(), where_.end(), [](Where w) { return w == W_LOCAL; });
  llm_left_.assign(where_.size() + 1, 0);
  for (size_t k = where_.size(); k-- > 0;) llm_left_[k] = llm_left_[k + 1] + (where_[k] == W_LLM ? 1 : 0);
  llm_q_.assign(llm_left_[0] + 1, {});
  llm_queued_ = 0;
  if (std::find(where_.begin(), where_.end(), W_LLM) != where_.end()) {
    llm_threads_ = windows + windows / 8 + 1;
    if (opt_.llm_concurrency > 0) llm_threads_ = std::min(llm_threads_, opt_.llm_concurrency);
    llm_threads_ = std::min(llm_threads_, kMaxLlmThreads);
  }
  stats_.assign(runners_.size(), {});
  sink_errors_.assign(sinks_.size(), 0);
  sink_first_error_.assign(sinks_.size(), {});
}

void Engine::teardown() {
  for (auto *list : {&runners_, &sinks_})
    for (auto &r : *list)
      for (void *inst : r.instances) r.pn->type->type->destroy(inst);
  runners_.clear();
  sinks_.clear();
}

void Engine::fail(size_t k, Slot &s, const std::string &msg, uint8_t how) {
  s.status[k] = how;
  const std::string &id = plan_.nodes[k].decl->id;
  (how == ST_FAILED ? s.errors : s.skipped)[id] = msg;
  std::lock_guard lk(stats_mu_);
  auto &st = stats_[k];
  if (how == ST_FAILED) {
    ++st.failed;
    if (st.first_error.empty()) st.first_error = fmt::format("record {}: {}", s.index + 1, msg);
  } else {
    ++st.skipped;
  }
}

bool Engine::upstream_ok(size_t k, Slot &s) {
  for (size_t u : plan_.nodes[k].upstream) {
    if (s.status[u] != ST_OK) {
      fail(k, s, fmt::format("skipped: it depends on '{}', which {}", plan_.nodes[u].decl->id,
                             s.status[u] == ST_FAILED ? "failed" : "was skipped"),
           ST_SKIPPED);
      return false;
    }
  }
  return true;
}

// Writes the node's input object as JSON text straight from the record (no intermediate copy):
// {"<port>": <value>, ..., "_meta": {...}}. Port names are plain (checked at plugin load).
bool Engine::build_input(size_t k, Slot &s, std::string &out) {
  const PlannedNode &pn = plan_.nodes[k];
  out.clear();
  out += '{';
  for (const auto &b : pn.ports) {
    std::optional<std::string_view> v = lookup(s.rec, b);
    if (!v || (*v == "null" && b.required)) {
      if (!b.required) continue;
      fail(k, s, fmt::format("record {} (line {}) has no value for field '{}' (port '{}')", s.index + 1, s.line, b.field, b.port),
           ST_FAILED);
      return false;
    }
    if (out.size() > 1) out += ',';
    out += '"';
    out += b.port;
    out += "\":";
    out += *v;
  }
  fmt::format_to(std::back_inserter(out), "{}\"_meta\":{{\"record_index\":{},\"replication\":{},\"node\":\"{}\"}}}}",
                 out.size() > 1 ? "," : "", s.index, s.replication, pn.decl->id);
  return true;
}

void Engine::run_record_node(size_t k, Slot &s, int worker) {
  if (s.status[k] != ST_PENDING) return;  // a record over a limit: failed before any node ran
  if (!upstream_ok(k, s)) return;
  std::string in;
  if (!build_input(k, s, in)) return;
  const PlannedNode &pn = plan_.nodes[k];
  eg_call call{s.index, s.replication, &pn.decl->id};
  std::string out;
  take_call_stopped();
  eg_status st = call_process(pn.type->type, runners_[k].instance(worker), &call, in, out, opt_, host_);
  // A call the stop ended (or, after a stop, any failure of a node that calls the LLM: a plugin may have made
  // its calls elsewhere) leaves the record for --resume.
  if (take_call_stopped() || (st != EG_OK && stop_requested() && (st == EG_CANCELLED || pn.type->has(EG_FLAG_USES_LLM))))
    s.interrupted = true;
  if (st != EG_OK || s.interrupted) {
    fail(k, s, fmt::format("{}: {}", status_word(st), host_.redact(out.empty() ? "(no message)" : out)), ST_FAILED);
    return;
  }
  if (out.empty()) out = "{}";
  // (an output far over the limit is refused before normalise_output might parse it)
  if (pn.type->has(EG_FLAG_USES_LLM) && out.size() > 2 * p_.limits.record.field_bytes + 4096 &&
      !output_within_limits(k, s, out))
    return;
  if (!normalise_output(out) || out.front() != '{') {
    fail(k, s, fmt::format("plugin {} returned output that is not a JSON object: {}", pn.type->name, out.substr(0, 120)), ST_FAILED);
    return;
  }
  if (pn.type->has(EG_FLAG_USES_LLM) && !output_within_limits(k, s, out)) return;
  s.rec.set(pn.decl->id, std::move(out));
  s.status[k] = ST_OK;
  std::lock_guard lk(stats_mu_);
  ++stats_[k].ok;
}

// An LLM node's output is data from outside like a dataset field: held to limits.field_bytes (the output is one
// field of the record, named by the node) and limits.record_bytes (the record with it). Over a limit, the record
// fails here and nothing of the output goes on to other nodes or to the sinks.
bool Engine::output_within_limits(size_t k, Slot &s, const std::string &out) {
  const auto &lim = p_.limits.record;
  const std::string &id = plan_.nodes[k].decl->id;
  std::string why;
  if (out.size() > lim.field_bytes) {
    why = fmt::format("the output of node '{}' is {} bytes, over limits.field_bytes ({} bytes); it was not kept. "
                      "Raise limits.field_bytes in the pipeline if answers this long are expected, or ask for shorter "
                      "ones (max_tokens)", id, out.size(), lim.field_bytes);
  } else {
    std::size_t total = s.rec.text_bytes() + out.size() + id.size() + 4;
    if (total > lim.record_bytes)
      why = fmt::format("with the output of node '{}' ({} bytes) the record would be {} bytes, over limits.record_bytes "
                        "({} bytes); the output was not kept. Raise limits.record_bytes in the pipeline if records this "
                        "large are expected", id, out.size(), total, lim.record_bytes);
  }
  if (why.empty()) return true;
  fail(k, s, why, ST_FAILED);
  return false;
}

// Orders a group's records by the order_by field: numbers numerically, otherwise as text.
bool order_less(const json *a, const json *b) {
  if (a == nullptr || b == nullptr) return a == nullptr && b != nullptr;
  if (a->is_number() && b->is_number()) return a->get<double>() < b->get<double>();
  auto num = [](const json &v, double &out) {
    if (!v.is_string()) return false;
    char *end = nullptr;
    const std::string &s = v.get_ref<const std::string &>();
    out = std::strtod(s.c_str(), &end);
    return !s.empty() && end != nullptr && *end == '\0';
  };
  double x = 0, y = 0;
  if (num(*a, x) && num(*b, y)) return x < y;
  return a->dump() < b->dump();
}

// Runs sequence node k over the records `idx` of one (replication, group) of chunk c, in order_by order.
void Engine::run_sequence_group(size_t k, Chunk &c, std::vector<size_t> idx, int worker) {
  const PlannedNode &pn = plan_.nodes[k];
  if (!plan_.order_by.empty()) {
    std::map<size_t, std::optional<json>> keys;  // the order_by values, parsed once per record
    for (size_t i : idx) {
      auto raw = c.slots[i].rec.get(plan_.order_by);
      keys[i] = raw ? std::optional<json>(json::parse(*raw, nullptr, false)) : std::nullopt;
    }
    std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) {
      const auto &ka = keys[a], &kb = keys[b];
      return order_less(ka ? &*ka : nullptr, kb ? &*kb : nullptr);
    });
  }
  std::string arr = "[", in;
  std::vector<size_t> members;
  for (size_t i : idx) {
    if (!build_input(k, c.slots[i], in)) continue;
    if (!members.empty()) arr += ',';
    arr += in;
    members.push_back(i);
  }
  arr += ']';
  if (members.empty()) return;
  const Slot &first = c.slots[members.front()];
  eg_call call{first.index, first.replication, &pn.decl->id};
  std::string out;
  take_call_stopped();
  eg_status st = call_process(pn.type->type, runners_[k].instance(worker), &call, arr, out, opt_, host_);
  if (take_call_stopped() || (st == EG_CANCELLED && stop_requested())) {
    for (size_t i : members) c.slots[i].interrupted = true;
    if (st == EG_OK) st = EG_CANCELLED;
  }
  std::vector<rawjson::Span> items;
  std::string why;
  if (st != EG_OK) why = fmt::format("{}: {}", status_word(st), host_.redact(out));
  else if (!normalise_output(out) || !rawjson::array_elements(out, items) || items.size() != members.size())
    why = fmt::format("sequence plugin {} must return an array of {} objects; it returned: {}", pn.type->name,
                      members.size(), out.substr(0, 120));
  for (size_t m = 0; m < members.size(); ++m) {
    Slot &s = c.slots[members[m]];
    if (!why.empty()) {
      fail(k, s, why, ST_FAILED);
    } else if (out[items[m].off] != '{') {
      fail(k, s, fmt::format("sequence plugin {} returned a non-object for item {}", pn.type->name, m), ST_FAILED);
    } else if (pn.type->has(EG_FLAG_USES_LLM) && !output_within_limits(k, s, out.substr(items[m].off, items[m].len))) {
      // (failed by output_within_limits: the record is over limits.field_bytes / record_bytes with it)
    } else {
      s.rec.set(pn.decl->id, out.substr(items[m].off, items[m].len));
      s.status[k] = ST_OK;
      std::lock_guard lk(stats_mu_);
      ++stats_[k].ok;
    }
  }
}

void Engine::push_cpu(Task t) {
  bool wake = true;
  {
    std::lock_guard lk(mu_);
    (t.kind == Task::START ? cpu_start_ : cpu_more_).push_back(t);
    // A record handed back by an LLM thread joins a polling worker's next round without a wake-up of its own.
    wake = t.kind != Task::RECORD || cpu_polling_ == 0 || cpu_more_.size() >= kCpuBatch;
  }
  if (wake) cv_work_.notify_one();
}

void Engine::push_llm(Task t) {
  const std::uint32_t left = llm_left_[t.chunk->slots[t.slot].next];
  {
    std::lock_guard lk(mu_);
    llm_q_[left].push_back(t);
    ++llm_queued_;
  }
  cv_llm_.notify_one();
}

// On an LLM thread, record i is about to make its next LLM call: when a record with more LLM work left is
// waiting (a first call while this would be a second), that one goes first and this record queues behind it.
bool Engine::yield_llm(Chunk &c, std::uint32_t i) {
  const std::uint32_t left = llm_left_[c.slots[i].next];
  std::lock_guard lk(mu_);
  if (llm_queued_ == 0) return false;
  bool more = false;
  for (size_t q = left + 1; q < llm_q_.size() && !more; ++q) more = !llm_q_[q].empty();
  if (!more) return false;
  llm_q_[left].push_back({Task::RECORD, &c, i, 0, 0});  // this thread takes the waiting one next (no notify)
  ++llm_queued_;
  return true;
}

// A new chunk, on a CPU worker: the records that fail alone are marked, sequence groups formed, and each record
// set going (local nodes run right here, one record after the other).
void Engine::start_chunk(Chunk &c, int worker) {
  const auto n = static_cast<std::uint32_t>(c.slots.size());
  std::map<std::string, std::int32_t> gi;
  for (std::uint32_t i = 0; i < n; ++i) {
    Slot &s = c.slots[i];
    s.status.assign(plan_.nodes.size(), ST_PENDING);
    if (!s.problem.empty()) {
      for (size_t k = 0; k < plan_.nodes.size(); ++k) fail(k, s, s.problem, ST_FAILED);  // the record fails alone
      if (plan_.nodes.empty()) s.errors["_record"] = s.problem;  // (a pipeline of sinks only)
    }
    if (!plan_.group_by.empty()) {
      std::string key = std::to_string(s.replication) + "\x1f" + group_of(s.rec, plan_.group_by);
      auto [pos, fresh] = gi.emplace(key, static_cast<std::int32_t>(c.groups.size()));
      if (fresh) c.groups.push_back({{}, std::vector<std::uint32_t>(plan_.nodes.size(), 0)});
      c.groups[static_cast<size_t>(pos->second)].members.push_back(i);
      s.group = pos->second;
    }
  }
  if (n == 0 || all_local_) {
    // Only local nodes: the chunk runs here node after node, as the chunk executor did (no per-record hand-off).
    for (size_t k = 0; k < plan_.nodes.size(); ++k)
      for (auto &s : c.slots) run_record_node(k, s, worker);
    c.remaining = 1;
    finish_record(c);
    return;
  }
  for (std::uint32_t i = 0; i < n; ++i) advance(c, i, worker);  // the last call may finish c: no use of c after
}

// Moves record i of chunk c on through the nodes in plan order (upstream before downstream) as far as it can
// on this thread: a CPU worker (worker >= 0) runs local nodes and hands LLM nodes to the LLM threads; an LLM
// thread (worker < 0) runs LLM nodes one after the other (a judge call goes out as soon as the completion it
// reads is back) and hands local nodes back to the workers. At a sequence node the record waits for its group.
void Engine::advance(Chunk &c, std::uint32_t i, int worker) {
  Slot &s = c.slots[i];
  const auto n = static_cast<std::uint32_t>(plan_.nodes.size());
  bool called = false;  // an LLM thread made a call for this record already
  while (s.next < n) {
    const std::uint32_t k = s.next;
    const Where w = where_[k];
    if (w == W_SEQ) return arrive(c, i, k, worker);
    if (w == W_LLM && worker >= 0) return push_llm({Task::RECORD, &c, i, 0, 0});
    if (w == W_LOCAL && worker < 0) return push_cpu({Task::RECORD, &c, i, 0, 0});
    if (w == W_LLM && called && yield_llm(c, i)) return;
    called = called || w == W_LLM;
    run_record_node(k, s, std::max(worker, 0));
    ++s.next;
  }
  finish_record(c);
}

// Record i reached sequence node k; the group's last record to arrive runs it for the whole group.
void Engine::arrive(Chunk &c, std::uint32_t i, std::uint32_t k, int worker) {
  const auto g = static_cast<std::uint32_t>(c.slots[i].group);
  {
    std::lock_guard lk(c.mu);
    auto &grp = c.groups[g];
    if (++grp.arrived[k] < grp.members.size()) return;
  }
  if (worker < 0) return push_cpu({Task::GROUP, &c, 0, g, k});
  run_group(c, g, k, worker);
}

void Engine::run_group(Chunk &c, std::uint32_t g, std::uint32_t k, int worker) {
  const std::vector<std::uint32_t> members = c.groups[g].members;  // a copy: c may be finished below
  std::vector<size_t> idx;
  for (std::uint32_t i : members) {
    Slot &s = c.slots[i];
    if (s.status[k] == ST_PENDING && upstream_ok(k, s)) idx.push_back(i);
  }
  if (!idx.empty()) run_sequence_group(k, c, std::move(idx), worker);
  for (std::uint32_t i : members) ++c.slots[i].next;
  for (std::uint32_t i : members) advance(c, i, worker);
}

void Engine::finish_record(Chunk &c) {
  if (c.remaining.fetch_sub(1) != 1) return;
  bool all_done = false;
  {
    std::lock_guard lk(mu_);
    c.finished = true;  // from here on only the writer touches c
    all_done = --unfinished_ == 0 && reading_done_;
  }
  cv_done_.notify_all();
  if (all_done) {
    cv_work_.notify_all();
    cv_llm_.notify_all();
  }
}

void Engine::worker_loop(int worker) {
  for (;;) {
    Task t;
    {
      std::unique_lock lk(mu_);
      auto ready = [&] { return !cpu_more_.empty() || !cpu_start_.empty() || (reading_done_ && unfinished_ == 0); };
      if (!ready() && !all_local_) {
        // Answers trickle in one by one when latencies vary: a worker that just ran out of work looks again
        // kCpuPoll later instead of being woken for each record (a wake-up costs more CPU than S0/K0/O0 on a
        // short answer); it is woken at once for a new chunk or kCpuBatch records. Then it sleeps until woken.
        ++cpu_polling_;
        cv_work_.wait_for(lk, kCpuPoll, ready);
        --cpu_polling_;
      }
      cv_work_.wait(lk, ready);
      auto &q = !cpu_more_.empty() ? cpu_more_ : cpu_start_;  // records under way before new chunks
      if (q.empty()) return;
      t = q.front();
      q.pop_front();
    }
    if (t.kind == Task::START) start_chunk(*t.chunk, worker);
    else if (t.kind == Task::GROUP) run_group(*t.chunk, t.group, t.node, worker);
    else advance(*t.chunk, t.slot, worker);
  }
}

void Engine::llm_loop() {
  for (;;) {
    Task t;
    {
      std::unique_lock lk(mu_);
      cv_llm_.wait(lk, [&] { return llm_queued_ > 0 || (reading_done_ && unfinished_ == 0); });
      if (llm_queued_ == 0) return;
      auto q = llm_q_.rbegin();  // the most LLM work left first, in arrival order within
      while (q->empty()) ++q;
      t = q->front();
      q->pop_front();
      --llm_queued_;
    }
    advance(*t.chunk, t.slot, -1);
  }
}

void Engine::progress_line(bool final) {
  if (!opt_.progress) return;
  auto now = Clock::now();
  if (!final && now - last_progress_ < std::chrono::milliseconds(250)) return;
  last_progress_ = now;
  double secs = std::chrono::duration<double>(now - start_).count();
  std::size_t n = written_.load();
  double rate = secs > 0 ? n / secs : 0;
  std::string eta;
  if (expected_total_ > n && rate > 0) eta = fmt::format(", ETA {:.0f} s", (expected_total_ - n) / rate);
  std::string total = expected_total_ > 0 ? fmt::format("/~{}", expected_total_) : "";
  std::fprintf(stderr, "\r\033[K%s: %zu%s records, %.0f/s, %zu failed%s%s", p_.name.c_str(), n, total.c_str(), rate,
               failed_records_.load(), eta.c_str(), final ? "\n" : "");
  std::fflush(stderr);
}

void Engine::writer_loop() {
  for (;;) {
    std::unique_ptr<Chunk> c;
    {
      std::unique_lock lk(mu_);
      auto ready = [&] {
        auto it = chunks_.find(next_write_);
        return it != chunks_.end() && it->second->finished;
      };
      cv_done_.wait(lk, [&] { return ready() || (reading_done_ && next_write_ >= total_chunks_); });
      if (!ready()) return;
      auto it = chunks_.find(next_write_);
      c = std::move(it->second);
      chunks_.erase(it);
      ++next_write_;
    }
    // A record the stop interrupted is not journaled, nor is anything after it (the journal is a prefix of the
    // dataset order); --resume runs them. A hard stop drops everything not journaled yet.
    if (!cut_ && std::any_of(c->slots.begin(), c->slots.end(), [](const Slot &s) { return s.interrupted; })) cut_ = true;
    if (cut_ || stop_now_requested()) {
      std::lock_guard lk(mu_);
      records_in_flight_ -= c->slots.size();
      cv_space_.notify_all();
      continue;
    }
    std::vector<std::string> texts;
    std::vector<std::size_t> added_at(c->slots.size());
    texts.reserve(c->slots.size());
    for (size_t j = 0; j < c->slots.size(); ++j) texts.push_back(record_text(c->slots[j], added_at[j]));
    journal_chunk(*c, texts, added_at);
    for (size_t j = 0; j < c->slots.size(); ++j) {
      const Slot &s = c->slots[j];
      if (!s.problem.empty() || std::any_of(s.status.begin(), s.status.end(), [](uint8_t x) { return x != ST_OK; }))
        ++failed_records_;
      // After a stop the sinks are not fed (a slow sink must not hold the stop up): their files stay .partial and
      // --resume writes them whole from the journal.
      if (!stop_requested()) write_to_sinks(s, texts[j]);
      ++written_;
    }
    next_index_ = c->slots.empty() ? next_index_ : c->slots.back().index + 1;
    {
      std::lock_guard lk(mu_);
      records_in_flight_ -= c->slots.size();
    }
    cv_space_.notify_all();
    progress_line(false);
  }
}

// What eg_host.run_info answers, from any thread (a sink may ask in process() on the writer thread; in
// finish(), once every record is written, the counts are final): the counts so far (atomics) and the LLM
// usage as run.json reports it — a merge's shards summed (extra_summary, where run.json's "llm" comes from
// then), else this run's LLM service (its stats are locked inside).
json Engine::run_info() const {
  json llm = json::object();
  if (auto it = opt_.extra_summary.find("llm"); it != opt_.extra_summary.end() && it->is_object()) llm = *it;
  else if (host_.llm() != nullptr) llm = host_.llm()->stats_json();
  json out = {{"records", written_.load()}, {"failed_records", failed_records_.load()}, {"llm", std::move(llm)}};
  if (auto it = opt_.extra_summary.find("cost"); it != opt_.extra_summary.end() && it->is_object()) out["cost"] = *it;
  else if (host_.llm() != nullptr) out["cost"] = host_.cost_json();
  std::lock_guard lk(verdict_mu_);
  if (!verdict_.is_null()) out["expectations"] = verdict_;
  return out;
}

// Hands a chunk read to the workers once the window has room for it (a chunk larger than the window, a big
// group, goes alone).
void Engine::push_chunk(std::unique_ptr<Chunk> c) {
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

double peak_rss_mb() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_maxrss) / 1024.0;  // Linux reports KiB
}

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

RunResult Engine::run() {
  RunResult res;
  res.run_dir = run_dir_;
  setup();
  if (opt_.resume) res.resumed_records = replay_journal();
  const bool merging = !opt_.merge_journals.empty();
  if (merging) merge_shards();
  if (opt_.journal && !merging) {
    fs::create_directories(run_folder::progress_dir(run_dir_));
    journal_ = std::fopen(run_folder::journal(run_dir_).c_str(), "ab");
    if (journal_ == nullptr) throw std::runtime_error("cannot write the progress journal in " + run_dir_.string());
    // A chunk's records in a few large writes, not several small ones per record (fflush ends each chunk).
    journal_buffer_ = std::make_unique<char[]>(kJournalBuffer);
    std::setvbuf(journal_, journal_buffer_.get(), _IOFBF, kJournalBuffer);
  }
  const std::size_t skip = next_index_;
  const int workers = std::max(1, opt_.jobs);
  window_ = opt_.window > 0 ? opt_.window : default_window(workers, llm_threads_, opt_.chunk_size);
  long long limit = opt_.limit >= 0 ? opt_.limit : p_.dataset.limit;
  if (opt_.progress) {
    std::size_t lines = count_lines(p_.dataset.path);
    // (the format as the reader takes it: .ndjson and .json are JSON lines, not CSV with a header line)
    if (run_folder::has_header_line(run_folder::data_format(p_.dataset.path, p_.dataset.format)) && lines > 0) --lines;
    if (limit >= 0) lines = std::min<std::size_t>(lines, static_cast<std::size_t>(limit));
    expected_total_ = lines * static_cast<std::size_t>(p_.replications);
    if (opt_.shard_count > 0) expected_total_ /= static_cast<std::size_t>(opt_.shard_count);
  }

  std::vector<std::thread> threads;
  for (int w = 0; w < workers; ++w) threads.push_back(named_thread("eg-cpu", [this, w] { worker_loop(w); }));
  for (int t = 0; t < llm_threads_; ++t) threads.push_back(named_thread("eg-llm", [this] { llm_loop(); }));
  std::thread writer = named_thread("eg-writer", [this] { writer_loop(); });

  std::exception_ptr reader_error;
  try {
    auto reader = io::open_dataset(p_.dataset.path, p_.dataset.format, p_.dataset.options, p_.limits.record);
    const bool seq = !plan_.group_by.empty();
    const int reps = p_.replications;
    auto chunk = std::make_unique<Chunk>();
    std::vector<Slot> group;  // sequence mode: the records of the current group
    std::string group_key;
    std::unordered_set<std::string> closed_groups;
    std::size_t group_line = 0;
    bool in_group = false;  // a group has started (group may be empty when it is another shard's)

    auto add = [&](Slot s) {
      chunk->slots.push_back(std::move(s));
    };
    auto maybe_flush = [&](bool force) {
      if (!chunk->slots.empty() && (force || chunk->slots.size() >= opt_.chunk_size)) {
        push_chunk(std::move(chunk));
        chunk = std::make_unique<Chunk>();
      }
    };
    auto close_group = [&] {
      if (group.empty()) return;
      for (int r = 0; r < reps; ++r)
        for (const auto &g : group) {
          Slot s = g;
          s.replication = r;
          if (reps > 1) s.rec.set("_replication", std::to_string(r));
          add(std::move(s));
        }
      group.clear();
      maybe_flush(false);
    };

    std::string text;
    std::vector<rawjson::Member> members;  // the record's fields, found by the reader's check
    std::size_t index = 0;
    for (; index < skip && reader->next_text(text); ++index) {
    }  // finished before the resume
    const bool sharded = opt_.shard_count > 0;
    const auto shard_n = static_cast<std::size_t>(std::max(1, opt_.shard_count));
    const auto shard_i = static_cast<std::size_t>(std::max(0, opt_.shard_index));
    bool group_mine = true;  // sequence mode: whether the current group belongs to this shard
    while (!merging && !stop_requested() && !host_.cancelled() && (limit < 0 || static_cast<long long>(index) < limit)) {
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
      if (seq) {
        // A record that fails alone and lost its group field stays with the group it is read in.
        std::string key = !s.problem.empty() && in_group && !s.rec.get(plan_.group_by) ? group_key
                                                                                       : group_of(s.rec, plan_.group_by);
        if (key != group_key || !in_group) {
          if (in_group) closed_groups.insert(group_key);
          in_group = true;
          close_group();
          if (closed_groups.count(key) != 0)
            throw io::DataError(p_.dataset.path, s.line,
                                fmt::format("record of group {}={} appears after that group ended (first seen near line {})",
                                            plan_.group_by, key, group_line),
                                fmt::format("sort the dataset by '{}' so each group's records are together", plan_.group_by));
          group_key = key;
          group_line = s.line;
          group_mine = !sharded || shard_of_group(key, opt_.shard_count) == opt_.shard_index;
        }
        if (!group_mine) continue;  // another shard's group (still read: a group split in the data is an error)
        group.push_back(std::move(s));
      } else {
        for (int r = 0; r < reps; ++r) {
          Slot c = r + 1 < reps ? s : std::move(s);
          c.replication = r;
          if (reps > 1) c.rec.set("_replication", std::to_string(r));
          add(std::move(c));
        }
        maybe_flush(false);
      }
    }
    close_group();
    maybe_flush(true);
  } catch (...) {
    reader_error = std::current_exception();
  }
  {
    std::lock_guard lk(mu_);
    reading_done_ = true;
  }
  cv_work_.notify_all();
  cv_llm_.notify_all();
  cv_done_.notify_all();
  for (auto &t : threads) t.join();
  writer.join();
  progress_line(true);

  // An interrupted run leaves the sinks' files as .partial: the journal holds what was finished, and
  // --resume writes the files whole. A finished run closes them under their final names.
  const bool stopped = stop_requested() || host_.cancelled();
  if (!expect_.empty() && !stopped && opt_.shard_count == 0) {
    json v = expect_.evaluate();
    std::lock_guard lk(verdict_mu_);
    verdict_ = std::move(v);
  }
  json sink_outputs = json::object();
  for (size_t i = 0; i < sinks_.size() && !stopped; ++i) {
    eg_call call{0, 0, &sinks_[i].pn->decl->id};
    const eg_node_type *t = sinks_[i].pn->type->type;
    if (t->finish == nullptr) continue;
    eg_buffer b{};
    eg_status st = t->finish(sinks_[i].instances[0], &call, &b);
    std::string out = take_host_buffer(b);
    if (st != EG_OK) {
      host_.log(EG_LOG_ERROR, fmt::format("sink '{}' could not finish: {}", sinks_[i].pn->decl->id, out));
      sink_outputs[sinks_[i].pn->decl->id] = {{"error", host_.redact(out)}};
    } else if (!out.empty()) {
      sink_outputs[sinks_[i].pn->decl->id] = json::parse(out, nullptr, false);
    }
  }
  for (size_t k = 0; k < runners_.size(); ++k) {
    const eg_node_type *t = runners_[k].pn->type->type;
    if (t->finish == nullptr) continue;
    for (void *inst : runners_[k].instances) {
      eg_call call{0, 0, &runners_[k].pn->decl->id};
      eg_buffer b{};
      t->finish(inst, &call, &b);
      take_host_buffer(b);
    }
  }
  teardown();
  if (journal_ != nullptr) {
    save_cost();
    fdatasync(fileno(journal_));
    std::fclose(journal_);
    journal_ = nullptr;
  }
  if (reader_error) std::rethrow_exception(reader_error);

  res.records = written_.load();
  res.failed_records = failed_records_.load();
  res.interrupted = stopped;
  res.stop_reason = stop_requested() ? stop_reason() : res.interrupted ? StopReason::signal : StopReason::none;
  res.seconds = std::chrono::duration<double>(Clock::now() - start_).count();
  json nodes = json::object();
  for (size_t k = 0; k < plan_.nodes.size(); ++k) {
    const auto &pn = plan_.nodes[k];
    res.nodes[pn.decl->id] = stats_[k];
    nodes[pn.decl->id] = {{"uses", pn.type->name},
                          {"plugin", pn.type->plugin->descriptor->name},
                          {"plugin_version", pn.type->plugin->descriptor->version},
                          {"with", pn.decl->with},
                          {"ok", stats_[k].ok},
                          {"failed", stats_[k].failed},
                          {"skipped", stats_[k].skipped}};
    if (!stats_[k].first_error.empty()) nodes[pn.decl->id]["first_error"] = stats_[k].first_error;
    if (!pn.type->info.is_null()) nodes[pn.decl->id]["described"] = pn.type->info;  // e.g. a python node's script
    if (!pn.type->outputs.empty()) nodes[pn.decl->id]["outputs"] = pn.type->outputs;  // compare's better direction
  }
  json sinks = json::object();
  for (size_t i = 0; i < plan_.sinks.size(); ++i) {
    json s = {{"uses", plan_.sinks[i].type->name}, {"with", plan_.sinks[i].decl->with}, {"errors", sink_errors_[i]}};
    if (!sink_first_error_[i].empty()) s["first_error"] = sink_first_error_[i];
    if (sink_outputs.contains(plan_.sinks[i].decl->id)) s["result"] = sink_outputs[plan_.sinks[i].decl->id];
    sinks[plan_.sinks[i].decl->id] = s;
  }
  res.summary = {{"engine_version", version_string()},
                 {"abi", fmt::format("{}.{}", EG_ABI_MAJOR, EG_ABI_MINOR)},
                 {"pipeline", p_.name},
                 {"pipeline_file", p_.file.string()},
                 {"dataset", p_.dataset.path.string()},
                 {"replications", p_.replications},
                 {"jobs", workers},
                 {"schedule", {{"chunk_size", opt_.chunk_size}, {"window", window_}, {"llm_threads", llm_threads_}}},
                 {"records", res.records},
                 {"failed_records", res.failed_records},
                 {"interrupted", res.interrupted},
                 {"stop", res.interrupted ? json{{"reason", stop_reason_name(res.stop_reason)},
                                                 {"detail", stop_detail()},
                                                 {"exit_code", stop_exit_code(res.stop_reason)},
                                                 {"grace_s", stop_grace_s()}}
                                          : json(nullptr)},
                 {"resumed_records", res.resumed_records},
                 {"seconds", res.seconds},
                 {"embedding_model", host_.embedding_model_id()},
                 {"peak_rss_mb", peak_rss_mb()},
                 {"nodes", nodes},
                 {"sinks", sinks}};
  if (host_.llm() != nullptr) {
    res.summary["llm"] = host_.llm()->stats_json();
    res.summary["cost"] = host_.cost_json();
  }
  for (const auto &[k, v] : opt_.extra_summary.items()) res.summary[k] = v;
  if (!verdict_.is_null()) res.summary["expectations"] = verdict_;
  else if (!expect_.empty() && opt_.shard_count > 0)
    res.summary["expectations"] = {{"deferred", "a shard holds part of the records: evalgraph merge judges them"}};
  return res;
}

}  // namespace

std::size_t default_window(int jobs, int llm_threads, std::size_t chunk_size) {
  std::size_t w = (static_cast<std::size_t>(std::max(1, jobs)) * 2 + 2) * std::max<std::size_t>(1, chunk_size);
  return std::max(w, static_cast<std::size_t>(std::max(0, llm_threads)) * 32);
}

int shard_of_group(const std::string &group_key, int count) {
  std::uint64_t h = 14695981039346656037ULL;  // FNV-1a 64: the same on every machine and compiler
  for (unsigned char ch : group_key) {
    h ^= ch;
    h *= 1099511628211ULL;
  }
  return static_cast<int>(h % static_cast<std::uint64_t>(std::max(1, count)));
}


fs::path new_run_dir(const Pipeline &p, const fs::path &root_override) {
  return run_folder::new_run_dir(p.name, root_override.empty() ? p.output_dir : root_override);
}

RunState read_run_state(const fs::path &run_dir) {
  Location at{run_dir.string(), 0, 0};
  fs::path state_file = run_folder::state(run_dir);
  if (!fs::exists(state_file)) {
    std::string why = run_folder::finished(run_dir)
                          ? "this run already finished (run.json is there); start a new run instead"
                          : "it has no progress/state.json; is this a results folder of evalgraph run?";
    throw ConfigError({{at, "cannot resume: " + why}});
  }
  RunState rs;
  std::ifstream in(state_file);
  rs.state = json::parse(in, nullptr, false);
  if (rs.state.is_discarded() || !rs.state.contains("pipeline_file"))
    throw ConfigError({{{state_file.string(), 0, 0}, "cannot resume: the state file is damaged"}});
  rs.pipeline_file = rs.state["pipeline_file"].get<std::string>();
  std::ifstream pin(run_folder::pipeline_copy(run_dir), std::ios::binary);
  std::stringstream ss;
  ss << pin.rdbuf();
  rs.pipeline_text = ss.str();
  return rs;
}

namespace {
// The records (replications counted) a stopped run has not finished: this shard's records of the data set (within
// the limit) minus those written. -1 where it cannot say cheaply (a sharded run grouped by a field).
long long count_remaining(const Pipeline &p, const RunOptions &opt, std::size_t written) {
  if (opt.shard_count > 0 && !p.nodes.empty() && std::any_of(p.nodes.begin(), p.nodes.end(), [](const NodeDecl &d) {
        return !d.group_by.empty();
      }))
    return -1;
  try {
    auto reader = io::open_dataset(p.dataset.path, p.dataset.format, p.dataset.options, p.limits.record);
    const long long limit = opt.limit >= 0 ? opt.limit : p.dataset.limit;
    long long n = 0, index = 0;
    for (; (limit < 0 || index < limit) && reader->skip(); ++index)
      if (opt.shard_count <= 0 || index % opt.shard_count == opt.shard_index) ++n;
    return std::max(0LL, n * p.replications - static_cast<long long>(written));
  } catch (const std::exception &) {
    return -1;
  }
}
}  // namespace

RunResult run_plan(const Pipeline &p, const Plan &plan, HostServices &host, const RunOptions &opt) {
  fs::path run_dir = opt.run_dir.empty() ? new_run_dir(p, opt.output_root) : opt.run_dir;
  fs::create_directories(run_dir);
  if (opt.resume) {
    // The dataset must be the one the run started on, or the journal's record numbers mean nothing.
    RunState rs = read_run_state(run_dir);
    std::error_code ec;
    auto size = fs::file_size(p.dataset.path, ec);
    if (rs.state.value("dataset_size", static_cast<std::uintmax_t>(0)) != size)
      throw ConfigError({{{p.dataset.path.string(), 0, 0},
                          "cannot resume: the dataset changed since the run started (its size differs); start a new run"}});
    // What the earlier sessions spent (docs/cost.md): run.json's cost covers the whole run.
    std::ifstream cin(run_folder::cost(run_dir));
    json earlier = cin ? json::parse(cin, nullptr, false) : json();
    if (earlier.is_object()) host.set_earlier_cost(std::move(earlier));
  } else {
    write_file_atomically(run_folder::pipeline_copy(run_dir), p.source_text);
    if (opt.journal) {
      fs::create_directories(run_folder::progress_dir(run_dir));
      std::error_code ec;
      json state = {{"pipeline_file", fs::absolute(p.file).string()},
                    {"dataset", fs::absolute(p.dataset.path).string()},
                    {"dataset_size", fs::file_size(p.dataset.path, ec)},
                    {"engine_version", version_string()}};
      if (opt.shard_count > 0) state["shard"] = {{"index", opt.shard_index}, {"count", opt.shard_count}};
      if (!opt.extra_summary.empty()) state["extra_summary"] = opt.extra_summary;
      write_file_atomically(run_folder::state(run_dir), state.dump(2));
    }
  }
  // The budget (docs/cost.md): what earlier sessions spent counts; reaching it stops the run like a signal does,
  // with its own reason and exit code.
  auto budget = std::make_shared<std::pair<std::mutex, std::string>>();
  if (opt.max_cost_usd > 0 && host.llm() != nullptr)
    host.llm()->set_budget(opt.max_cost_usd, host.cost_spent_usd(), [budget](const std::string &why) {
      {
        std::lock_guard lk(budget->first);
        budget->second = why;
      }
      request_stop(StopReason::budget, why.c_str());
    });
  std::FILE *log = std::fopen(run_folder::log_file(run_dir).c_str(), opt.resume ? "a" : "w");
  host.set_log_file(log);
  RunResult r;
  try {
    Engine e(p, plan, host, opt, run_dir);
    r = e.run();
  } catch (...) {
    host.set_log_file(nullptr);
    if (log != nullptr) std::fclose(log);
    throw;
  }
  host.set_log_file(nullptr);
  if (log != nullptr) std::fclose(log);
  {
    std::lock_guard lk(budget->first);
    r.budget_stop = !budget->second.empty();
    r.budget_detail = budget->second;
  }
  if (r.budget_stop) r.summary["budget"] = host.llm()->budget_json();
  if (r.interrupted) r.remaining_records = count_remaining(p, opt, r.records);
  if (!r.interrupted) {
    write_file_atomically(run_folder::summary(run_dir), r.summary.dump(2) + "\n");
    if (auto v = r.summary.find("expectations"); v != r.summary.end() && v->contains("results"))  // docs/ci.md
      write_file_atomically(run_folder::junit(run_dir), expectations_junit(*v, p.name, r.seconds));
    std::error_code ec;
    if (opt.shard_count > 0 && opt.journal) {  // a shard keeps its records for `evalgraph merge`
      fs::create_directories(run_folder::shard_journal(run_dir).parent_path());
      fs::rename(run_folder::journal(run_dir), run_folder::shard_journal(run_dir));
    }
    fs::remove_all(run_folder::progress_dir(run_dir), ec);  // finished: nothing left to resume
  } else {
    write_file_atomically(run_folder::interrupted(run_dir), r.summary.dump(2) + "\n");
  }
  return r;
}

}  // namespace evalgraph
