// SIGTERM / Ctrl-C (issue #28): the run's stop request is obeyed within seconds in every waiting state — a
// Retry-After sleep, connect, a trickling body, a locked LLM cache, a slow sink — exits 130, and --resume finishes
// the run without repeating a finished call. A second signal stops at once.
#include <catch2/catch.hpp>

#include <sqlite3.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "black_hole.h"
#include "llm_fixture.h"
#include "test_support.h"

using namespace testsupport;
namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// An evalgraph run in the background: its pid (the evalgraph process itself), its exit code once it ends.
struct Background {
  fs::path pid_file, rc_file, out_file;
  std::string pid;

  Background(const TempDir &d, const std::string &tag, const std::string &args)
      : pid_file(d.path / (tag + ".pid")), rc_file(d.path / (tag + ".rc")), out_file(d.path / (tag + ".out")) {
    run_cmd("( sh -c 'echo $$ > " + pid_file.string() + "; exec env " + evalgraph_cmd(args) + "' > " +
            out_file.string() + " 2>&1; echo $? > " + rc_file.string() + " ) > /dev/null 2>&1 &");
    for (int i = 0; i < 500 && pid.empty(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      std::string p = read_file(pid_file);
      if (!p.empty() && p.back() == '\n') pid = p.substr(0, p.size() - 1);
    }
    REQUIRE(!pid.empty());
  }
  void signal(const char *sig) const { run_cmd(std::string("kill -") + sig + " " + pid); }
  bool done() const {
    std::string r = read_file(rc_file);
    return !r.empty() && r.back() == '\n';
  }
  // Waits up to `limit_s` for the run to end; its exit code (-1: still running, then killed).
  int wait(double limit_s) const {
    auto t0 = Clock::now();
    while (!done() && since(t0) < limit_s) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (!done()) {
      signal("KILL");
      return -1;
    }
    return std::stoi(read_file(rc_file));
  }
  std::string output() const { return read_file(out_file); }
  // Sends SIGTERM and waits up to `limit_s` for the run to end: its exit code (as wait) and the seconds from the
  // signal to its end.
  std::pair<int, double> terminate(double limit_s) const {
    auto t0 = Clock::now();
    signal("TERM");
    int rc = wait(limit_s);
    return {rc, since(t0)};
  }
};

// Waits (bounded) until `cond` holds.
bool wait_for(const std::function<bool()> &cond, double limit_s = 20) {
  auto t0 = Clock::now();
  while (!cond()) {
    if (since(t0) > limit_s) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

std::string pipeline(const std::string &base_url, const std::string &out_dir, const std::string &provider_extra = "",
                     const std::string &sinks = "") {
  return "name: stop\ndataset: {path: data.csv}\n"
         "providers:\n  p:\n    base_url: " + base_url + "\n    model: m\n" + provider_extra +
         "nodes:\n  - id: j\n    uses: test.needs_llm\n"
         "sinks:\n  - uses: sink.jsonl\n    with: {file: out.jsonl}\n" + sinks +
         "output: {dir: " + out_dir + "}\n";
}

// The stopped run left nothing under a sink's final name, and a journal to resume from.
void check_resumable(const fs::path &run_dir) {
  CHECK(fs::exists(run_dir / "progress" / "journal.jsonl"));
  CHECK(fs::exists(run_dir / "progress" / "interrupted.json"));
  CHECK_FALSE(fs::exists(run_dir / "out.jsonl"));
  CHECK_FALSE(fs::exists(run_dir / "run.json"));
}

}  // namespace

TEST_CASE("SIGTERM while every call waits on a long Retry-After: exit 130 within 15 s, resume repeats no finished call",
          "[llm][stop]") {
  LlmServer srv;
  TempDir d;
  d.write("data.csv", text_csv(30, [](int i) { return (i < 10 ? "fine " : "limited ") + std::to_string(i); }));
  // The provider's default options (max_attempts 6, retry_after_max_s 120): each limited call would wait 100 s.
  d.write("p.yaml", pipeline(srv.base_url(), "out"));
  d.write("clean.yaml", pipeline(srv.base_url(), "clean"));
  srv.reply_all("reply: {last_user}");
  auto clean = run_cmd(evalgraph_cmd("run -q -j 2 --chunk-size 5 --no-cache " + (d.path / "clean.yaml").string()));
  REQUIRE(clean.exit_code == 0);
  fs::path clean_dir = only_run_dir(d.path / "clean");

  srv.clear_rules();
  srv.add_rule(Rule{.match = "limited", .fault = Fault::http_429, .retry_after = "100"});
  srv.reply_all("reply: {last_user}");
  srv.reset_counters();
  const std::string cache = (d.path / "cache.sqlite").string();
  Background run(d, "run", "run -j 2 --chunk-size 5 --cache " + cache + " " + (d.path / "p.yaml").string());
  // Every limited call ends up waiting on its Retry-After (the default window, a ceiling of 256, takes all 20 of
  // them): the run makes no progress until the stop. (Which fine records were answered before depends on the
  // threads' order.)
  auto count = [&](const std::string &what) {
    std::size_t n = 0;
    for (const auto &r : srv.requests()) n += r.body.find(what) != std::string::npos ? 1 : 0;
    return n;
  };
  bool all_waiting = wait_for([&] { return count("limited") >= 20; });
  if (!all_waiting) {
    run.signal("KILL");
    run.wait(10);
    FAIL("requests: " << srv.request_count() << "\n" << run.output());
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const std::size_t before = srv.request_count();
  const std::size_t fine_before = count("fine");
  std::vector<std::string> answered;
  for (const auto &r : srv.requests())
    if (r.body.find("fine") != std::string::npos) answered.push_back(r.body);
  auto [rc, el] = run.terminate(30);
  INFO(run.output());
  CHECK(rc == 130);
  CHECK(el < 15.0);
  CHECK(el < 5.0);  // nothing is in flight: it ends about at once
  CHECK_THAT(run.output(), Catch::Contains("stopped (signal: SIGTERM)") && Catch::Contains("evalgraph run --resume"));
  CHECK(srv.request_count() == before);  // no retry went out, no new call started
  CHECK(count("limited") == 20);
  fs::path run_dir = only_run_dir(d.path / "out");
  check_resumable(run_dir);
  auto state = nlohmann::json::parse(read_file(run_dir / "progress" / "interrupted.json"));
  CHECK(state["stop"]["reason"] == "signal");
  CHECK(state["stop"]["exit_code"] == 130);

  // The server behaves now: the resumed run asks only what was never answered.
  srv.clear_rules();
  srv.reply_all("reply: {last_user}");
  srv.reset_counters();
  auto resumed = run_cmd(evalgraph_cmd("run -q --cache " + cache + " --resume " + run_dir.string()));
  INFO(resumed.output);
  REQUIRE(resumed.exit_code == 0);
  CHECK(srv.request_count() == 30 - fine_before);  // every call not answered before, once
  for (const auto &r : srv.requests())              // and none answered before
    CHECK(std::find(answered.begin(), answered.end(), r.body) == answered.end());
  CHECK(read_file(run_dir / "out.jsonl") == read_file(clean_dir / "out.jsonl"));
}

TEST_CASE("SIGTERM while calls wait in connect, or on a trickling body: cut after the grace, exit 130", "[llm][stop]") {
  TempDir d;
  d.write("data.csv", text_csv(12, [](int i) { return "q " + std::to_string(i); }));
  SECTION("connect") {
    BlackHole hole;
    d.write("p.yaml", pipeline(hole.base_url(), "out",
                               "    connect_timeout_s: 60\n    timeout_s: 120\n"));
    const int fillers_waiting = hole.connecting();
    Background run(d, "run", "run -q --stop-grace 1 --no-cache " + (d.path / "p.yaml").string());
    // Signal only once the run's calls wait in connect (a sanitizer build may take seconds to get there).
    REQUIRE(wait_for([&] { return hole.connecting() > fillers_waiting; }));
    auto [rc, el] = run.terminate(30);
    INFO(run.output());
    CHECK(rc == 130);
    CHECK(el < 6.0);
    CHECK(el >= 0.9);  // the grace was given
    check_resumable(only_run_dir(d.path / "out"));
  }
  SECTION("trickling body") {
    ServerOptions so;
    so.trickle_ms = 100;
    so.hostile_max_s = 60;
    TestLlmServer srv(so);
    srv.add_rule(Rule{.fault = Fault::trickle});
    d.write("p.yaml", pipeline(srv.base_url(), "out"));  // default timeout_s: 120
    Background run(d, "run", "run -q --stop-grace 1 --no-cache " + (d.path / "p.yaml").string());
    REQUIRE(wait_for([&] { return srv.request_count() >= 8; }));  // the provider's window is full
    auto [rc, el] = run.terminate(30);
    INFO(run.output());
    CHECK(rc == 130);
    CHECK(el < 6.0);
    fs::path run_dir = only_run_dir(d.path / "out");
    check_resumable(run_dir);
    // The server heals: --resume finishes every record.
    srv.clear_rules();
    srv.add_rule(Rule{.reply = "fine"});
    auto resumed = run_cmd(evalgraph_cmd("run -q --no-cache --resume " + run_dir.string()));
    INFO(resumed.output);
    CHECK(resumed.exit_code == 0);
    auto lines = read_jsonl(run_dir / "out.jsonl");
    CHECK(lines.size() == 12);
    for (const auto &l : lines) CHECK(l["j"]["answer"] == "fine");
  }
  SECTION("a second signal stops at once") {
    ServerOptions so;
    so.trickle_ms = 100;
    TestLlmServer srv(so);
    srv.add_rule(Rule{.fault = Fault::trickle});
    d.write("p.yaml", pipeline(srv.base_url(), "out"));
    Background run(d, "run", "run -q --stop-grace 60 --no-cache " + (d.path / "p.yaml").string());
    REQUIRE(wait_for([&] { return srv.request_count() >= 8; }));
    run.signal("TERM");
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    CHECK_FALSE(run.done());  // the first waits for the grace (60 s) ...
    auto [rc, el] = run.terminate(30);  // ... the second does not
    INFO(run.output());
    CHECK(rc == 130);
    CHECK(el < 3.0);
    CHECK_FALSE(fs::exists(only_run_dir(d.path / "out") / "out.jsonl"));
  }
}

TEST_CASE("SIGTERM while the LLM cache is locked by another process, or a sink is slow: exit 130 within seconds",
          "[llm][stop]") {
  LlmServer srv(20);
  srv.reply_all("reply: {last_user}");
  TempDir d;
  d.write("data.csv", text_csv(400, [](int i) { return "q " + std::to_string(i); }));
  SECTION("cache writer") {
    const std::string cache = (d.path / "cache.sqlite").string();
    d.write("one.csv", "text\nwarm\n");
    d.write("warm.yaml", "name: warm\ndataset: {path: one.csv}\nproviders:\n  p:\n    base_url: " + srv.base_url() +
                             "\n    model: m\nnodes:\n  - id: j\n    uses: test.needs_llm\noutput: {dir: warm}\n");
    REQUIRE(run_cmd(evalgraph_cmd("run -q --cache " + cache + " " + (d.path / "warm.yaml").string())).exit_code == 0);
    sqlite3 *db = nullptr;
    REQUIRE(sqlite3_open(cache.c_str(), &db) == SQLITE_OK);
    REQUIRE(sqlite3_exec(db, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr) == SQLITE_OK);  // writers now wait
    d.write("p.yaml", pipeline(srv.base_url(), "out", "    max_in_flight: 4\n"));
    Background run(d, "run", "run -q --stop-grace 1 --cache " + cache + " " + (d.path / "p.yaml").string());
    REQUIRE(wait_for([&] { return srv.request_count() >= 60; }));
    auto [rc, el] = run.terminate(40);
    sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
    sqlite3_close(db);
    INFO(run.output());
    CHECK(rc == 130);
    CHECK(el < 6.0);  // not 10 s per batch of answers waiting for the lock
    fs::path run_dir = only_run_dir(d.path / "out");
    check_resumable(run_dir);
    auto resumed = run_cmd(evalgraph_cmd("run -q --cache " + cache + " --resume " + run_dir.string()));
    INFO(resumed.output);
    CHECK(resumed.exit_code == 0);
    CHECK(read_jsonl(run_dir / "out.jsonl").size() == 400);
  }
  SECTION("slow sink") {
    d.write("small.csv", text_csv(40, [](int i) { return "q " + std::to_string(i); }));
    std::string p = pipeline(srv.base_url(), "out", "", "  - uses: test.slow_sink\n    with: {ms: 2000}\n");
    p.replace(p.find("data.csv"), 8, "small.csv");
    d.write("p.yaml", p);
    Background run(d, "run", "run -q --chunk-size 4 --stop-grace 1 --no-cache " + (d.path / "p.yaml").string());
    REQUIRE(wait_for([&] { return srv.request_count() >= 40; }));  // every record answered; they wait for the sink
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    auto [rc, el] = run.terminate(40);
    INFO(run.output());
    CHECK(rc == 130);
    CHECK(el < 6.0);  // at most the record the sink is writing, not the 39 others (78 s)
    fs::path run_dir = only_run_dir(d.path / "out");
    check_resumable(run_dir);
    // The finished records are journaled although the sink never saw them: --resume writes them.
    CHECK(count_of(read_file(run_dir / "progress" / "journal.jsonl"), "_chunk_end") == 10);
  }
}
