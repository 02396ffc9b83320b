// The dry run of `evalgraph estimate`: see estimate_entry.h and docs/cost.md.
#include "entry/estimate_entry.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <map>
#include <mutex>
#include <unordered_set>

#include "exec/executor.h"
#include "exec/host.h"
#include "llm/tokens.h"

namespace evalgraph::estimate {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// An answer of unknown length (no max_tokens, nothing cached to learn from) is taken as this many tokens.
constexpr double kAssumedOutputTokens = 256;

// What the dry run saw of one node's calls to one provider.
struct Seen {
  std::uint64_t calls = 0, cached = 0, to_call = 0, tainted_hits = 0;
  std::uint64_t prompt_tokens = 0, prompt_tokens_to_call = 0;
  std::uint64_t hit_completion_tokens = 0, hit_completion_n = 0;
  double hit_latency_sum = 0;
  std::uint64_t hit_latency_n = 0;
  std::uint64_t max_tokens_sum = 0, max_tokens_n = 0;  // calls to make that set max_tokens
  std::unordered_set<std::uint64_t> records;           // (record, replication) that made a call here
};

std::uint64_t record_key(const eg_call *c) {
  return c == nullptr
             ? 0
             : (static_cast<std::uint64_t>(c->record_index) << 10) | static_cast<std::uint64_t>(c->replication);
}

// The nodes an estimate runs: those that call an LLM and every node they read from (directly or not); the
// others (and the sinks) make no call and change no request.
Plan llm_part(const Plan &plan) {
  std::vector<bool> keep(plan.nodes.size(), false);
  for (std::size_t k = plan.nodes.size(); k-- > 0;) {
    if (plan.nodes[k].type->has(EG_FLAG_USES_LLM)) keep[k] = true;
    if (keep[k])
      for (std::size_t u : plan.nodes[k].upstream) keep[u] = true;
  }
  Plan out;
  std::vector<std::size_t> at(plan.nodes.size(), 0);
  for (std::size_t k = 0; k < plan.nodes.size(); ++k) {
    if (!keep[k]) continue;
    at[k] = out.nodes.size();
    PlannedNode pn = plan.nodes[k];
    for (auto &u : pn.upstream) u = at[u];
    out.nodes.push_back(std::move(pn));
  }
  out.dataset_columns = plan.dataset_columns;
  out.group_by = plan.group_by;
  out.order_by = plan.order_by;
  out.described = plan.described;  // (what PlannedNode::type points to for nodes that describe themselves)
  return out;
}

json num_or_null(double v) { return v >= 0 ? json(v) : json(nullptr); }

// What the dry run's calls showed, per node and provider; guarded by `mu` (the LLM threads report at once).
struct Observed {
  std::mutex mu;
  std::map<std::string, std::map<std::string, Seen>> seen;  // node -> provider
  std::unordered_set<std::uint64_t> tainted;                // records with an answer the cache did not have
};

// Counts one call of the dry run: cached (with the answer's tokens and latency) or to make (with its prompt
// tokens and max_tokens). A record with an answer the cache did not have is tainted: its later calls are
// asked with a dry answer in them, so their cache hits do not count.
void count_call(Observed &o, const llm::TokenCounter &tc, const eg_call *call, const std::string &provider,
                const json &req, const llm::CallResult &r) {
  const std::string node = (call != nullptr && call->node_id != nullptr) ? *call->node_id : std::string("(host)");
  const std::uint64_t rk = record_key(call);
  std::uint64_t max_tokens = 0;
  for (const char *k : {"max_tokens", "max_completion_tokens"})
    if (auto it = req.find(k); it != req.end() && it->is_number_unsigned()) max_tokens = it->get<std::uint64_t>();
  std::lock_guard lk(o.mu);
  Seen &s = o.seen[node][provider];
  ++s.calls;
  s.records.insert(rk);
  const bool from_cache = r.ok && r.cache_hit && o.tainted.count(rk) == 0;
  // A hit's prompt tokens: what the server counted when it answered; else counted here.
  std::uint64_t prompt = r.usage.prompt_tokens;
  if (!r.dry && (!r.cache_hit || prompt == 0 || !from_cache))
    prompt = req.contains("messages") ? tc.chat_prompt_tokens(req) : tc.embedding_tokens(req);
  s.prompt_tokens += prompt;
  if (from_cache) {
    ++s.cached;
    if (r.usage.completion_tokens > 0) {
      s.hit_completion_tokens += r.usage.completion_tokens;
      ++s.hit_completion_n;
    }
    if (r.fetched_latency_s >= 0) {
      s.hit_latency_sum += r.fetched_latency_s;
      ++s.hit_latency_n;
    }
    return;
  }
  if (r.cache_hit) ++s.tainted_hits;
  ++s.to_call;
  s.prompt_tokens_to_call += prompt;
  if (max_tokens > 0) {
    s.max_tokens_sum += max_tokens;
    ++s.max_tokens_n;
  }
  if (r.dry) o.tainted.insert(rk);
}

// Calls, tokens and cost, summed per provider into a node and per node into the whole run.
struct Totals {
  double calls = 0, cached = 0, to_call = 0, prompt = 0, prompt_to_call = 0, out_low = 0, out_high = 0, cost_low = 0,
         cost_high = 0, extra = 0;
  void add(const Totals &t) {
    calls += t.calls;
    cached += t.cached;
    to_call += t.to_call;
    prompt += t.prompt;
    prompt_to_call += t.prompt_to_call;
    out_low += t.out_low;
    out_high += t.out_high;
    cost_low += t.cost_low;
    cost_high += t.cost_high;
    extra += t.extra;
  }
  void put(json &j) const {
    j.update({{"calls", calls},
              {"cached", cached},
              {"to_call", to_call},
              {"prompt_tokens", prompt},
              {"prompt_tokens_to_call", prompt_to_call},
              {"output_tokens_low", out_low},
              {"output_tokens_high", out_high},
              {"cost_usd_low", cost_low},
              {"cost_usd_high", cost_high}});
  }
};

// Per provider over all nodes: the calls to make and how long they keep it busy (calls x latency).
struct ProvTotals {
  double to_call = 0, busy_s = 0;
  bool latency_known = true;
};

// Output tokens of a node's calls to make, low and high: the cache's mean for this node (else for the
// provider's model), bounded by max_tokens where the requests set it; `basis` says which.
void output_tokens(const Seen &s, double extra, double c_to_call, const std::string &prov, json &observed, double &low,
                   double &high, std::string &basis) {
  double mean_out = -1;
  if (s.hit_completion_n > 0) {
    mean_out = static_cast<double>(s.hit_completion_tokens) / static_cast<double>(s.hit_completion_n);
    basis = fmt::format("mean of this node's {} cached answers", s.hit_completion_n);
  } else if (observed["mean_completion_tokens"].is_number()) {
    mean_out = observed["mean_completion_tokens"].get<double>();
    basis = fmt::format("mean of the cache's {} answers of {}", observed["answers"].get<long long>(), prov);
  }
  const double with_max =
      static_cast<double>(s.max_tokens_n) +
      (s.calls ? extra * static_cast<double>(s.max_tokens_n) / std::max<double>(1, static_cast<double>(s.to_call)) : 0);
  const double mean_max =
      s.max_tokens_n ? static_cast<double>(s.max_tokens_sum) / static_cast<double>(s.max_tokens_n) : 0.0;
  const double without_max = std::max(0.0, c_to_call - with_max);
  if (mean_out >= 0) {
    low = with_max * std::min(mean_out, mean_max) + without_max * mean_out;
    high = with_max * mean_max + without_max * mean_out;
  } else {
    low = 0;
    high = with_max * mean_max + without_max * kAssumedOutputTokens;
    basis = without_max > 0
                ? fmt::format("nothing cached and no max_tokens: {} tokens assumed per answer", kAssumedOutputTokens)
                : "max_tokens (nothing cached: low bound 0)";
  }
  if (s.max_tokens_n > 0) basis += fmt::format("; max_tokens {} on {} calls", mean_max, s.max_tokens_n);
}

// The estimate's inputs shared by every node: the LLM service, the prompt tokens' error band, and what the
// cache observed of each provider (read once per provider).
struct Context {
  const llm::LlmService *llm;
  double band;
  std::map<std::string, json> observed;
  std::map<std::string, ProvTotals> prov_tot;
  bool all_priced = true;

  json &observed_of(const std::string &prov) {
    if (!observed.count(prov)) observed[prov] = llm ? llm->cache_observed(prov) : json{{"answers", 0}};
    return observed[prov];
  }
};

// One node's calls to one provider: what the dry run saw, plus `missing_records` records that did not get as
// far as their call, at this provider's calls per record. Fills `entry` and returns the sums.
Totals estimate_provider(Context &cx, const std::string &prov, const Seen &s, double missing_records, json &entry) {
  const llm::ProviderConfig *pc = cx.llm ? cx.llm->provider(prov) : nullptr;
  const double per_record =
      s.records.empty() ? 1.0 : static_cast<double>(s.calls) / static_cast<double>(s.records.size());
  Totals t;
  t.extra = std::max(0.0, missing_records) * per_record;
  const double mean_prompt = s.calls ? static_cast<double>(s.prompt_tokens) / static_cast<double>(s.calls) : 0.0;
  t.calls = static_cast<double>(s.calls) + t.extra;
  t.cached = static_cast<double>(s.cached);
  t.to_call = static_cast<double>(s.to_call) + t.extra;
  t.prompt = static_cast<double>(s.prompt_tokens) + t.extra * mean_prompt;
  t.prompt_to_call = static_cast<double>(s.prompt_tokens_to_call) + t.extra * mean_prompt;
  json &observed = cx.observed_of(prov);
  std::string out_basis;
  output_tokens(s, t.extra, t.to_call, prov, observed, t.out_low, t.out_high, out_basis);
  json price = nullptr;
  if (pc != nullptr && pc->price.set) {
    price = pc->price.to_json();
    t.cost_low =
        (t.prompt_to_call * (1 - cx.band) * pc->price.input_per_mtok + t.out_low * pc->price.output_per_mtok) / 1e6;
    t.cost_high =
        (t.prompt_to_call * (1 + cx.band) * pc->price.input_per_mtok + t.out_high * pc->price.output_per_mtok) / 1e6;
  } else {
    cx.all_priced = false;
  }
  // Expected latency per call: this node's cached answers, else the provider's.
  double lat = s.hit_latency_n
                   ? s.hit_latency_sum / static_cast<double>(s.hit_latency_n)
                   : (observed["mean_latency_s"].is_number() ? observed["mean_latency_s"].get<double>() : -1);
  auto &pt = cx.prov_tot[prov];
  pt.to_call += t.to_call;
  if (lat >= 0)
    pt.busy_s += t.to_call * lat;
  else if (t.to_call > 0)
    pt.latency_known = false;
  entry = json::object();
  t.put(entry);
  entry.update({{"cached", s.cached},
                {"extrapolated_calls", t.extra},
                {"cache_hits_after_a_missing_answer", s.tainted_hits},
                {"output_tokens_basis", out_basis},
                {"mean_latency_s", num_or_null(lat)},
                {"price", price}});
  return t;
}

// One LLM node: its providers' estimates, and the records that never reached its call counted in.
Totals estimate_node(Context &cx, const PlannedNode &pn, const NodeStats &ns, std::size_t records,
                     std::map<std::string, Seen> &seen_here, const std::string &default_provider, json &nj) {
  nj = {{"uses", pn.type->name}};
  if (seen_here.empty()) {
    nj["note"] = "no call seen in the dry run (every record skipped or failed before its call)";
    if (!default_provider.empty()) seen_here[default_provider];  // counted as one call per record below
  }
  std::size_t called_records = 0;
  for (const auto &[prov, s] : seen_here) called_records = std::max(called_records, s.records.size());
  // Records whose node did not run in the dry run (an upstream answer the cache did not have made an
  // upstream node fail or skip): they need calls too, as many as the records that ran.
  const double missing_records =
      std::min<double>(static_cast<double>(ns.failed + ns.skipped), static_cast<double>(records) - called_records);
  json per = json::object();
  Totals n;
  for (auto &[prov, s] : seen_here) n.add(estimate_provider(cx, prov, s, missing_records, per[prov]));
  n.put(nj);
  nj["extrapolated_calls"] = n.extra;
  nj["providers"] = per;
  return n;
}

// Wall time: each provider works through its calls max_in_flight at a time (and no faster than its
// requests_per_minute); providers work side by side, so the slowest one sets the time. -1 when a provider
// with calls to make has no latency known.
double wall_time(Context &cx, json &providers) {
  double wall = 0;
  bool wall_known = true;
  for (const auto &[prov, pt] : cx.prov_tot) {
    const llm::ProviderConfig *pc = cx.llm ? cx.llm->provider(prov) : nullptr;
    const int mif = pc ? pc->max_in_flight : 8;
    double w = pt.busy_s / std::max(1, mif);
    if (pc != nullptr && pc->requests_per_minute > 0) w = std::max(w, pt.to_call * 60.0 / pc->requests_per_minute);
    json pj = {{"to_call", pt.to_call},
               {"max_in_flight", mif},
               {"wall_time_s", pt.latency_known ? json(w) : json(nullptr)},
               {"cache", cx.observed.count(prov) ? cx.observed[prov] : json(nullptr)}};
    if (pc != nullptr) pj["price"] = pc->price.set ? pc->price.to_json() : json(nullptr);
    providers[prov] = pj;
    if (!pt.latency_known) wall_known = false;
    wall = std::max(wall, w);
  }
  return wall_known ? wall : -1;
}

}  // namespace

json estimate(const Pipeline &p, const Plan &full_plan, const Options &opt) {
  const auto t0 = std::chrono::steady_clock::now();
  Plan plan = llm_part(full_plan);
  char tmpl[] = "/tmp/evalgraph-estimate-XXXXXX";
  const char *tmp = mkdtemp(tmpl);
  if (tmp == nullptr) throw std::runtime_error("estimate: cannot create a temporary folder");
  const fs::path dir(tmp);
  struct Cleanup {
    fs::path d;
    ~Cleanup() {
      std::error_code ec;
      fs::remove_all(d, ec);
    }
  } cleanup{dir};

  auto llm = make_llm_service(p.providers, opt.no_cache, opt.cache_path, dir, /*dry_run=*/true);
  HostServices host(llm, p.default_provider, p.embedding_provider);
  host.set_min_stderr_level(EG_LOG_ERROR);
  auto tc = llm ? llm->token_counter() : llm::TokenCounter::approximate();
  Observed seen;
  host.set_call_observer([&](const eg_call *call, const std::string &provider, const json &req,
                             const llm::CallResult &r) { count_call(seen, *tc, call, provider, req, r); });

  RunOptions ro;
  ro.run_dir = dir / "run";
  ro.journal = false;
  ro.jobs = std::max(1, opt.jobs);
  ro.limit = opt.limit;
  // A dry call returns at once: no thread waits on the network, so a few LLM threads keep the CPUs busy (the
  // run's windows of max_in_flight threads would only add switches between them).
  ro.llm_concurrency = std::max(2, ro.jobs);
  RunResult rr = run_plan(p, plan, host, ro);

  // The error band of the prompt tokens: none when exact; otherwise the approximation's measured mean error
  // per text (the error of a total over many texts was smaller: see approximation_error's total_pct).
  const json err = tc->approximation_error();
  Context cx{llm.get(), err.is_object() ? err.value("mean_abs_pct", 0.0) / 100.0 : 0.0, {}, {}, true};
  json nodes = json::object(), providers = json::object();
  Totals all;
  for (const auto &pn : plan.nodes) {
    if (!pn.type->has(EG_FLAG_USES_LLM)) continue;
    const std::string &id = pn.decl->id;
    all.add(estimate_node(cx, pn, rr.nodes[id], rr.records, seen.seen[id], p.default_provider, nodes[id]));
  }
  const double wall = wall_time(cx, providers);
  json out = {{"pipeline", p.name},
              {"records", rr.records},  // replications counted
              {"replications", p.replications},
              {"all_providers_priced", cx.all_priced},
              {"wall_time_s", wall >= 0 ? json(wall) : json(nullptr)},
              {"nodes", nodes},
              {"providers", providers},
              {"tokenizer",
               {{"counter", tc->describe()},
                {"exact", tc->exact()},
                {"approximation_error", err},
                {"prompt_band_pct", cx.band * 100}}},
              {"cache", llm && !llm->cache_path().empty() ? json(llm->cache_path()) : json(nullptr)},
              {"seconds", std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()}};
  all.put(out);
  if (wall < 0)
    out["wall_time_note"] = "no latency known for a provider with calls to make (nothing of it cached with a latency)";
  return out;
}

}  // namespace evalgraph::estimate
