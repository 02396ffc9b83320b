// eg-test-llm-server: the scripted OpenAI-compatible loopback server as a process (benchmarks, manual use).
//   eg-test-llm-server [--port N] [--threads N] [--latency-ms N] [--latency-sigma S] [--reply TEXT] [--fault-rate F] [--seed N]
//                      [--faults 429,500,503,hang,cut,malformed_json,wrong_content_type] [--hang-ms N]
//                      [--request-log FILE] [--retry-after V] [--trickle-ms N] [--hostile-max-bytes N]
//                      [--hostile-max-s S] [--bomb-bytes N] [--big-content-bytes N]
// --faults takes any fault_name() (tests/llm/server/test_llm_server.h): the hostile modes of issue #28 too
// (trickle, slow_headers, endless, gzip_bomb, deflate_bomb, brotli_bomb, big_content, reset, bad_chunking, invalid_utf8,
// empty_choices, many_choices, redirect, redirect_loop, other_model); --fault-rate 1 applies them to every request.
// --latency-sigma S: log-normal latency with that sigma and the mean --latency-ms, seeded by --seed.
// Provider-like limits (provider_limits.h): --rpm N --tpm N [--burst-s S] token buckets with 429 and x-ratelimit-*
// headers (--no-limit-headers: 429 with retry-after only); --capacity K: K answers at once, the rest queue; --cut-at-s
// T --cut-for-s D [--cut-factor F]: the limits times F from T to T+D (seconds from the first request).
// --request-log FILE: on exit, one JSON line per request: its arrival (t_s), the latency drawn (delay_ms) and
// the body (bench/pipeline_bench.sh computes the schedule those draws allow).
// Prints "listening on http://127.0.0.1:PORT/v1" on stdout, runs until SIGINT/SIGTERM.
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_args.h"
#include "test_llm_server.h"

using evalgraph::testing::Fault;

int main(int argc, char** argv) {
  evalgraph::testing::ServerOptions o;
  unsigned short port = 0;
  std::string request_log;
  for (evalgraph::testing::CliArgs args(argc, argv); args.next();) {
    const std::string &a = args.flag();
    if (a == "--port") port = static_cast<unsigned short>(std::stoi(args.value()));
    else if (a == "--threads") o.threads = std::stoi(args.value());
    else if (a == "--latency-ms") o.latency_ms = std::stoi(args.value());
    else if (a == "--latency-sigma") o.latency_sigma = std::stod(args.value());
    else if (a == "--reply") o.default_reply = args.value();
    else if (a == "--fault-rate") o.fault_rate = std::stod(args.value());
    else if (a == "--seed") o.seed = std::stoull(args.value());
    else if (a == "--hang-ms") o.hang_ms = std::stoi(args.value());
    else if (a == "--request-log") request_log = args.value();
    else if (a == "--fault-times") o.random_fault_times = std::stoi(args.value());
    else if (a == "--trickle-ms") o.trickle_ms = std::stoi(args.value());
    else if (a == "--hostile-max-bytes") o.hostile_max_bytes = std::stoull(args.value());
    else if (a == "--hostile-max-s") o.hostile_max_s = std::stod(args.value());
    else if (a == "--bomb-bytes") o.bomb_bytes = std::stoull(args.value());
    else if (a == "--big-content-bytes") o.big_content_bytes = std::stoull(args.value());
    else if (a == "--retry-after") o.random_retry_after = args.value();
    else if (a == "--rpm") o.limits.requests_per_minute = std::stod(args.value());
    else if (a == "--tpm") o.limits.tokens_per_minute = std::stod(args.value());
    else if (a == "--burst-s") o.limits.burst_s = std::stod(args.value());
    else if (a == "--no-limit-headers") o.limits.headers = false;
    else if (a == "--capacity") o.limits.capacity = std::stoi(args.value());
    else if (a == "--cut-at-s") o.limits.cut_at_s = std::stod(args.value());
    else if (a == "--cut-for-s") o.limits.cut_for_s = std::stod(args.value());
    else if (a == "--cut-factor") o.limits.cut_factor = std::stod(args.value());
    else if (a == "--faults") {
      std::stringstream ss(args.value());
      for (std::string f; std::getline(ss, f, ',');) {
        if (f == "429") o.random_faults.push_back(Fault::http_429);
        else if (f == "500") o.random_faults.push_back(Fault::http_500);
        else if (f == "503") o.random_faults.push_back(Fault::http_503);
        else if (f == "hang") o.random_faults.push_back(Fault::hang);
        else if (f == "cut") o.random_faults.push_back(Fault::cut);
        else if (f == "malformed_json") o.random_faults.push_back(Fault::malformed_json);
        else if (Fault k; evalgraph::testing::parse_fault(f, k)) o.random_faults.push_back(k);
        else {
          std::cerr << "unknown fault " << f << "\n";
          return 2;
        }
      }
    } else if (a == "--help" || a == "-h") {
      std::cout << "usage: eg-test-llm-server [--port N] [--threads N] [--latency-ms N] [--latency-sigma S] [--reply TEXT] "
                   "[--fault-rate F] [--seed N] [--faults k1,k2,...] [--hang-ms N] [--request-log FILE]\n";
      return 0;
    } else {
      std::cerr << "unknown argument " << a << "\n";
      return 2;
    }
  }
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);  // before the server threads start, so they inherit the mask
  evalgraph::testing::TestLlmServer server(o, port);
  std::cout << "listening on " << server.base_url() << std::endl;
  int sig = 0;
  sigwait(&set, &sig);
  if (!request_log.empty()) {
    std::ofstream log(request_log, std::ios::binary);
    for (const auto& r : server.requests())
      log << nlohmann::json{{"t_s", r.t_s}, {"delay_ms", r.delay_ms}, {"target", r.target}, {"fault", r.fault}, {"body", r.body}}.dump(
                 -1, ' ', false, nlohmann::json::error_handler_t::replace)
          << "\n";
    if (!log) std::cerr << "eg-test-llm-server: could not write " << request_log << "\n";
  }
  std::cerr << "eg-test-llm-server: " << server.request_count() << " requests, max concurrency "
            << server.max_concurrency() << ", refused by the limits " << server.refused_by_limits() << "\n";
  return 0;
}
