// Hostile LLM servers (issue #28) against the LLM service: bounded response memory (per answer, after
// decompression, and in flight together), a Retry-After ceiling, the run's stop request in every waiting state, and
// clearer words (redirects, non-UTF-8 answers, another model answering).
#include <catch2/catch.hpp>
#include <chrono>
#include <functional>
#include <mutex>
#include <thread>

#include "black_hole.h"
#include "llm/llm_service.h"
#include "llm/llm_service_impl.h"
#include "llm_test_support.h"
#include "test_llm_server.h"
#include "util/stop.h"

using namespace llmtest;
using evalgraph::llm::LogLevel;
using testsupport::BlackHole;

namespace {

// One attempt a call, 10 s to connect and to answer, 8 in flight.
ProviderConfig provider(const std::string &base_url) {
  ProviderConfig p = provider_at(base_url);
  p.model = "m";
  p.embedding_model.clear();
  p.timeout_s = 10;
  p.connect_timeout_s = 10;
  p.max_in_flight = 8;
  p.max_attempts = 1;
  return p;
}

Json body(const std::string &user) { return {{"messages", Json::array({{{"role", "user"}, {"content", user}}})}}; }

// Clears the process's stop request when a test ends, however it ends.
struct StopReset {
  StopReset() { evalgraph::reset_stop(); }
  ~StopReset() {
    evalgraph::reset_stop();
    evalgraph::set_stop_grace_s(5);
  }
};

// Runs `n` chats on threads; returns their results once all are back.
std::vector<CallResult> chats(LlmService &svc, int n, const std::string &prefix) {
  std::vector<CallResult> rs(static_cast<std::size_t>(n));
  std::vector<std::thread> ts;
  for (int i = 0; i < n; ++i)
    ts.emplace_back([&, i] { rs[static_cast<std::size_t>(i)] = svc.chat("p", body(prefix + std::to_string(i)), 0); });
  for (auto &t : ts) t.join();
  return rs;
}

// Starts `n` chats on threads, waits until the server has seen `seen` requests, requests a stop and returns the
// results and how long after the stop the last call ended.
std::pair<std::vector<CallResult>, double> stop_when(LlmService &svc, int n, const std::function<bool()> &ready,
                                                    bool now = false) {
  std::vector<CallResult> rs(static_cast<std::size_t>(n));
  std::vector<std::thread> ts;
  for (int i = 0; i < n; ++i)
    ts.emplace_back([&, i] { rs[static_cast<std::size_t>(i)] = svc.chat("p", body("q" + std::to_string(i)), 0); });
  for (int i = 0; i < 1000 && !ready(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  auto t0 = Clock::now();
  if (now)
    evalgraph::request_stop_now();
  else
    evalgraph::request_stop(evalgraph::StopReason::signal, "SIGTERM");
  for (auto &t : ts) t.join();
  return {rs, since(t0)};
}

}  // namespace

TEST_CASE("stop: calls sleeping in a long Retry-After end at once, stopped, and nothing new goes out", "[llm][stop]") {
  StopReset guard;
  TestLlmServer server;
  server.add_rule(Rule{.fault = Fault::http_429, .retry_after = "100"});
  auto p = provider(server.base_url());
  p.max_attempts = 6;  // the defaults: the call would wait 100 s five times
  LlmService svc({p}, CacheOptions{false, ""});
  auto [rs, el] = stop_when(svc, 6, [&] { return server.request_count() >= 6; });
  CHECK(el < 1.0);
  for (auto &r : rs) {
    CHECK_FALSE(r.ok);
    CHECK(r.stopped);
    CHECK_THAT(r.error, Catch::Contains("stopped (signal: SIGTERM)") && Catch::Contains("--resume"));
  }
  CHECK(server.request_count() == 6);  // one attempt each: no retry after the stop
  auto late = svc.chat("p", body("late"), 0);
  CHECK(late.stopped);
  CHECK(server.request_count() == 6);
  // A new run (reset) works again.
  evalgraph::reset_stop();
  server.clear_rules();
  auto again = svc.chat("p", body("again"), 0);
  CHECK(again.ok);
}

TEST_CASE("stop: a trickling answer gets the grace, then is cut, and a hard stop cuts at once", "[llm][stop]") {
  StopReset guard;
  ServerOptions so;
  so.trickle_ms = 100;
  so.hostile_max_s = 30;
  TestLlmServer server(so);
  server.add_rule(Rule{.fault = Fault::trickle});
  LlmService svc({provider(server.base_url())}, CacheOptions{false, ""});
  evalgraph::set_stop_grace_s(1.0);
  auto [rs, el] = stop_when(svc, 4, [&] { return server.request_count() >= 4; });
  CHECK(el >= 0.9);  // the grace was given ...
  CHECK(el < 3.0);   // ... and no more (the timeout is 10 s)
  for (auto &r : rs) CHECK(r.stopped);

  evalgraph::reset_stop();
  server.reset_counters();
  evalgraph::set_stop_grace_s(30);
  auto [rs2, el2] = stop_when(svc, 4, [&] { return server.request_count() >= 4; }, /*now=*/true);
  CHECK(el2 < 1.0);
  for (auto &r : rs2) CHECK(r.stopped);
}

TEST_CASE("stop: calls waiting in connect are cut after the grace", "[llm][stop]") {
  StopReset guard;
  BlackHole hole;
  auto p = provider(hole.base_url());
  p.connect_timeout_s = 60;
  p.timeout_s = 60;
  LlmService svc({p}, CacheOptions{false, ""});
  evalgraph::set_stop_grace_s(0.5);
  auto t_start = Clock::now();
  auto [rs, el] = stop_when(svc, 3, [&] { return since(t_start) > 0.3; });  // (connect hangs: nothing to see)
  CHECK(el < 3.0);
  for (auto &r : rs) {
    CHECK(r.stopped);
    CHECK_FALSE(r.ok);
  }
}

TEST_CASE("usage counts past what a count holds are no usage, not a cast", "[llm][hostile]") {
  // (1e300 tokens converted to a 64-bit count is undefined behaviour; the call's tokens are then estimated)
  using evalgraph::llm::Usage;
  using evalgraph::llm::detail::reported_usage;
  Usage u;
  CHECK_FALSE(reported_usage(nlohmann::json::parse(R"({"usage": {"prompt_tokens": 1e300, "completion_tokens": 3}})"),
                             false, u));
  CHECK_FALSE(reported_usage(
      nlohmann::json::parse(R"({"usage": {"prompt_tokens": 5, "completion_tokens": 18446744073709551616.0}})"), false,
      u));
  CHECK_FALSE(
      reported_usage(nlohmann::json::parse(R"({"usage": {"prompt_tokens": -1, "completion_tokens": 3}})"), false, u));
  REQUIRE(reported_usage(
      nlohmann::json::parse(R"({"usage": {"prompt_tokens": 18446744073709551615, "completion_tokens": 3.0}})"), false,
      u));
  CHECK(u.prompt_tokens == 18446744073709551615ULL);
  CHECK(u.completion_tokens == 3);
}

TEST_CASE("a response is cut at max_response_bytes as it arrives, after decompression", "[llm][hostile]") {
  ServerOptions so;
  so.big_content_bytes = std::uint64_t(200) << 20;
  so.bomb_bytes = std::uint64_t(64) << 20;
  so.hostile_max_bytes = std::uint64_t(1) << 30;
  TestLlmServer server(so);
  server.add_rule(Rule{.match = "big", .fault = Fault::big_content});
  server.add_rule(Rule{.match = "endless", .fault = Fault::endless});
  server.add_rule(Rule{.match = "gzip", .fault = Fault::gzip_bomb});
  server.add_rule(Rule{.match = "deflate", .fault = Fault::deflate_bomb});
  server.add_rule(Rule{.match = "brotli", .fault = Fault::brotli_bomb});
  auto p = provider(server.base_url());
  p.max_response_bytes = std::size_t(4) << 20;
  p.max_response_bytes_in_flight = std::size_t(16) << 20;
  LlmService svc({p}, CacheOptions{false, ""});
  for (const char *what : {"big", "endless", "gzip", "deflate", "brotli"}) {
    INFO(what);
    auto t0 = Clock::now();
    auto r = svc.chat("p", body(what), 0);
    CHECK(since(t0) < 5.0);  // cut at 4 MiB, not read to the end (200 MB, never, 64 MiB inflated)
    CHECK_FALSE(r.ok);
    CHECK(r.attempts == 1);
    CHECK_THAT(r.error, Catch::Contains("larger than max_response_bytes (4 MiB)") &&
                            Catch::Contains("raise the provider key max_response_bytes"));
    if (std::string(what) == "gzip" || std::string(what) == "deflate" || std::string(what) == "brotli")
      CHECK_THAT(r.error, Catch::Contains("after decompression"));
  }
  // A bomb within the limit inflates fine: the limit is on the inflated answer, and it is not refused for being
  // compressed.
  ServerOptions small = so;
  small.bomb_bytes = std::uint64_t(1) << 20;
  TestLlmServer server2(small);
  server2.add_rule(Rule{.fault = Fault::gzip_bomb});
  LlmService svc2({provider(server2.base_url())}, CacheOptions{false, ""});
  auto ok = svc2.chat("p", body("x"), 0);
  REQUIRE(ok.ok);
  CHECK(ok.response["choices"][0]["message"]["content"].get<std::string>().size() == (std::size_t(1) << 20));
}

TEST_CASE("answers in flight together are held to max_response_bytes_in_flight", "[llm][hostile]") {
  ServerOptions so;
  so.big_content_bytes = std::uint64_t(3) << 20;
  so.latency_ms = 200;  // all eight answers start together
  TestLlmServer server(so);
  server.add_rule(Rule{.latency_ms = 200, .fault = Fault::big_content});
  auto p = provider(server.base_url());
  p.max_response_bytes = std::size_t(4) << 20;
  p.max_response_bytes_in_flight = std::size_t(6) << 20;  // room for two of the eight at once
  LlmService svc({p}, CacheOptions{false, ""});
  auto rs = chats(svc, 8, "q");
  int cut = 0, ok = 0;
  for (auto &r : rs) {
    if (r.ok) ++ok;
    else if (r.error.find("max_response_bytes_in_flight (6 MiB)") != std::string::npos) ++cut;
    else FAIL(r.error);
  }
  CHECK(cut >= 1);
  CHECK(ok + cut == 8);
}

TEST_CASE("a Retry-After above retry_after_max_s fails the call at once in the server's words", "[llm][retry]") {
  TestLlmServer server;
  server.add_rule(Rule{.match = "hour", .fault = Fault::http_429, .retry_after = "3600"});
  server.add_rule(Rule{.match = "huge", .fault = Fault::http_503, .retry_after = "1e308"});
  server.add_rule(Rule{.match = "short", .fault = Fault::http_429, .fault_times = 1, .retry_after = "1"});
  auto p = provider(server.base_url());
  p.max_attempts = 6;
  LlmService svc({p}, CacheOptions{false, ""});
  auto t0 = Clock::now();
  auto r = svc.chat("p", body("an hour"), 0);
  CHECK(since(t0) < 1.0);
  CHECK_FALSE(r.ok);
  CHECK(r.attempts == 1);
  CHECK_THAT(r.error, Catch::Contains("asks to wait an hour") && Catch::Contains("Retry-After: 3600") &&
                          Catch::Contains("retry_after_max_s (120 s)") && Catch::Contains("Rate limit reached (scripted)"));
  auto h = svc.chat("p", body("huge"), 0);
  CHECK(h.attempts == 1);
  CHECK_THAT(h.error, Catch::Contains("forever") && Catch::Contains("HTTP 503"));
  // Within the ceiling it is honoured.
  auto s = svc.chat("p", body("short"), 0);
  CHECK(s.ok);
  CHECK(s.attempts == 2);
  CHECK(s.latency_s >= 1.0);

  // retry_total_max_s: no retry that would start past it.
  server.clear_rules();
  server.add_rule(Rule{.fault = Fault::http_429, .retry_after = "2"});
  p.retry_total_max_s = 1;
  LlmService svc2({p}, CacheOptions{false, ""});
  t0 = Clock::now();
  auto t = svc2.chat("p", body("t"), 0);
  CHECK(since(t0) < 1.0);
  CHECK(t.attempts == 1);
  CHECK_THAT(t.error, Catch::Contains("retry_total_max_s (1 s"));
}

TEST_CASE("clearer words: redirects, non-UTF-8 answers, another model answering", "[llm][hostile]") {
  ServerOptions so;
  so.redirect_location = "https://elsewhere.example/v1/chat/completions";
  so.other_model = "other-model-7b";
  TestLlmServer server(so);
  server.add_rule(Rule{.match = "redirect", .fault = Fault::redirect});
  server.add_rule(Rule{.match = "loop", .fault = Fault::redirect_loop});
  server.add_rule(Rule{.match = "utf8", .fault = Fault::invalid_utf8});
  server.add_rule(Rule{.match = "other", .fault = Fault::other_model});
  auto p = provider(server.base_url());
  LlmService svc({p}, CacheOptions{false, ""});
  std::mutex mu;
  std::vector<std::string> warnings;
  svc.set_logger([&](LogLevel l, const std::string &m) {
    std::lock_guard lk(mu);
    if (l == LogLevel::warn) warnings.push_back(m);
  });
  auto r = svc.chat("p", body("redirect"), 0);
  CHECK_THAT(r.error, Catch::Contains("HTTP 302") && Catch::Contains("not followed") &&
                          Catch::Contains("https://elsewhere.example/v1/chat/completions"));
  auto l = svc.chat("p", body("loop"), 0);
  CHECK_THAT(l.error, Catch::Contains("not followed") && Catch::Contains("127.0.0.1"));
  CHECK(server.request_count() == 2);  // nothing followed
  auto u = svc.chat("p", body("utf8"), 0);
  CHECK_FALSE(u.ok);
  CHECK_THAT(u.error, Catch::Contains("not UTF-8"));
  CHECK(u.error.find("iconv") == std::string::npos);
  CHECK(u.error.find("save the file") == std::string::npos);
  for (int i = 0; i < 3; ++i) CHECK(svc.chat("p", body("other " + std::to_string(i)), 0).ok);
  {
    std::lock_guard lk(mu);
    REQUIRE(warnings.size() == 1);  // once
    CHECK_THAT(warnings[0], Catch::Contains("asked for model 'm'") && Catch::Contains("'other-model-7b'"));
  }

  // A version or date suffix is the same model: no warning.
  so.other_model = "gpt-4o-2024-08-06";
  TestLlmServer server2(so);
  server2.add_rule(Rule{.fault = Fault::other_model});
  auto q = provider(server2.base_url());
  q.model = "gpt-4o";
  LlmService svc2({q}, CacheOptions{false, ""});
  int warned = 0;
  svc2.set_logger([&](LogLevel lv, const std::string &) { warned += lv == LogLevel::warn; });
  CHECK(svc2.chat("p", body("x"), 0).ok);
  CHECK(warned == 0);
}

TEST_CASE("provider keys for the response bounds and the retry ceiling", "[llm]") {
  Json j = {{"base_url", "http://127.0.0.1:1/v1"}, {"model", "m"}};
  auto d = evalgraph::llm::provider_from_json("p", j);
  CHECK(d.max_response_bytes == (std::size_t(8) << 20));
  CHECK(d.max_response_bytes_in_flight == (std::size_t(128) << 20));
  CHECK(d.retry_after_max_s == 120);
  j["max_response_bytes"] = "32 MiB";
  j["retry_after_max_s"] = 30;
  j["retry_total_max_s"] = 200;
  auto p = evalgraph::llm::provider_from_json("p", j);
  CHECK(p.max_response_bytes == (std::size_t(32) << 20));
  CHECK(p.retry_after_max_s == 30);
  CHECK(p.retry_total_max_s == 200);
  j["max_response_bytes"] = std::size_t(256) << 20;  // above the default total: the total follows
  CHECK(evalgraph::llm::provider_from_json("p", j).max_response_bytes_in_flight == (std::size_t(256) << 20));
  j["max_response_bytes_in_flight"] = "64 MiB";
  CHECK_THROWS_WITH(evalgraph::llm::provider_from_json("p", j), Catch::Contains("must be at least 'max_response_bytes'"));
  j.erase("max_response_bytes_in_flight");
  j["max_response_bytes"] = "8 parsecs";
  CHECK_THROWS_WITH(evalgraph::llm::provider_from_json("p", j), Catch::Contains("'max_response_bytes' must be a size"));
  j["max_response_bytes"] = 10;
  CHECK_THROWS_WITH(evalgraph::llm::provider_from_json("p", j), Catch::Contains("between 1024 bytes"));
}
