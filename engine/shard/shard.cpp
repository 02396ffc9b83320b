#include "shard/shard.h"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "config/diagnostics.h"
#include "util/json_file.h"
#include "io/dataset.h"
#include "util/sha256.h"
#include "report/default_report.h"
#include "run_folder/run_folder.h"
#include "util/version.h"

namespace evalgraph::shard {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

bool parse_int(std::string_view s, int &out) {
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size();
}

// The data set's identity: its size and a 4-lane 64-bit multiply-xorshift hash of its bytes (~3 GB/s; SHA-256
// here ran at ~150 MB/s, a quarter of a small shard's CPU time). It guards against a changed or different
// file, not against an adversary.
std::string file_digest(const fs::path &file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return "unreadable";
  constexpr std::uint64_t kMul = 0x9E3779B97F4A7C15ULL;
  std::uint64_t lane[4] = {0x243F6A8885A308D3ULL, 0x13198A2E03707344ULL, 0xA4093822299F31D0ULL, 0x082EFA98EC4E6C89ULL};
  auto mix = [&](std::uint64_t &h, std::uint64_t w) {
    h = (h ^ w) * kMul;
    h ^= h >> 31;
  };
  std::vector<char> buf(1 << 20);
  std::uint64_t size = 0;
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    auto n = static_cast<std::size_t>(in.gcount());
    size += n;
    std::size_t i = 0;
    for (; i + 32 <= n; i += 32)
      for (int k = 0; k < 4; ++k) {
        std::uint64_t w;
        std::memcpy(&w, buf.data() + i + 8 * k, 8);
        mix(lane[k], w);
      }
    for (; i < n; ++i) mix(lane[0], static_cast<unsigned char>(buf[i]) | 0x100ULL);  // the tail, byte by byte
  }
  std::uint64_t a = lane[0] ^ (lane[1] * kMul), b = lane[2] ^ (lane[3] * kMul);
  mix(a, size);
  mix(b, a);
  return fmt::format("{}:{:016x}{:016x}", size, a, b);
}

json read_json(const fs::path &f) {
  if (!fs::exists(f)) return json();
  json j;
  if (!read_json_file_bounded(f, j)) return json(json::value_t::discarded);
  return j;
}

std::string now_iso() { return fmt::format("{:%Y-%m-%dT%H:%M:%S}", fmt::localtime(std::time(nullptr))); }

}  // namespace

ShardSpec resolve_shard(const std::optional<std::string> &shard_arg, int shard_count_arg,
                        const std::function<const char *(const char *)> &getenv_fn) {
  ShardSpec s;
  auto env = [&](const char *name) -> std::optional<std::string> {
    const char *v = getenv_fn(name);
    if (v == nullptr || *v == '\0') return std::nullopt;
    return std::string(v);
  };
  auto check = [&](int i1, int n, const std::string &what) {
    if (n < 1) refuse(what, fmt::format("the shard count must be at least 1 (got {})", n));
    if (i1 < 1 || i1 > n)
      refuse(what, fmt::format("shard {} of {} does not exist: shards are numbered 1 to {}", i1, n, n));
  };
  if (shard_arg) {
    const std::string &a = *shard_arg;
    auto slash = a.find('/');
    int i = 0, n = 0;
    if (slash == std::string::npos || !parse_int(std::string_view(a).substr(0, slash), i) ||
        !parse_int(std::string_view(a).substr(slash + 1), n))
      refuse("--shard", fmt::format("'{}' is not I/N (for example --shard 1/3: the first of three shards)", a));
    check(i, n, "--shard");
    return {i - 1, n, "--shard"};
  }
  if (auto id = env("SLURM_ARRAY_TASK_ID")) {
    auto count = env("SLURM_ARRAY_TASK_COUNT");
    auto min = env("SLURM_ARRAY_TASK_MIN");
    int i = 0, n = 0, m = 0;
    if (!parse_int(*id, i) || !count || !parse_int(*count, n) || (min && !parse_int(*min, m)))
      refuse("SLURM_ARRAY_TASK_ID",
             "a Slurm array task needs numeric SLURM_ARRAY_TASK_ID and SLURM_ARRAY_TASK_COUNT (and SLURM_ARRAY_TASK_MIN); "
             "or give --shard I/N");
    // An array with a step (--array=0-9:2) leaves gaps: the index would not be dense.
    if (i - m < 0 || i - m >= n)
      refuse("SLURM_ARRAY_TASK_ID", fmt::format("array task {} is outside {}..{} (min {}, count {}); submit a dense array "
                                                "(--array=0-{}) or give --shard I/N",
                                                i, m, m + n - 1, m, n, n - 1));
    return {i - m, n, "SLURM_ARRAY_TASK_ID"};
  }
  if (auto idx = env("JOB_COMPLETION_INDEX")) {
    int i = 0, n = shard_count_arg;
    std::string count_from = "--shard-count";
    if (n <= 0) {
      auto c = env("EVALGRAPH_SHARD_COUNT");
      count_from = "EVALGRAPH_SHARD_COUNT";
      if (!c)
        refuse("JOB_COMPLETION_INDEX", "a Kubernetes Indexed Job gives the index but not the count: pass --shard-count N or "
                                       "set EVALGRAPH_SHARD_COUNT to the Job's completions");
      if (!parse_int(*c, n)) refuse("EVALGRAPH_SHARD_COUNT", fmt::format("'{}' is not a number", *c));
    }
    if (!parse_int(*idx, i)) refuse("JOB_COMPLETION_INDEX", fmt::format("'{}' is not a number", *idx));
    check(i + 1, n, count_from);
    return {i, n, "JOB_COMPLETION_INDEX"};
  }
  if (shard_count_arg > 0)
    refuse("--shard-count", "--shard-count needs JOB_COMPLETION_INDEX (a Kubernetes Indexed Job); elsewhere give --shard I/N");
  return s;
}

json fingerprint(const Pipeline &p, const Plan &plan, long long limit) {
  std::string plugins, params;
  auto add = [&](const PlannedNode &pn) {
    plugins += fmt::format("{} {} {} {}\n", pn.decl->id, pn.type->name, pn.type->plugin->descriptor->name,
                           pn.type->plugin->descriptor->version);
    params += pn.decl->id + " " + pn.decl->with.dump() + "\n";
  };
  for (const auto &pn : plan.nodes) add(pn);
  for (const auto &pn : plan.sinks) add(pn);
  params += fmt::format("replications {}\nlimit {}\ngroup_by {}\n", p.replications, limit, plan.group_by);
  return {{"pipeline", sha256_hex(p.source_text)},
          {"plugins", sha256_hex(plugins)},
          {"parameters", sha256_hex(params)},
          {"dataset", file_digest(p.dataset.path)},
          {"engine", version_string()}};
}

// ---- merge ----
namespace {

ShardFolder read_shard(const fs::path &dir) {
  ShardFolder f{dir, {}, {}};
  if (!fs::is_directory(dir)) refuse(dir.string(), "not a folder");
  if (!run_folder::finished(dir)) {
    if (run_folder::resumable(dir))
      refuse(dir.string(), fmt::format("this shard has not finished; finish it with `evalgraph run --resume {}`", dir.string()));
    refuse(dir.string(), "no run.json: not a results folder of evalgraph run");
  }
  f.run = read_json(run_folder::summary(dir));
  if (f.run.is_discarded() || !f.run.is_object()) refuse(run_folder::summary(dir).string(), "damaged run.json");
  if (!f.run.contains("shard") || !f.run.contains("fingerprint"))
    refuse(dir.string(), "not a shard: run.json has no \"shard\" (run it with --shard I/N)");
  f.shard = f.run["shard"];
  if (f.run.value("interrupted", false)) refuse(dir.string(), "this shard was interrupted; finish it with evalgraph run --resume");
  if (!fs::exists(run_folder::shard_journal(dir)))
    refuse(run_folder::shard_journal(dir).string(), "the shard's records are missing (was it run with --no-journal?)");
  return f;
}

void sum_into(json &acc, const json &add) {
  for (const auto &[k, v] : add.items()) {
    if (v.is_object()) {
      sum_into(acc[k], v);
    } else if (v.is_number() && k.find("mean") == std::string::npos) {
      if (!acc.contains(k)) acc[k] = v;
      else if (v.is_number_integer() && acc[k].is_number_integer()) acc[k] = acc[k].get<long long>() + v.get<long long>();
      else acc[k] = acc[k].get<double>() + v.get<double>();
    }
  }
}

// The shards are one run: the same count and fingerprint, every index exactly once. Returns the shard count
// and sorts the shards by index; throws ConfigError listing every problem.
int check_one_run(std::vector<ShardFolder> &shards) {
  const ShardFolder &first = shards.front();
  const int n = first.shard.value("count", 0);
  std::vector<std::string> problems;
  std::map<int, std::vector<std::string>> by_index;
  for (const auto &s : shards) {
    int c = s.shard.value("count", 0);
    if (c != n)
      problems.push_back(fmt::format("{} is shard {}/{}, but {} is one of {} shards", s.dir.string(), s.shard.value("index", 0) + 1, c,
                                     first.dir.string(), n));
    for (const auto &[k, v] : first.run["fingerprint"].items())
      if (s.run["fingerprint"].value(k, json()) != v)
        problems.push_back(fmt::format("{} differs from {} in its {} ({} vs {})", s.dir.string(), first.dir.string(), k,
                                       s.run["fingerprint"].value(k, json()).dump(), v.dump()));
    by_index[s.shard.value("index", 0)].push_back(s.dir.string());
  }
  for (const auto &[i, dirs] : by_index)
    if (dirs.size() > 1)
      problems.push_back(fmt::format("shard {}/{} is given {} times: {}", i + 1, n, dirs.size(), fmt::join(dirs, ", ")));
  for (int i = 0; i < n; ++i)
    if (by_index.count(i) == 0) problems.push_back(fmt::format("shard {}/{} is missing", i + 1, n));
  if (!problems.empty()) {
    std::vector<Diagnostic> d;
    for (auto &p : problems) d.push_back({{"merge", 0, 0}, p});
    throw ConfigError(d);
  }
  std::sort(shards.begin(), shards.end(),
            [](const ShardFolder &a, const ShardFolder &b) { return a.shard.value("index", 0) < b.shard.value("index", 0); });
  return n;
}

// The pipeline as the shards ran it, with the same sinks (the default report included when they had it),
// planned against this machine's plugins and data set; m.fingerprint is the one computed here.
void plan_as_shards_ran(const ShardFolder &first, const std::vector<std::string> &plugin_dirs, MergePlan &m) {
  m.p = parse_pipeline(run_folder::pipeline_text(first.dir), first.shard.value("pipeline_file", std::string()));
  for (const auto &d : plugin_search_path(plugin_dirs)) m.reg.load_directory(d);
  if (first.shard.value("report", false)) add_default_report(m.p, m.reg);
  m.plan = build_plan(m.p, m.reg, read_dataset_columns(m.p));
  m.fingerprint = fingerprint(m.p, m.plan, first.shard.value("limit", -1LL));
  for (const auto &[k, v] : first.run["fingerprint"].items())
    if (m.fingerprint.value(k, json()) != v)
      refuse(k == "dataset" ? m.p.dataset.path.string() : "merge",
             fmt::format("the shards' {} differs from what this machine has ({} vs {}): the merge re-reads the data set "
                         "and re-runs the sinks, so it needs the same data set, plugins and engine as the shards",
                         k, v.dump(), m.fingerprint.value(k, json()).dump()));
}

// What run.json says of the shards: one provenance entry each (with the nodes' failures), and the LLM
// statistics, costs and seconds summed over them.
struct ShardTotals {
  json provenance = json::array();
  json llm = json::object();
  json cost = json::object();
  double cpu_seconds = 0;
};

ShardTotals shard_totals(const std::vector<ShardFolder> &shards) {
  ShardTotals t;
  for (const auto &s : shards) {
    json e = {{"folder", fs::absolute(s.dir).string()},
              {"shard", s.shard},
              {"records", s.run.value("records", 0)},
              {"failed_records", s.run.value("failed_records", 0)},
              {"seconds", s.run.value("seconds", 0.0)},
              {"peak_rss_mb", s.run.value("peak_rss_mb", 0.0)}};
    if (s.run.contains("nodes")) {
      json failures = json::object();
      for (const auto &[id, st] : s.run["nodes"].items())
        if (st.value("failed", 0) + st.value("skipped", 0) > 0)
          failures[id] = {{"failed", st.value("failed", 0)}, {"skipped", st.value("skipped", 0)},
                          {"first_error", st.value("first_error", std::string())}};
      e["failures"] = failures;
    }
    if (s.run.contains("llm")) {
      e["llm"] = s.run["llm"];
      // Counts add up; a provider's rate figures (concurrency, window, what held it) are each shard's own and
      // stay in its provenance entry: summed they would mean nothing.
      json counts = s.run["llm"];
      if (counts.is_object())
        for (auto &[provider, st] : counts.items())
          if (st.is_object()) st.erase("rate");
      sum_into(t.llm, counts);
    }
    if (s.run.contains("cost") && s.run["cost"].is_object()) {  // summed: every shard's calls, per provider and node
      e["cost_usd"] = s.run["cost"].value("cost_usd", 0.0);
      run_folder::sum_cost_json(t.cost, s.run["cost"]);
    }
    t.cpu_seconds += s.run.value("seconds", 0.0);
    t.provenance.push_back(e);
  }
  return t;
}

}  // namespace

ShardSet read_shards(const std::vector<std::string> &folders) {
  ShardSet set;
  for (const auto &f : folders) set.shards.push_back(read_shard(f));
  set.count = check_one_run(set.shards);
  return set;
}

void plan_merge(const ShardSet &set, const std::vector<std::string> &plugin_dirs, MergePlan &m) {
  plan_as_shards_ran(set.shards.front(), plugin_dirs, m);
  const ShardTotals totals = shard_totals(set.shards);
  for (const auto &s : set.shards) m.journals.push_back(run_folder::shard_journal(s.dir));
  m.summary = {{"fingerprint", m.fingerprint},
               {"merged", {{"count", set.count}, {"merged_at", now_iso()}, {"shard_seconds_total", totals.cpu_seconds},
                           {"shards", totals.provenance}}}};
  if (!totals.llm.empty()) m.summary["llm"] = totals.llm;
  if (!totals.cost.empty()) m.summary["cost"] = totals.cost;
}

std::string journal_count_mismatch(const ShardSet &set, std::size_t merged) {
  const std::vector<ShardFolder> &shards = set.shards;
  long long expected = 0;
  for (const auto &s : shards) expected += s.run.value("records", 0LL);
  if (static_cast<long long>(merged) == expected) return "";
  std::vector<std::string> bad;
  for (const auto &s : shards) {
    std::ifstream jin(run_folder::shard_journal(s.dir), std::ios::binary);
    std::string line;
    long long lines = 0;
    while (std::getline(jin, line))
      if (!line.empty() && (line[0] == 'D' || line[0] == 'F')) ++lines;
    const long long counted = s.run.value("records", 0LL);
    if (lines != counted)
      bad.push_back(fmt::format("shard {} ({}) has {} records in {} but its run.json counts {}", s.shard.value("label", std::string()),
                                s.dir.string(), lines, run_folder::shard_journal(s.dir).filename().string(), counted));
  }
  return fmt::format(
      "the shards' journals gave {} records where their run.json files count {}{}{}; nothing was written. Rerun a "
      "damaged shard (evalgraph run PIPELINE --shard I/N) and merge again",
      merged, expected, bad.empty() ? "" : ": ", fmt::join(bad, "; "));
}

}  // namespace evalgraph::shard
