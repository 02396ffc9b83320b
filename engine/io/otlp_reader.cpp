// The OTLP trace reader (otlp_reader.h): steps 2 and 3, options, and the RecordReader the engine reads.
#include "io/otlp_reader.h"

#include <stdlib.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <map>
#include <unordered_map>

#include "io/otlp_scan.h"
#include "io/readers.h"
#include "io/record_check.h"

namespace evalgraph::io::otlp {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::uint64_t fnv1a(std::string_view s) {
  std::uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ULL;
  return h;
}

// Walks the entries of a partition file in order: fn(header, text) (text empty unless want(header)).
template <class Want, class Fn>
void each_entry(const SpillFile &file, Want want, Fn fn) {
  constexpr std::size_t kBlock = std::size_t{4} << 20;
  std::string block, big;
  const std::uint64_t size = file.size();
  std::uint64_t off = 0, block_off = 0;
  while (off < size) {
    if (off < block_off || off + sizeof(EntryHeader) > block_off + block.size()) {
      block_off = off;
      file.read_at(off, static_cast<std::size_t>(std::min<std::uint64_t>(kBlock, size - off)), block);
    }
    EntryHeader h{};
    std::memcpy(&h, block.data() + (off - block_off), sizeof h);
    const std::uint64_t text_off = off + sizeof h;
    std::string_view text;
    if (want(h)) {
      if (text_off + h.len <= block_off + block.size()) {
        text = std::string_view(block.data() + (text_off - block_off), h.len);
      } else {
        file.read_at(text_off, h.len, big);
        text = big;
      }
    }
    fn(h, text);
    off = text_off + h.len;
  }
}

using TraceKey = std::array<std::uint8_t, 16>;
TraceKey key_of(const EntryHeader &h) {
  TraceKey k;
  std::memcpy(k.data(), h.trace, 16);
  return k;
}

// Partitions up to this size are read whole (they are made about 32 MB; only huge traces make one larger).
constexpr std::uint64_t kWholePartition = std::uint64_t{160} << 20;

std::string trace_hex(const std::uint8_t *t) {
  static const char *kHex = "0123456789abcdef";
  std::string s(32, '0');
  for (int i = 0; i < 16; ++i) {
    s[2 * i] = kHex[t[i] >> 4];
    s[2 * i + 1] = kHex[t[i] & 0xF];
  }
  return s;
}

Context parse_context(std::string_view resource, std::string_view scope, Counts &counts) {
  Context ctx;
  bool bad = false;
  Cursor c(resource);
  std::string_view k;
  if (!resource.empty() && c.begin_object()) {
    while (c.next_member(k)) {
      if (k != "attributes") {
        c.skip();
        continue;
      }
      std::string_view raw;
      if (!c.begin_array()) break;
      while (c.next_element()) {
        Cursor attr(c.skip());
        std::string key;
        json value;
        if (!attr.begin_object()) continue;
        while (attr.next_member(k)) {
          if (k == "key" && attr.raw_string(raw))
            key = unescape(raw, bad);
          else if (k == "value")
            value = any_value(attr.skip(), bad);
          else
            attr.skip();
        }
        if (!key.empty()) ctx.resource[key] = std::move(value);
      }
    }
  }
  Cursor s(scope);
  if (!scope.empty() && s.begin_object()) {
    while (s.next_member(k)) {
      std::string_view raw;
      if (k == "name" && s.peek() == '"' && s.raw_string(raw))
        ctx.scope_name = unescape(raw, bad);
      else if (k == "version" && s.peek() == '"' && s.raw_string(raw))
        ctx.scope_version = unescape(raw, bad);
      else
        s.skip();
    }
  }
  if (bad) ++counts["text with bytes that are not UTF-8 (replaced by U+FFFD)"];
  return ctx;
}

std::vector<std::string> string_list(const json &v, const std::string &what, const fs::path &file) {
  std::vector<std::string> out;
  if (v.is_string())
    out.push_back(v.get<std::string>());
  else if (v.is_array())
    for (const auto &x : v) {
      if (!x.is_string())
        throw DataError(file, 0, what + " must list names (strings)", "see docs/traces.md \"mapping\"");
      out.push_back(x.get<std::string>());
    }
  else
    throw DataError(file, 0, what + " must be a name or a list of names", "see docs/traces.md \"mapping\"");
  return out;
}

void read_mapping(const json &m, const fs::path &file, Mapping &out) {
  if (!m.is_object()) throw DataError(file, 0, "'mapping' must be a mapping of field: attribute", "see docs/traces.md");
  for (const auto &[k, v] : m.items()) {
    if (k == "llm_spans")
      out.llm_spans = string_list(v, "mapping.llm_spans", file);
    else if (k == "retriever_spans")
      out.retriever_spans = string_list(v, "mapping.retriever_spans", file);
    else if (k == "tool_spans")
      out.tool_spans = string_list(v, "mapping.tool_spans", file);
    else if (v.is_object() && v.contains("attribute"))
      out.field_attributes[k] = string_list(v["attribute"], "mapping." + k + ".attribute", file);
    else
      out.field_attributes[k] = string_list(v, "mapping." + k, file);
  }
}

Settings read_settings(const fs::path &file, const json &opts) {
  Settings s;
  s.files.push_back(file);
  for (const auto &[k, v] : opts.items()) {
    if (k == "logs") {
      if (!v.is_string())
        throw DataError(file, 0, "'logs' must be the path of a file", "write logs: traces-logs.jsonl");
      s.files.emplace_back(v.get<std::string>());
    } else if (k == "unit") {
      if (v != "trace" && v != "llm_call")
        throw DataError(file, 0, "unknown unit " + v.dump(), "use unit: trace (one record per trace) or llm_call");
      s.mapping.per_llm_call = v == "llm_call";
    } else if (k == "mapping") {
      read_mapping(v, file, s.mapping);
    } else if (k == "max_request_mb" && v.is_number_integer() && v.get<long long>() > 0) {
      s.max_request_bytes = static_cast<std::size_t>(v.get<long long>()) << 20;
    } else if (k == "max_trace_spans" && v.is_number_integer() && v.get<long long>() > 0) {
      s.max_trace_spans = static_cast<std::size_t>(v.get<long long>());
    } else {
      throw DataError(
          file, 0, "unknown or invalid trace option '" + k + "'",
          "trace datasets take logs, unit, mapping, max_request_mb and max_trace_spans (whole numbers > 0)");
    }
  }
  return s;
}

// One record, ready to be handed out.
struct Item {
  std::string_view key, text, problem;
  std::uint64_t line = 0;
};

// A piece of a loaded partition: where its text lies in the arena.
struct Ref {
  TraceKey key;
  std::uint8_t is_log;
  std::uint32_t context;
  std::uint64_t line, off, len, seq;
};

// A partition that fits in memory is mapped whole: the pieces' texts stay where they are.
std::string_view load_whole(SpillFile &part, std::vector<Ref> &refs) {
  const std::string_view arena = part.whole();
  for (std::size_t off = 0; off + sizeof(EntryHeader) <= arena.size();) {
    EntryHeader h{};
    std::memcpy(&h, arena.data() + off, sizeof h);
    refs.push_back({key_of(h), h.is_log, h.context, h.line, off + sizeof h, h.len, refs.size()});
    off += sizeof h + h.len;
  }
  return arena;
}

class OtlpReader final : public RecordReader {
 public:
  OtlpReader(const fs::path &file, const json &opts, const RecordLimits &limits)
      : file_(file), settings_(read_settings(file, opts)) {
    limits_ = limits;
    columns_ = record_fields();
    for (const auto &[field, keys] : settings_.mapping.field_attributes)
      if (std::find(columns_.begin(), columns_.end(), field) == columns_.end()) columns_.push_back(field);
    settings_.max_trace_bytes = std::max(settings_.max_trace_bytes, 16 * limits.record_bytes);
  }
  ~OtlpReader() override {
    records_.clear();
    parts_ = Partitions();
    if (!dir_.empty()) {
      std::error_code ec;
      fs::remove_all(dir_, ec);
    }
  }

  bool next(json &record) override {
    thread_local std::string text;
    if (!next_text(text, nullptr)) return false;
    if (!problem_.empty()) throw DataError(file_, line_, problem_, "");
    record = json::parse(text);
    return true;
  }

  bool next_text(std::string &text, std::vector<rawjson::Member> *members) override {
    prepare();
    while (item_ == items_.size()) {
      if (!load_next_record_file()) return false;
    }
    const Item &it = items_[item_++];
    text.assign(it.text);
    problem_.assign(it.problem);
    line_ = it.line;
    if (members != nullptr) rawjson::object_members(text, *members);
    return true;
  }

  const std::vector<std::string> &columns() const override { return columns_; }
  std::size_t line() const override { return line_; }
  json stats() const override;

 private:
  void prepare();
  void assemble(SpillFile &part);
  void load_checked(const SpillFile &part, std::string &arena, std::vector<Ref> &refs);
  void count_oversized(std::uint64_t pieces);
  void finish_trace(Trace &t);
  void write_record(MappedRecord &r, std::uint64_t line);
  bool load_next_record_file();
  const Context &context(std::uint32_t id);

  fs::path file_;
  Settings settings_;
  std::vector<std::string> columns_;
  fs::path dir_;
  bool prepared_ = false;
  Partitions parts_;
  std::vector<std::unique_ptr<SpillFile>> records_;
  std::size_t next_record_file_ = 0;
  std::unique_ptr<SpillFile> loaded_;  // the record file being handed out
  std::vector<Item> items_;
  std::size_t item_ = 0;
  std::size_t line_ = 0;
  Counts counts_;
  std::uint64_t traces_ = 0, records_written_ = 0;
  std::unordered_map<std::uint32_t, Context> context_cache_;
  std::uint64_t context_count_ = 0;
  std::string arena_;  // the partition being assembled
};

void OtlpReader::prepare() {
  if (prepared_) return;
  prepared_ = true;
  std::string pattern = (fs::temp_directory_path() / "evalgraph-otlp-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr)
    throw DataError(file_, 0, "cannot create a temporary folder for the trace reader",
                    "set TMPDIR to a writable folder with room for about the size of the trace file");
  dir_ = pattern;
  partition_inputs(settings_, dir_, parts_, counts_);
  context_count_ = parts_.context_index->size() / 8;
  const std::size_t n = std::clamp<std::uint64_t>(parts_.input_bytes / (std::uint64_t{16} << 20) + 1, 1, 512);
  for (std::size_t i = 0; i < n; ++i)
    records_.push_back(std::make_unique<SpillFile>(dir_ / ("records-" + std::to_string(i))));
  for (auto &p : parts_.parts) {
    assemble(*p);
    context_cache_.clear();
    p.reset();  // its file goes
  }
  for (auto &r : records_) r->flush();
}

const Context &OtlpReader::context(std::uint32_t id) {
  auto it = context_cache_.find(id);
  if (it != context_cache_.end()) return it->second;
  Context ctx;
  if (id < context_count_) {
    std::string buf;
    parts_.context_index->read_at(std::uint64_t{id} * 8, 8, buf);
    std::uint64_t off = 0;
    std::memcpy(&off, buf.data(), 8);
    std::uint32_t rlen = 0, slen = 0;
    parts_.contexts->read_at(off, 4, buf);
    std::memcpy(&rlen, buf.data(), 4);
    std::string resource;
    parts_.contexts->read_at(off + 4, rlen + 4, resource);
    std::memcpy(&slen, resource.data() + rlen, 4);
    resource.resize(rlen);
    parts_.contexts->read_at(off + 8 + rlen, slen, buf);
    ctx = parse_context(resource, buf, counts_);
  }
  return context_cache_.emplace(id, std::move(ctx)).first->second;
}

// A larger partition (a few huge traces) is read twice: the traces' sizes first, then only the pieces of traces
// within the limits (the others are counted and left on disk).
void OtlpReader::load_checked(const SpillFile &part, std::string &arena, std::vector<Ref> &refs) {
  struct Size {
    std::uint64_t pieces = 0, bytes = 0;
  };
  std::map<TraceKey, Size> sizes;
  arena.clear();
  each_entry(
      part, [](const EntryHeader &) { return false; },
      [&](const EntryHeader &h, std::string_view) {
        Size &s = sizes[key_of(h)];
        ++s.pieces;
        s.bytes += h.len;
      });
  auto fits = [&](const Size &s) {
    return s.pieces <= settings_.max_trace_spans && s.bytes <= settings_.max_trace_bytes;
  };
  each_entry(
      part, [&](const EntryHeader &h) { return fits(sizes[key_of(h)]); },
      [&](const EntryHeader &h, std::string_view text) {
        if (!fits(sizes[key_of(h)])) return;
        refs.push_back({key_of(h), h.is_log, h.context, h.line, arena.size(), text.size(), refs.size()});
        arena.append(text);
      });
  for (const auto &[key, s] : sizes)
    if (!fits(s)) count_oversized(s.pieces);
}

void OtlpReader::count_oversized(std::uint64_t pieces) {
  ++traces_;
  ++counts_[pieces > settings_.max_trace_spans ? "trace over max_trace_spans (not read)"
                                               : "trace whose spans' text is over 16 x limits.record_bytes (not read)"];
}

// Step 2 for one partition: its pieces grouped by trace, each trace within the limits mapped to its records.
void OtlpReader::assemble(SpillFile &part) {
  std::vector<Ref> refs;
  std::string_view arena;
  if (part.size() <= kWholePartition) {
    arena = load_whole(part, refs);
  } else {
    load_checked(part, arena_, refs);  // arena_ kept between partitions: its pages are not faulted in again
    arena = arena_;
  }
  std::sort(refs.begin(), refs.end(), [](const Ref &a, const Ref &b) {
    return a.key != b.key ? a.key < b.key : a.is_log != b.is_log ? a.is_log < b.is_log : a.seq < b.seq;
  });
  for (std::size_t i = 0, j = 0; i < refs.size(); i = j) {
    std::uint64_t bytes = 0;
    for (j = i; j < refs.size() && refs[j].key == refs[i].key; ++j) bytes += refs[j].len;
    if (j - i > settings_.max_trace_spans || bytes > settings_.max_trace_bytes) {
      count_oversized(j - i);
      continue;
    }
    Trace t;
    t.id = trace_hex(refs[i].key.data());
    t.pieces.reserve(j - i);
    std::unordered_map<std::uint32_t, std::uint32_t> local;  // context id -> index in t.contexts
    std::uint64_t first_line = refs[i].line;
    for (std::size_t k = i; k < j; ++k) {
      Piece p;
      if (!parse_piece(arena.substr(refs[k].off, refs[k].len), refs[k].is_log != 0, p, counts_)) continue;
      auto [it, added] = local.emplace(refs[k].context, static_cast<std::uint32_t>(t.contexts.size()));
      if (added) t.contexts.push_back(&context(refs[k].context));
      p.context = it->second;
      p.line = refs[k].line;
      first_line = std::min(first_line, refs[k].line);
      t.pieces.push_back(std::move(p));
    }
    ++traces_;
    std::vector<MappedRecord> out;
    try {
      map_trace(t, settings_.mapping, counts_, out);
    } catch (const json::exception &) {
      // A value of a shape the mapping did not foresee (the instrumentation's JSON can be anything): this trace is
      // counted and left out, the file read on.
      ++counts_["trace with a value of an unexpected type (not read)"];
      continue;
    }
    for (auto &r : out) write_record(r, first_line);
  }
}

void OtlpReader::write_record(MappedRecord &r, std::uint64_t line) {
  std::string text = std::move(r.text);
  std::string problem;
  if (text.size() > limits_.record_bytes) {
    problem = DataError::format(file_, line, 0, detail::record_too_long(text.size(), limits_.record_bytes),
                                detail::record_too_long_hint());
    json small = {{"id", r.id}, {"session_id", r.session.empty() ? json() : json(r.session)}, {"start", r.start}};
    text = small.dump();
    ++counts_["record over limits.record_bytes (fails alone)"];
  } else {
    thread_local rawjson::CheckResult res;
    thread_local std::vector<rawjson::Member> members;
    rawjson::check(text, detail::check_options(limits_), res, &members);
    std::vector<detail::RecordFault> faults;
    if (res.error.fault == rawjson::Fault::none) detail::collect_faults(text, res, members, limits_, faults);
    if (!faults.empty()) {
      problem =
          DataError::format(file_, line, 0, faults.front().problem + detail::more(faults.size()), faults.front().hint);
      std::string reduced;
      detail::reduce(text, members, res, limits_, reduced);
      text = std::move(reduced);
      ++counts_["record with a field over a limit (fails alone)"];
    }
  }
  char start[24];
  std::snprintf(start, sizeof start, "%020lld", static_cast<long long>(r.start_ns));
  const std::string id = r.id.get<std::string>();
  std::string key = r.session.empty() ? "2" + std::string(start) + id : "1" + r.session + '\0' + start + id;
  SpillFile &f = *records_[fnv1a(r.session.empty() ? id : r.session) % records_.size()];
  f.append_u32(static_cast<std::uint32_t>(key.size()));
  f.append(key.data(), key.size());
  f.append_u32(static_cast<std::uint32_t>(text.size()));
  f.append(text.data(), text.size());
  f.append_u32(static_cast<std::uint32_t>(problem.size()));
  f.append(problem.data(), problem.size());
  f.append_u64(line);
  ++records_written_;
}

bool OtlpReader::load_next_record_file() {
  items_.clear();
  item_ = 0;
  if (next_record_file_ == records_.size()) {
    loaded_.reset();
    return false;
  }
  loaded_ = std::move(records_[next_record_file_++]);  // the items' texts stay in its mapping
  const std::string_view data = loaded_->whole();
  std::size_t pos = 0;
  auto take = [&](std::string_view &out) {
    std::uint32_t n = 0;
    std::memcpy(&n, data.data() + pos, 4);
    out = data.substr(pos + 4, n);
    pos += 4 + n;
  };
  while (pos < data.size()) {
    Item it;
    take(it.key);
    take(it.text);
    take(it.problem);
    std::memcpy(&it.line, data.data() + pos, 8);
    pos += 8;
    items_.push_back(it);
  }
  std::sort(items_.begin(), items_.end(), [](const Item &a, const Item &b) { return a.key < b.key; });
  return true;
}

json OtlpReader::stats() const {
  json files = json::array();
  for (const auto &f : settings_.files) files.push_back(f.string());
  json unmapped = json::object();
  for (const auto &[reason, n] : counts_) unmapped[reason] = n;
  return {{"format", "otlp"},
          {"files", files},
          {"unit", settings_.mapping.per_llm_call ? "llm_call" : "trace"},
          {"bytes", parts_.input_bytes},
          {"export_requests", parts_.requests},
          {"spans", parts_.spans},
          {"log_records", parts_.logs},
          {"traces", traces_},
          {"records", records_written_},
          {"unmapped", unmapped}};
}

}  // namespace

}  // namespace evalgraph::io::otlp

namespace evalgraph::io::detail {
std::unique_ptr<RecordReader> open_otlp(const std::filesystem::path &file, const nlohmann::json &options,
                                        const RecordLimits &limits) {
  return std::make_unique<otlp::OtlpReader>(file, options, limits);
}
}  // namespace evalgraph::io::detail
