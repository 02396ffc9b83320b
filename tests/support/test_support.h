#pragma once
// Small helpers shared by the tests of every area: temporary folders, files, running the CLI (the last where
// the test target defines EVALGRAPH_EXE and TEST_PLUGIN_DIR).
#include <sys/wait.h>

#include <catch2/catch.hpp>

#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace testsupport {
namespace fs = std::filesystem;

struct TempDir {
  fs::path path;
  TempDir() {
    std::random_device rd;
    path = fs::temp_directory_path() / ("evalgraph-test-" + std::to_string(rd()) + std::to_string(rd()));
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  fs::path write(const std::string &name, const std::string &content) const {
    fs::path p = path / name;
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << content;
    return p;
  }
};

inline std::string read_file(const fs::path &p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline std::vector<nlohmann::json> read_jsonl(const fs::path &p) {
  std::vector<nlohmann::json> out;
  std::ifstream in(p);
  std::string line;
  while (std::getline(in, line))
    if (!line.empty()) out.push_back(nlohmann::json::parse(line));
  return out;
}

// The element of the JSON array `list` whose `key` is `value`; the test fails where there is none.
inline const nlohmann::json &entry_where(const nlohmann::json &list, const std::string &key, const std::string &value) {
  for (const auto &e : list)
    if (e.contains(key) && e[key] == value) return e;
  FAIL("no entry with " << key << " = " << value << " in " << list.dump());
  static const nlohmann::json none;
  return none;
}

// The run.json a run wrote to its results folder `dir`.
inline nlohmann::json read_run_json(const fs::path &dir) { return nlohmann::json::parse(read_file(dir / "run.json")); }

struct CmdResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

inline CmdResult run_cmd(const std::string &cmd) {
  CmdResult r;
  FILE *f = popen((cmd + " 2>&1").c_str(), "r");
  if (f == nullptr) return r;
  std::array<char, 4096> buf{};
  size_t n = 0;
  while ((n = fread(buf.data(), 1, buf.size(), f)) > 0) r.output.append(buf.data(), n);
  int st = pclose(f);
  r.exit_code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

// The last line of a command's output, without its line break (`evalgraph run` prints its results folder last).
inline fs::path last_line(const std::string &out) {
  std::string s = out.substr(0, out.find_last_not_of('\n') + 1);
  auto nl = s.rfind('\n');
  return nl == std::string::npos ? s : s.substr(nl + 1);
}

// How many times `what` stands in `text` (e.g. the finished chunks of a journal: "_chunk_end").
inline std::size_t count_of(const std::string &text, const std::string &what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

// A CSV data set of one column, text: its header, then text(i) for i = 0 .. n-1, one a line.
inline std::string text_csv(int n, const std::function<std::string(int)> &text) {
  std::string s = "text\n";
  for (int i = 0; i < n; ++i) s += text(i) + "\n";
  return s;
}

// The run's folder under an output root (the last entry; empty while there is none).
inline fs::path only_run_dir(const fs::path &root) {
  fs::path dir;
  std::error_code ec;
  if (fs::exists(root, ec))
    for (const auto &e : fs::directory_iterator(root)) dir = e.path();
  return dir;
}

#if defined(EVALGRAPH_EXE) && defined(TEST_PLUGIN_DIR)
inline std::string evalgraph_cmd(const std::string &args) {
  return std::string("CI=true ") + EVALGRAPH_EXE + " --plugin-dir " + TEST_PLUGIN_DIR + " " + args;
}

struct RunResult {
  int exit_code = -1;
  std::string output;
  fs::path dir;  // the results folder (the last line `evalgraph run` prints), empty if that is no folder
};

// `evalgraph run -q <flags> <d>/<pipeline>` (`env`: assignments put before the command, e.g. "EG_TEST_SECRET_KEY=k ").
inline RunResult run_pipeline(const TempDir &d, const std::string &pipeline, const std::string &flags = "",
                              const std::string &env = "") {
  auto r = run_cmd(env + evalgraph_cmd("run -q " + flags + " " + (d.path / pipeline).string()));
  RunResult out{r.exit_code, r.output, {}};
  fs::path last = last_line(r.output);
  std::error_code ec;
  if (fs::is_directory(last, ec)) out.dir = last;
  return out;
}

// Writes the two pipelines of a kill-and-resume test, <d>/clean.yaml and <d>/killed.yaml: `pipeline(dir)` for the
// output folders clean and killed.
inline void write_clean_and_killed(const TempDir &d, const std::function<std::string(const std::string &)> &pipeline) {
  for (const std::string dir : {"clean", "killed"}) d.write(dir + ".yaml", pipeline(dir));
}

// `evalgraph validate <d>/<pipeline>`.
inline CmdResult validate(const TempDir &d, const std::string &pipeline) {
  return run_cmd(evalgraph_cmd("validate " + (d.path / pipeline).string()));
}

// `evalgraph run -q <flags> <d>/<pipeline>`, required to end with exit code 0: its run.json.
inline nlohmann::json run_ok(const TempDir &d, const std::string &pipeline, const std::string &flags = "",
                             const std::string &env = "") {
  auto r = run_pipeline(d, pipeline, flags, env);
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  REQUIRE(!r.dir.empty());
  return read_run_json(r.dir);
}

// `evalgraph validate <d>/<pipeline>` refuses the pipeline (exit code 2), saying each of `messages`; its result.
inline CmdResult check_refused(const TempDir &d, const std::string &pipeline, const std::vector<std::string> &messages) {
  auto r = validate(d, pipeline);
  INFO(r.output);
  CHECK(r.exit_code == 2);
  for (const auto &m : messages) CHECK_THAT(r.output, Catch::Contains(m));
  return r;
}

// `evalgraph run <flags> <d>/<pipeline>` (not quiet: its summary included) ends with `exit_code`, saying each of
// `messages`; its result.
inline CmdResult check_run(const TempDir &d, const std::string &pipeline, int exit_code,
                           const std::vector<std::string> &messages, const std::string &flags = "") {
  auto r = run_cmd(evalgraph_cmd("run " + flags + " " + (d.path / pipeline).string()));
  INFO(r.output);
  CHECK(r.exit_code == exit_code);
  for (const auto &m : messages) CHECK_THAT(r.output, Catch::Contains(m));
  return r;
}

// Starts `evalgraph <args>` in the background (`env`: assignments put before the command, e.g.
// "EG_TEST_SECRET_KEY=k "), kills it with SIGKILL as soon as the journal of its run folder (the one folder under
// `out_root`) holds `chunks` finished chunks (bounded wait, 10 s), and returns that folder once the process is gone
// (or a zombie nobody reaps).
inline fs::path start_and_kill(const TempDir &d, const std::string &args, const fs::path &out_root,
                               std::size_t chunks = 1, const std::string &env = "") {
  auto started = run_cmd("(" + env + evalgraph_cmd(args) + " > " + (d.path / "pid.out").string() + " 2>&1 & echo $!)");
  const std::string pid = started.output.substr(0, started.output.find('\n'));
  fs::path run_dir;
  for (int i = 0; i < 2000; ++i) {
    run_dir = only_run_dir(out_root);
    if (!run_dir.empty() && count_of(read_file(run_dir / "progress" / "journal.jsonl"), "_chunk_end") >= chunks) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  run_cmd("kill -9 " + pid);
  for (int i = 0; i < 500; ++i) {
    std::string stat = read_file("/proc/" + pid + "/stat");
    if (stat.empty() || stat.find(") Z ") != std::string::npos) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return run_dir;
}
#endif

}  // namespace testsupport
