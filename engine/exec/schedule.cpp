// Scheduling: a record's advance through the DAG. CPU workers start chunks and run local nodes; LLM threads run
// thread-safe LLM nodes (as many calls waiting side by side as the providers take); a sequence node runs once
// per group when the group's last record reaches it. Each node's input is built from the record, its output
// checked and spliced in; failures and skips are counted per node.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "exec/engine.h"
#include "util/stop.h"

namespace evalgraph::exec_detail {

// The JSON text a port reads: a top-level field, or a member of one (`field.sub`).
std::optional<std::string_view> lookup(const RawRecord &rec, const PortBinding &b) {
  auto top = rec.get(b.top);
  if (!top || b.sub.empty()) return top;
  return member_of(*top, b.sub);
}

namespace {

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

}  // namespace

void Engine::fail(size_t k, Slot &s, const std::string &msg, uint8_t how) {
  s.status[k] = how;
  const std::string &id = plan_.nodes[k].decl->id;
  (how == ST_FAILED ? s.errors : s.skipped)[id] = msg;
  std::lock_guard lk(stats_mu_);
  auto &st = stats_[k];
  if (s.interrupted) {  // the run's stop ended this record here (it or a node before it): not a failure
    ++st.stopped;
  } else if (how == ST_FAILED) {
    ++st.failed;
    if (st.first_error.empty()) {
      // "record N: <message>", unless the message already starts by naming its record (a missing field's does).
      const std::string own = fmt::format("record {} ", s.index + 1);
      st.first_error = msg.compare(0, own.size(), own) == 0 ? msg : fmt::format("record {}: {}", s.index + 1, msg);
    }
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
  std::string out;
  take_call_stopped();
  eg_status st = runners_[k].process(worker, s.index, s.replication, in, out);
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
  std::string out;
  take_call_stopped();
  eg_status st = runners_[k].process(worker, first.index, first.replication, arr, out);
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
  if (finish_first_) return false;  // this record is nearer its end than any waiting one
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
    if (record_budget_)
      for (auto &s : c.slots) record_budget_->done(host_.take_record_cost(s.index, s.replication));
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
  if (record_budget_) record_budget_->done(host_.take_record_cost(s.index, s.replication));
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
      // The most LLM work left first (the least under a budget: finish_first_), in arrival order within.
      std::deque<Task> *q = nullptr;
      for (std::size_t n = 0; q == nullptr; ++n) {
        auto &cand = llm_q_[finish_first_ ? n : llm_q_.size() - 1 - n];
        if (!cand.empty()) q = &cand;
      }
      t = q->front();
      q->pop_front();
      --llm_queued_;
    }
    advance(*t.chunk, t.slot, -1);
  }
}

}  // namespace evalgraph::exec_detail
