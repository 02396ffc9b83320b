// Writing: finished chunks leave the reorder buffer in input order; each record is journaled (for --resume and
// the shard merge), observed by the expect: set and handed to every sink. A resumed run replays the journal to
// the sinks first; a merge hands them the shards' records (shard/merge.cpp).
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>

#include "exec/engine.h"
#include "io/dataset.h"
#include "shard/merge.h"
#include "util/stop.h"

namespace evalgraph::exec_detail {

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
        if (t[0] == 'D') write_to_sinks(s.index, 0, RawRecord::combine(dataset_record(s.index), body));
        else write_to_sinks(s.index, 0, std::string(body));
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

std::size_t Engine::merge_shards() {
  std::size_t merged = shard::merge_journals(
      opt_.merge_journals, p_, [this](const json &status) { count_resumed(status); },
      [this](std::size_t index, const std::string &record) {
        write_to_sinks(index, 0, record);
      });
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

void Engine::write_to_sinks(std::size_t index, int replication, const std::string &given) {
  // A record with people's labels carries them to the sinks as _labels (not in the journal: added again on replay).
  std::string labelled;
  if (agree_)
    if (std::string l = agree_->observe(given, index); !l.empty() && given.size() >= 2 && given.back() == '}') {
      labelled.reserve(given.size() + l.size() + 12);
      labelled.append(given, 0, given.size() - 1).append(given.size() > 2 ? ",\"_labels\":" : "\"_labels\":");
      labelled.append(l).push_back('}');
    }
  const std::string &text = labelled.empty() ? given : labelled;
  if (!expect_.empty()) expect_.observe(text);
  for (size_t i = 0; i < sinks_.size(); ++i) {
    std::string out;
    eg_status st = sinks_[i].process(0, index, replication, text, out);
    if (st != EG_OK && sink_errors_[i]++ == 0) sink_first_error_[i] = host_.redact(out);
  }
}

void Engine::open_journal() {
  fs::create_directories(run_folder::progress_dir(run_dir_));
  journal_ = std::fopen(run_folder::journal(run_dir_).c_str(), "ab");
  if (journal_ == nullptr) throw std::runtime_error("cannot write the progress journal in " + run_dir_.string());
  // A chunk's records in a few large writes, not several small ones per record (fflush ends each chunk).
  journal_buffer_ = std::make_unique<char[]>(kJournalBuffer);
  std::setvbuf(journal_, journal_buffer_.get(), _IOFBF, kJournalBuffer);
}

void Engine::close_journal() {
  if (journal_ == nullptr) return;
  save_cost();
  fdatasync(fileno(journal_));
  std::fclose(journal_);
  journal_ = nullptr;
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
      if (!stop_requested()) write_to_sinks(s.index, s.replication, texts[j]);
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

}  // namespace evalgraph::exec_detail
