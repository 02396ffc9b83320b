// fuzz_config_dir: the `--config-dir` configuration reader (frontends/chatbot_config/config.*): evaluation.yaml,
// llm_parameters.yaml, the prompt file, llm_tasks.yaml, evalgraph_models.yaml and the data file they name,
// checked against the bundled plugins (index names) as `evalgraph run --config-dir` does before any call.
//
// Input: the folder's files, each after a line `#=> <name>` (names: the five YAML files above,
// llm_system_prompts.yaml and data/example_data.csv; others are ignored). Files the input does not give are
// absent. They are written to a fresh project folder (<tmp>/config/..., <tmp>/data/..., a secret in
// <tmp>/secrets/llm_api.secret) for each input.
#include <fstream>

#include "chatbot_config/config.h"
#include "fuzz_support.h"

namespace {
namespace fs = std::filesystem;

const char *const kFiles[] = {"config/evaluation.yaml",       "config/llm_parameters.yaml",
                              "config/llm_system_prompts.yaml", "config/llm_tasks.yaml",
                              "config/evalgraph_models.yaml",   "data/example_data.csv"};

const fs::path &project() {
  static const fs::path dir = [] {
    std::string base = fs::exists("/dev/shm") ? "/dev/shm" : fs::temp_directory_path().string();
    std::string tmpl = base + "/evalgraph-fuzz-config-XXXXXX";
    if (mkdtemp(tmpl.data()) == nullptr) fuzz::fail("mkdtemp");
    fs::path d(tmpl);
    fs::create_directories(d / "config");
    fs::create_directories(d / "data");
    fs::create_directories(d / "secrets");
    std::ofstream(d / "secrets" / "llm_api.secret") << "sk-fuzz\n";
    static fs::path keep = d;
    std::atexit([] {
      std::error_code ec;
      fs::remove_all(keep, ec);
    });
    return d;
  }();
  return dir;
}

void write_files(std::string_view in) {
  const fs::path &d = project();
  std::error_code ec;
  for (const char *f : kFiles) fs::remove(d / f, ec);
  std::size_t pos = 0;
  while (pos < in.size()) {
    std::size_t start = in.find("#=> ", pos);
    if (start == std::string_view::npos) break;
    std::size_t eol = in.find('\n', start);
    if (eol == std::string_view::npos) break;
    std::string name(in.substr(start + 4, eol - start - 4));
    std::size_t next = in.find("\n#=> ", eol);
    std::string_view body = in.substr(eol + 1, next == std::string_view::npos ? std::string_view::npos : next + 1 - (eol + 1));
    pos = next == std::string_view::npos ? in.size() : next + 1;
    for (const char *f : kFiles) {
      if (name == fs::path(f).filename().string() || name == f) {
        std::ofstream(d / f, std::ios::binary).write(body.data(), static_cast<std::streamsize>(body.size()));
        break;
      }
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  fuzz::registry();
  project();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
  write_files(fuzz::view(data, size));
  fuzz::expect_config_errors("config dir", [&] {
    auto e = evalgraph::chatbot::load_experiment(project() / "config", fuzz::registry(), size % 4 == 0);
    (void)e.needs_judge();
  });
  return 0;
}
