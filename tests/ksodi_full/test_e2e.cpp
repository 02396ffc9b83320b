// End to end: pipelines/ksodi-full.yaml through the engine; curves written, every Δ term fires somewhere, and
// every first turn reduces to its standard operator.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <random>
#include <set>

#include "curves.hpp"
#include "exec/executor.h"
#include "plugin/registry.h"
#include "test_support.h"

using nlohmann::json;
namespace fs = std::filesystem;

namespace {
using testsupport::TempDir;
const auto slurp = testsupport::read_file;
bool is_png(const fs::path &p) {
  std::string s = slurp(p);
  return s.size() > 100 && s.compare(0, 8, "\x89PNG\r\n\x1a\n") == 0;
}
}  // namespace

TEST_CASE("pipelines/ksodi-full.yaml runs end to end and writes curves", "[e2e]") {
  using namespace evalgraph;
  PluginRegistry reg;
  reg.load_directory(builtin_plugin_dir());
  Pipeline p = load_pipeline(fs::path(REPO_DIR) / "pipelines" / "ksodi-full.yaml");
  Plan plan = build_plan(p, reg, read_dataset_columns(p));
  HostServices host(nullptr, "", "");
  host.set_min_stderr_level(EG_LOG_ERROR);
  TempDir dir;
  RunOptions opt;
  opt.jobs = 2;
  opt.run_dir = dir.path / "run";
  RunResult res = run_plan(p, plan, host, opt);
  CHECK(res.failed_records == 0);

  std::vector<json> recs;
  {
    std::ifstream in(opt.run_dir / "detailed.jsonl");
    std::string line;
    while (std::getline(in, line))
      if (!line.empty()) recs.push_back(json::parse(line));
  }
  REQUIRE(recs.size() >= 80);
  std::set<std::string> convs;
  std::map<std::string, double> max_term;
  for (const auto &r : recs) {
    convs.insert(r["conversation_id"].get<std::string>());
    REQUIRE(r.contains("s_t"));
    REQUIRE(r.contains("k_t"));
    REQUIRE(r.contains("o_t"));
    if (r["s_t"]["t"] == 1) {  // the first turn is the standard operator
      CHECK(r["s_t"]["S"] == r["s_t"]["s0"]["S0"]);
      CHECK(r["k_t"]["K"] == r["k_t"]["k0"]["K0"]);
      CHECK(r["o_t"]["O"] == r["o_t"]["o0"]["O0"]);
    }
    for (const auto &[node, terms] : {std::pair<std::string, std::vector<std::string>>{"s_t", {"consistency", "repair", "decay"}},
                                      {"k_t", {"fill", "shift", "decay"}},
                                      {"o_t", {"C_turn", "R_corr", "drift"}}})
      for (const auto &t : terms) max_term[node + "." + t] = std::max(max_term[node + "." + t], r[node][t].get<double>());
    if (r["o_t"]["terms"]["C_turn"]["trigger"].value("conflict", 0) > 0) max_term["o_t.conflict"] = 1;
  }
  CHECK(convs.size() >= 10);
  for (const auto &[k, v] : max_term) {
    INFO(k);
    CHECK(v > 0.0);  // every term fires somewhere in the sample
  }
  CHECK(max_term.count("o_t.conflict") == 1);

  fs::path curves = opt.run_dir / "curves";
  CHECK(is_png(curves / "overview.png"));
  for (const auto &c : convs) {
    INFO(c);
    CHECK(is_png(curves / (c + ".png")));
  }
  for (auto &e : fs::recursive_directory_iterator(opt.run_dir)) CHECK(e.path().extension() != ".partial");
  std::string md = slurp(opt.run_dir / "curves.md");
  CHECK(md.find("## de-telco-01") != std::string::npos);
  CHECK(md.find("- Context built up at turn(s): ") != std::string::npos);
  // the telco conversation: topic change at turn 6, structure repaired at turn 3
  auto sec = md.substr(md.find("## de-telco-01"));
  sec = sec.substr(0, sec.find("\n## ", 3));
  CHECK(sec.find("| 6 |") != std::string::npos);
  CHECK(sec.find("K topic shift") != std::string::npos);
  CHECK(sec.find("S structure repaired") != std::string::npos);
}

TEST_CASE("ksodi.curves names the turns of build-up, breaks and repairs", "[curves]") {
  ksodi::CurvesCollector c({});
  auto rec = [](int turn, double fill, double decay, double repair) {
    return json{{"conversation_id", "c/1"},
                {"turn", turn},
                {"s_t", {{"S", 0.5}, {"repair", repair}, {"decay", 0.0}, {"terms", {{"repair", {{"trigger", {{"cue", "again"}}}}}}}}},
                {"k_t", {{"K", 0.6}, {"fill", fill}, {"decay", decay}, {"shift", 0.0},
                         {"terms", {{"fill", {{"trigger", {{"dimensions_gained", {"D"}}}}}}, {"decay", {{"trigger", {{"dimensions_lost", {"D"}}}}}}}}}},
                {"o_t", {{"O", nullptr}, {"R_corr", 0.0}, {"drift", 0.0}}}};
  };
  c.add(rec(1, 0, 0, 0));
  c.add(rec(2, 1.0 / 6, 0, 0));
  c.add(rec(3, 0, 1.0 / 6, 0));
  c.add(rec(4, 1.0 / 6, 0, 0.2));
  TempDir d;
  auto files = c.write(d.path.string(), "curves.md");
  CHECK(files == std::vector<std::string>{"curves/c_1.png", "curves/overview.png", "curves.md"});
  CHECK(is_png(d.path / "curves" / "c_1.png"));
  std::string md = slurp(d.path / "curves.md");
  CHECK(md.find("- Context built up at turn(s): 2\n") != std::string::npos);
  CHECK(md.find("- Broken at turn(s): 3\n") != std::string::npos);
  CHECK(md.find("- Repaired at turn(s): 4\n") != std::string::npos);
  CHECK(md.find("| 4 | 0.500 | 0.600 | – | repaired: K gaps closed: +D; repaired: S structure repaired after 'again' |") != std::string::npos);
}
