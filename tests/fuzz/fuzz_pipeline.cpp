// fuzz_pipeline: the pipeline YAML loader and validator — parse_pipeline (YAML, shape checks) and build_plan
// (node types, the `with:` parameters against each plugin's JSON Schema, ports, the DAG) against the bundled
// plugins and the columns of the shipped data sets, then the DOT graph. Nothing is run or read from disk.
#include <set>

#include "config/pipeline.h"
#include "fuzz_support.h"
#include "graph/plan.h"

namespace {

// The columns of every shipped data set (as `evalgraph validate` would see them), so that real pipelines
// get past the port checks.
const std::vector<std::string> &columns() {
  static const std::vector<std::string> cols = [] {
    std::vector<std::string> out;
    std::set<std::string> seen;
    for (const char *f : {"ksodi-standard.yaml", "ksodi-full.yaml", "chatbot-eval.yaml", "compression-eval.yaml"}) {
      try {
        auto p = evalgraph::load_pipeline(std::filesystem::path(EVALGRAPH_FUZZ_REPO_DIR) / "pipelines" / f);
        for (auto &c : evalgraph::read_dataset_columns(p))
          if (seen.insert(c).second) out.push_back(c);
      } catch (const std::exception &e) {
        std::fprintf(stderr, "fuzz_pipeline: cannot read the columns of %s: %s\n", f, e.what());
      }
    }
    return out;
  }();
  return cols;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  fuzz::registry();
  columns();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
  const std::string text(fuzz::view(data, size));
  fuzz::expect_config_errors("pipeline", [&] {
    evalgraph::Pipeline p = evalgraph::parse_pipeline(text, "/fuzz/pipeline.yaml");
    evalgraph::Plan plan = evalgraph::build_plan(p, fuzz::registry(), columns());
    (void)evalgraph::to_dot(p, plan);
  });
  return 0;
}
