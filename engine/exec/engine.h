#pragma once
// The executor's rooms share this (internal to engine/exec): the record slots, the chunks they travel in,
// and the Engine that runs one plan. Where each part lives:
//   executor.cpp     run_plan, the run folder's state, Engine::run and setup (the run from start to end)
//   feed.cpp         feeding: the data set into chunks, shards, sequence groups and replications
//   schedule.cpp     scheduling: CPU workers, LLM threads, a record's advance through the DAG
//   write.cpp        writing: the reorder buffer, the sinks (and expect:'s feed), the journal, resume's replay
//   summary.cpp      the run summary (run.json) and what eg_host.run_info answers
//   node_runner.cpp  every call of the plugin C ABI (create/process/finish/destroy/describe)
// The shard merge (records of several shards' journals to the sinks) is shard/merge.cpp.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "agree/agreement.h"
#include "exec/record_budget.h"
#include "exec/executor.h"
#include "exec/node_runner.h"
#include "io/dataset.h"
#include "io/raw_record.h"
#include "expect/expectations.h"
#include "run_folder/run_folder.h"
#include "util/atomic_file.h"

namespace evalgraph::exec_detail {
namespace fs = std::filesystem;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

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

// The JSON text a port reads: a top-level field, or a member of one (`field.sub`).
std::optional<std::string_view> lookup(const RawRecord &rec, const PortBinding &b);
// The group a record belongs to: its group_by value as JSON text (feed.cpp).
std::string group_of(const RawRecord &rec, const std::string &field);
// The finished record as one JSON line (write.cpp); added_at: where the fields the run added begin.
std::string record_text(Slot &s, std::size_t &added_at);

class Engine {
 public:
  Engine(const Pipeline &p, const Plan &plan, HostServices &host, const RunOptions &opt, fs::path run_dir)
      : p_(p), plan_(plan), host_(host), opt_(opt), run_dir_(std::move(run_dir)) {
    if (plan_.labels) agree_ = std::make_unique<agree::AgreementSet>(p_, plan_.labels);
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
  // feeding (feed.cpp)
  void feed(std::size_t skip, long long limit, bool merging);
  void push_chunk(std::unique_ptr<Chunk> c);
  std::size_t expected_total(long long limit) const;
  void note_reader_stats(const io::RecordReader &reader);
  void progress_line(bool final);
  json run_info() const;
  void write_to_sinks(std::size_t index, int replication, const std::string &text);
  void count_resumed(const json &rec);
  std::size_t replay_journal();
  std::size_t merge_shards();
  void journal_chunk(const Chunk &c, const std::vector<std::string> &texts, const std::vector<std::size_t> &added_at);
  void open_journal();
  void close_journal();
  // the end of the run (executor.cpp, summary.cpp)
  void judge_expectations(bool stopped);
  json finish_plugins(bool stopped);
  void summarise(RunResult &res, bool stopped, int workers, const json &sink_outputs) const;
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
  std::vector<NodeRunner> runners_;  // per planned node (plan order)
  std::vector<NodeRunner> sinks_;

  std::mutex mu_;
  std::condition_variable cv_work_, cv_llm_, cv_done_, cv_space_;
  std::deque<Task> cpu_start_, cpu_more_;  // CPU work: new chunks; records and groups under way (taken first)
  int cpu_polling_ = 0;                    // workers in their timed wait (see worker_loop)
  static constexpr std::size_t kCpuBatch = 16;
  static constexpr auto kCpuPoll = std::chrono::milliseconds(5);
  // Records waiting for an LLM thread, by the number of LLM nodes they have left (llm_left_ of their next node):
  // the record with the most LLM work left goes first, so a record's first call is not held back behind the
  // later calls of records already under way (a late first call would put two latency draws in a row at the end).
  // Under a budget the order turns round (finish_first_): the record with the least LLM work left goes first, so
  // that the money a budget stop leaves spent bought finished records, not first calls of records never done.
  std::vector<std::deque<Task>> llm_q_;
  std::size_t llm_queued_ = 0;
  bool finish_first_ = false;
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
  // labels: and agreement: (engine/agree/): every record the sinks get is measured against its labels (and
  // carries them as _labels); computed with the expectations, which may gate on it.
  std::unique_ptr<agree::AgreementSet> agree_;
  mutable std::mutex verdict_mu_;  // run_info reads the verdict and the agreement from any thread
  json verdict_, agreement_;
  std::size_t expected_total_ = 0;
  json dataset_stats_;  // the reader's counts (trace reader: spans, traces, unmapped), for run.json
  Clock::time_point start_ = Clock::now(), last_progress_{};
  std::FILE *journal_ = nullptr;
  static constexpr std::size_t kJournalBuffer = 1 << 20;
  std::unique_ptr<char[]> journal_buffer_;  // outlives journal_ (closed in run())
  Clock::time_point last_sync_ = Clock::now();
  std::size_t next_index_ = 0;  // dataset index after the last chunk written
  bool cut_ = false;  // writer: a chunk held a record the stop interrupted; it and the later chunks are not journaled
  std::unique_ptr<RecordBudget> record_budget_;  // under a budget: records admitted as far as it finishes them
};
}  // namespace evalgraph::exec_detail
