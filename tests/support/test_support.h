#pragma once
// Small helpers shared by the tests of every area: temporary folders, files, running the CLI (the last where
// the test target defines EVALGRAPH_EXE and TEST_PLUGIN_DIR).
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
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

#if defined(EVALGRAPH_EXE) && defined(TEST_PLUGIN_DIR)
inline std::string evalgraph_cmd(const std::string &args) {
  return std::string("CI=true ") + EVALGRAPH_EXE + " --plugin-dir " + TEST_PLUGIN_DIR + " " + args;
}
#endif

}  // namespace testsupport
