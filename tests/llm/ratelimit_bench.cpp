// eg-ratelimit-bench: the LLM client against the loopback server's provider-like limits (provider_limits.h), each
// case with three clients side by side: the default provider settings (adaptive window, ceiling 256), the old
// fixed default window (adaptive: false, max_in_flight: 8) and a fixed window of 64. Prints, per run, the
// throughput against what the limits allow, the share of requests refused (429), the median latency against the
// unloaded one, and for the cut case how fast the throughput came back. Run through bench/ratelimit_bench.sh.
//   eg-ratelimit-bench [--cases abcd] [--clients adaptive,fixed8,fixed64] [--latency-ms 100] [--scale 1]
//                      [--max-s 60] [--capacity 24] [--json FILE]
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <fstream>
#include <iostream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cli_args.h"
#include "llm/llm_service.h"
#include "test_llm_server.h"

using evalgraph::llm::CacheOptions;
using evalgraph::llm::LlmService;
using evalgraph::llm::ProviderConfig;
using evalgraph::testing::ProviderLimits;
using evalgraph::testing::ServerOptions;
using evalgraph::testing::TestLlmServer;
using Json = nlohmann::json;

namespace {

constexpr int kMaxTokens = 40;

struct Case {
  char id;
  std::string what;
  ProviderLimits limits;
  int calls;
};

struct Client {
  std::string name;
  bool adaptive;
  int max_in_flight;
};

// The tokens the server counts for a body (provider_limits.h): characters / 4 rounded up, 4 a message, max_tokens.
double server_tokens(const std::string &prompt) { return std::ceil(prompt.size() / 4.0) + 4 + kMaxTokens; }

std::string prompt(int i) { return fmt::format("bench question number {} about the weather in a small town", i); }

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Calls per second the limits allow at time t (s from the first request).
double allowed_at(const ProviderLimits &l, double latency_s, double tokens_per_call, double t) {
  const double f = l.cut_at_s >= 0 && t >= l.cut_at_s && t < l.cut_at_s + l.cut_for_s ? l.cut_factor : 1.0;
  double a = 1e18;
  if (l.requests_per_minute > 0) a = std::min(a, l.requests_per_minute / 60.0 * f);
  if (l.tokens_per_minute > 0) a = std::min(a, l.tokens_per_minute / 60.0 * f / tokens_per_call);
  if (l.capacity > 0) a = std::min(a, l.capacity / latency_s);
  return a;
}

// (d): seconds after the limits came back until a 1 s window of accepted requests reached 90 % of the restored
// limit (-1: never), and the share refused in the 10 s after the cut.
Json cut_figures(const std::vector<evalgraph::testing::RecordedRequest> &reqs, const ProviderLimits &l,
                 double allowed_full) {
  if (reqs.empty() || l.cut_at_s < 0) return nullptr;
  const double t0 = reqs.front().t_s, back = l.cut_at_s + l.cut_for_s;
  std::vector<double> ok_t;
  std::size_t in_cut = 0, refused_in_cut = 0;
  for (const auto &r : reqs) {
    const double t = r.t_s - t0;
    if (r.fault != "429") ok_t.push_back(t);
    if (t >= l.cut_at_s && t < l.cut_at_s + 10) {
      ++in_cut;
      refused_in_cut += r.fault == "429";
    }
  }
  std::sort(ok_t.begin(), ok_t.end());
  double recovered = -1;
  for (double s = back; s < back + 30 && recovered < 0; s += 0.1) {
    auto lo = std::lower_bound(ok_t.begin(), ok_t.end(), s), hi = std::lower_bound(ok_t.begin(), ok_t.end(), s + 1.0);
    if (hi == ok_t.end()) break;
    if (static_cast<double>(hi - lo) >= 0.9 * allowed_full) recovered = s + 1.0 - back;
  }
  return {{"recovered_s", recovered >= 0 ? Json(recovered) : Json(nullptr)},
          {"refused_share_10s_after_cut", in_cut ? double(refused_in_cut) / in_cut : 0.0}};
}

Json run_one(const Case &c, const Client &cl, int latency_ms, double max_s) {
  ServerOptions so;
  so.latency_ms = latency_ms;
  so.threads = 2;
  so.limits = c.limits;
  TestLlmServer srv(so);
  ProviderConfig p;
  p.name = "bench";
  p.base_url = srv.base_url();
  p.model = "bench-model";
  p.timeout_s = 30;
  p.adaptive = cl.adaptive;
  p.max_in_flight = cl.max_in_flight;
  std::vector<Json> bodies;
  double tokens = 0;
  for (int i = 0; i < c.calls; ++i) {
    bodies.push_back(
        {{"messages", Json::array({{{"role", "user"}, {"content", prompt(i)}}})}, {"max_tokens", kMaxTokens}});
    tokens += server_tokens(prompt(i));
  }
  const double tokens_per_call = tokens / c.calls, latency_s = latency_ms / 1000.0;
  LlmService svc({p}, CacheOptions{false, ""});
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  std::thread watchdog([&] {  // a run past max_s is cut: its throughput is what it did until then
    std::unique_lock lk(mu);
    if (!cv.wait_for(lk, std::chrono::duration<double>(max_s), [&] { return done; })) svc.cancel();
  });
  const auto t0 = std::chrono::steady_clock::now();
  auto rs = svc.chat_batch("bench", bodies, 0);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  {
    std::lock_guard lk(mu);
    done = true;
  }
  cv.notify_all();
  watchdog.join();
  int ok = 0;
  for (const auto &r : rs) ok += r.ok;
  const auto reqs = srv.requests();
  const double refused = static_cast<double>(srv.refused_by_limits());
  // What the limits allowed over the run: each bucket's size (full at the start) plus its refill (cut where it was
  // cut) over the time from the first request, in calls; the capacity's K/L over that time.
  const double span = wall;
  double req_total = c.limits.requests_per_minute / 60.0 * c.limits.burst_s;
  double tok_total = c.limits.tokens_per_minute / 60.0 * c.limits.burst_s;
  for (double t = 0; t < span; t += 0.01) {
    const double f = c.limits.cut_at_s >= 0 && t >= c.limits.cut_at_s && t < c.limits.cut_at_s + c.limits.cut_for_s
                         ? c.limits.cut_factor
                         : 1.0;
    req_total += c.limits.requests_per_minute / 60.0 * f * std::min(0.01, span - t);
    tok_total += c.limits.tokens_per_minute / 60.0 * f * std::min(0.01, span - t);
  }
  double allowed = 1e18;
  if (c.limits.requests_per_minute > 0) allowed = std::min(allowed, req_total);
  if (c.limits.tokens_per_minute > 0) allowed = std::min(allowed, tok_total / tokens_per_call);
  if (c.limits.capacity > 0) allowed = std::min(allowed, c.limits.capacity / latency_s * span);
  const Json st = svc.stats_json()["bench"];
  Json out = {{"case", std::string(1, c.id)},
              {"client", cl.name},
              {"calls", c.calls},
              {"ok", ok},
              {"wall_s", wall},
              {"throughput_per_s", ok / wall},
              {"allowed_per_s", allowed / wall},
              {"throughput_share", ok / allowed},
              {"requests", reqs.size()},
              {"refused", refused},
              {"refused_share", reqs.empty() ? 0.0 : refused / static_cast<double>(reqs.size())},
              {"median_latency_ms", median(srv.answer_latencies_ms())},
              {"unloaded_latency_ms", latency_ms},
              {"max_concurrency", srv.max_concurrency()},
              {"rate", st["rate"]},
              {"timeline", svc.rate_timelines_json()["bench"]}};
  if (c.limits.cut_at_s >= 0)
    out["cut"] = cut_figures(reqs, c.limits, allowed_at(c.limits, latency_s, tokens_per_call, 0));
  Json per_second = Json::array();  // [requests, refused] in each second from the first request
  for (const auto &r : reqs) {
    const auto sec = static_cast<std::size_t>(r.t_s - reqs.front().t_s);
    while (per_second.size() <= sec) per_second.push_back({0, 0});
    per_second[sec][0] = per_second[sec][0].get<int>() + 1;
    if (r.fault == "429") per_second[sec][1] = per_second[sec][1].get<int>() + 1;
  }
  out["per_second"] = per_second;
  return out;
}

std::string verdict(const Json &r) {
  const char c = r["case"].get<std::string>()[0];
  const double share = r["throughput_share"].get<double>(), refused = r["refused_share"].get<double>();
  const double lat = r["median_latency_ms"].get<double>() / r["unloaded_latency_ms"].get<double>();
  bool met = true;
  if (c == 'a') met = share >= 0.9 && refused <= 0.02;
  if (c == 'b') met = share >= 0.9 && refused <= 0.10;
  if (c == 'c') met = share >= 0.9 && lat <= 1.3;
  if (c == 'd') {
    const Json &cut = r["cut"];
    met = cut.is_object() && !cut["recovered_s"].is_null() && cut["recovered_s"].get<double>() <= 10 &&
          cut["refused_share_10s_after_cut"].get<double>() <= 0.05;
  }
  return met ? "meets" : "misses";
}

void print(const Json &r) {
  std::string extra;
  if (r.contains("cut") && r["cut"].is_object())
    extra =
        fmt::format("  back in {} s, 429 after cut {:.1f} %",
                    r["cut"]["recovered_s"].is_null() ? std::string("never")
                                                      : fmt::format("{:.1f}", r["cut"]["recovered_s"].get<double>()),
                    100 * r["cut"]["refused_share_10s_after_cut"].get<double>());
  const Json &rate = r["rate"];
  std::cout
      << fmt::format(
             "  {:<9} {:>6.1f}/s of {:>6.1f}/s = {:>5.1f} %   429 {:>5.1f} %   median latency {:>6.1f} ms = {:.2f}x   "
             "conc med/max {}/{}  held by {}  {}{}  [{} of {} ok, {:.1f} s]\n",
             r["client"].get<std::string>(), r["throughput_per_s"].get<double>(), r["allowed_per_s"].get<double>(),
             100 * r["throughput_share"].get<double>(), 100 * r["refused_share"].get<double>(),
             r["median_latency_ms"].get<double>(),
             r["median_latency_ms"].get<double>() / r["unloaded_latency_ms"].get<double>(),
             rate["concurrency"]["median"].dump(), rate["concurrency"]["max"].dump(), rate["limit"].get<std::string>(),
             r["client"] == "adaptive" ? verdict(r) : "", extra, r["ok"].get<int>(), r["calls"].get<int>(),
             r["wall_s"].get<double>())
      << std::flush;
}

}  // namespace

int main(int argc, char **argv) {
  std::string cases = "abcd", clients_arg = "adaptive,fixed8,fixed64", json_out;
  int latency_ms = 100;
  double scale = 1, max_s = 60;
  int capacity = 24;  // case (c)'s K
  for (evalgraph::testing::CliArgs args(argc, argv); args.next();) {
    const std::string &a = args.flag();
    if (a == "--cases")
      cases = args.value();
    else if (a == "--clients")
      clients_arg = args.value();
    else if (a == "--latency-ms")
      latency_ms = std::stoi(args.value());
    else if (a == "--scale")
      scale = std::stod(args.value());
    else if (a == "--max-s")
      max_s = std::stod(args.value());
    else if (a == "--capacity")
      capacity = std::stoi(args.value());
    else if (a == "--json")
      json_out = args.value();
    else {
      std::cerr << "usage: eg-ratelimit-bench [--cases abcd] [--clients adaptive,fixed8,fixed64] [--latency-ms N] "
                   "[--scale F] [--max-s S] [--capacity K] [--json FILE]\n";
      return 2;
    }
  }
  // The limits: a few thousand requests a minute, tokens the tighter one in (a); each case ~20-30 s at its limit.
  ProviderLimits a;
  a.requests_per_minute = 3000;
  a.tokens_per_minute = 120000;
  a.burst_s = 2;
  ProviderLimits b = a;
  b.headers = false;
  ProviderLimits c;
  c.capacity = capacity;
  ProviderLimits d = a;
  d.cut_at_s = 8;
  d.cut_for_s = 8;
  const double s = scale;
  const std::vector<Case> all = {
      {'a', "token buckets (3000 requests/min, 120k tokens/min, 2 s burst), 429 + x-ratelimit-* headers", a,
       int(800 * s)},
      {'b', "the same, 429 + retry-after only", b, int(800 * s)},
      {'c', "capacity " + std::to_string(capacity) + ", queueing beyond it, never refusing", c,
       int(3600 * s * capacity / 24)},
      {'d', "(a) with its limits halved from 8 s to 16 s", d, int(850 * s)}};
  std::vector<Client> clients;
  std::stringstream ss(clients_arg);
  for (std::string n; std::getline(ss, n, ',');) {
    if (n == "adaptive")
      clients.push_back({n, true, 256});
    else if (n == "fixed8")
      clients.push_back({n, false, 8});
    else if (n == "fixed64")
      clients.push_back({n, false, 64});
    else {
      std::cerr << "unknown client " << n << " (adaptive, fixed8, fixed64)\n";
      return 2;
    }
  }
  Json results = Json::array();
  bool all_met = true;
  for (const auto &cs : all) {
    if (cases.find(cs.id) == std::string::npos) continue;
    std::cout << fmt::format("({}) {}: {} calls, {} ms latency\n", cs.id, cs.what, cs.calls, latency_ms);
    for (const auto &cl : clients) {
      Json r = run_one(cs, cl, latency_ms, max_s);
      print(r);
      if (cl.name == "adaptive") all_met = all_met && verdict(r) == "meets";
      results.push_back(std::move(r));
    }
  }
  if (!json_out.empty()) std::ofstream(json_out) << results.dump(2) << "\n";
  return all_met ? 0 : 1;
}
