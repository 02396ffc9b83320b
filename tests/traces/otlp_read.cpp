// eg-otlp-read: reads a trace file with the engine's trace reader (dataset format otlp) and prints what it read
// and how fast, as one JSON line: records, bytes, seconds, MB/s and the reader's counts (run.json's
// dataset_reader). bench/traces_bench.sh measures the reader with it; --print writes the records (JSONL) to stdout.
//   eg-otlp-read FILE [--logs FILE] [--unit trace|llm_call] [--print]
#include <chrono>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>

#include "io/dataset.h"

#ifdef EVALGRAPH_WITH_MIMALLOC
#include <mimalloc.h>
#endif

int main(int argc, char **argv) {
#ifdef EVALGRAPH_WITH_MIMALLOC
  mi_option_enable(mi_option_large_os_pages);  // as the evalgraph executable does (cli/main.cpp)
#endif
  if (argc < 2) {
    std::fprintf(stderr, "usage: eg-otlp-read FILE [--logs FILE] [--unit trace|llm_call] [--print]\n");
    return 2;
  }
  nlohmann::json options = nlohmann::json::object();
  bool print = false;
  for (int i = 2; i < argc; ++i) {
    if (std::strcmp(argv[i], "--logs") == 0 && i + 1 < argc)
      options["logs"] = argv[++i];
    else if (std::strcmp(argv[i], "--unit") == 0 && i + 1 < argc)
      options["unit"] = argv[++i];
    else if (std::strcmp(argv[i], "--print") == 0)
      print = true;
  }
  try {
    const auto start = std::chrono::steady_clock::now();
    auto reader = evalgraph::io::open_dataset(argv[1], "otlp", options);
    std::string text;
    std::size_t records = 0, failed = 0;
    while (reader->next_text(text)) {
      ++records;
      if (!reader->record_problem().empty()) ++failed;
      if (print) std::cout << text << '\n';
    }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    nlohmann::json stats = reader->stats();
    const double mb = stats.value("bytes", 0.0) / 1e6;
    nlohmann::json out = {{"records", records}, {"failed_records", failed},         {"seconds", s},
                          {"mb", mb},           {"mb_per_s", s > 0 ? mb / s : 0.0}, {"reader", stats}};
    std::cerr << out.dump() << std::endl;
    return 0;
  } catch (const evalgraph::io::DataError &e) {
    std::cerr << "eg-otlp-read: " << e.what() << std::endl;
    return 2;
  }
}
