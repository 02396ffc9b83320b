// eg-llm-bench: N chat calls through LlmService to an OpenAI-compatible server (by default the scripted
// loopback server, in-process), M in flight; then the same calls again with a warm cache.
//   eg-llm-bench [--url http://127.0.0.1:PORT/v1] [--calls 2000] [--in-flight 64] [--latency-ms 100]
//                [--cache PATH] [--mode batch|threads]
// With --url the server runs in another process (so CPU time is the client's alone) and its own request
// count is read from GET <url without /v1>/_stats.
#include <curl/curl.h>
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli_args.h"
#include "llm/llm_service.h"
#include "test_llm_server.h"

using evalgraph::llm::CacheOptions;
using evalgraph::llm::CallResult;
using evalgraph::llm::LlmService;
using evalgraph::llm::ProviderConfig;
using Json = nlohmann::json;

namespace {

double cpu_seconds() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return double(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) + double(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

size_t collect(char* p, size_t s, size_t n, void* ud) {
  static_cast<std::string*>(ud)->append(p, s * n);
  return s * n;
}

long server_requests(const std::string& base_url) {
  std::string root = base_url;
  if (root.size() >= 3 && root.compare(root.size() - 3, 3, "/v1") == 0) root.resize(root.size() - 3);
  CURL* c = curl_easy_init();
  std::string out;
  std::string url = root + "/_stats";
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, collect);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &out);
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 5000L);
  CURLcode rc = curl_easy_perform(c);
  curl_easy_cleanup(c);
  if (rc != CURLE_OK) return -1;
  auto j = Json::parse(out, nullptr, false);
  return j.is_object() && j.contains("requests") ? j["requests"].get<long>() : -1;
}

struct RunResult {
  double wall = 0, cpu = 0;
  int ok = 0, hits = 0;
  long http = 0;
  std::string first_error;
};

RunResult run_once(const ProviderConfig& p, const std::string& cache, const std::vector<Json>& bodies,
                   const std::string& mode, int in_flight) {
  RunResult rr;
  LlmService svc({p}, CacheOptions{true, cache});
  double c0 = cpu_seconds();
  auto t0 = std::chrono::steady_clock::now();
  std::vector<CallResult> rs(bodies.size());
  if (mode == "threads") {
    std::vector<std::thread> ts;
    for (int t = 0; t < in_flight; ++t)
      ts.emplace_back([&, t] {
        for (std::size_t i = t; i < bodies.size(); i += in_flight) rs[i] = svc.chat("bench", bodies[i], 0);
      });
    for (auto& t : ts) t.join();
  } else {
    rs = svc.chat_batch("bench", bodies, 0);
  }
  rr.wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  rr.cpu = cpu_seconds() - c0;
  for (auto& r : rs) {
    rr.ok += r.ok;
    rr.hits += r.cache_hit;
    if (!r.ok && rr.first_error.empty()) rr.first_error = r.error;
  }
  rr.http = svc.stats_json()["bench"]["http_requests"].get<long>();
  return rr;
}

}  // namespace

int main(int argc, char** argv) {
  std::string url, cache, mode = "batch";
  int calls = 2000, in_flight = 64, latency_ms = 100;
  for (evalgraph::testing::CliArgs args(argc, argv); args.next();) {
    const std::string &a = args.flag();
    if (a == "--url") url = args.value();
    else if (a == "--calls") calls = std::stoi(args.value());
    else if (a == "--in-flight") in_flight = std::stoi(args.value());
    else if (a == "--latency-ms") latency_ms = std::stoi(args.value());
    else if (a == "--cache") cache = args.value();
    else if (a == "--mode") mode = args.value();
    else {
      std::cerr << "usage: eg-llm-bench [--url URL] [--calls N] [--in-flight N] [--latency-ms N] [--cache PATH] "
                   "[--mode batch|threads]\n";
      return 2;
    }
  }
  std::unique_ptr<evalgraph::testing::TestLlmServer> local;
  if (url.empty()) {
    evalgraph::testing::ServerOptions so;
    so.latency_ms = latency_ms;
    local = std::make_unique<evalgraph::testing::TestLlmServer>(so);
    url = local->base_url();
    std::cout << "in-process server (CPU time includes the server)\n";
  }
  if (cache.empty())
    cache = (std::filesystem::temp_directory_path() / fmt::format("eg-llm-bench-{}.sqlite", ::getpid())).string();
  for (const char* suf : {"", "-wal", "-shm"}) std::filesystem::remove(cache + suf);

  ProviderConfig p;
  p.name = "bench";
  p.base_url = url;
  p.model = "bench-model";
  p.max_in_flight = in_flight;
  p.timeout_s = 30;
  std::vector<Json> bodies;
  bodies.reserve(calls);
  for (int i = 0; i < calls; ++i)
    bodies.push_back({{"messages", Json::array({{{"role", "user"}, {"content", fmt::format("bench question {}", i)}}})},
                      {"temperature", 0}});

  const double limit = double(calls) * latency_ms / 1000.0 / in_flight;
  long srv0 = local ? long(local->request_count()) : server_requests(url);
  auto cold = run_once(p, cache, bodies, mode, in_flight);
  long srv1 = local ? long(local->request_count()) : server_requests(url);
  std::cout << fmt::format("cold: {} calls, {} in flight, {} ms latency, mode {}\n", calls, in_flight, latency_ms, mode);
  std::cout << fmt::format("  ok {} / {}   HTTP requests {} (server saw {})\n", cold.ok, calls, cold.http, srv1 - srv0);
  std::cout << fmt::format("  wall {:.3f} s   physical limit N*L/C {:.3f} s   ratio {:.3f}   (goal <= 1.10)\n", cold.wall,
                           limit, cold.wall / limit);
  std::cout << fmt::format("  CPU {:.3f} s = {:.1f} us per call\n", cold.cpu, cold.cpu / calls * 1e6);
  auto warm = run_once(p, cache, bodies, mode, in_flight);
  long srv2 = local ? long(local->request_count()) : server_requests(url);
  std::cout << fmt::format("warm (same calls, cache {}):\n", cache);
  std::cout << fmt::format("  ok {} / {}   cache hits {}   HTTP requests {} (server saw {})  (must be 0)\n", warm.ok,
                           calls, warm.hits, warm.http, srv2 - srv1);
  std::cout << fmt::format("  wall {:.3f} s   CPU {:.1f} us per call\n", warm.wall, warm.cpu / calls * 1e6);
  if (!cold.first_error.empty()) std::cout << "first error: " << cold.first_error << "\n";
  for (const char* suf : {"", "-wal", "-shm"}) std::filesystem::remove(cache + suf);
  bool good = cold.ok == calls && warm.ok == calls && warm.http == 0 && (srv2 - srv1) == 0;
  return good ? 0 : 1;
}
