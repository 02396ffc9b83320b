// fuzz_otlp: the trace reader (dataset format otlp, engine/io/otlp_*): the input is a trace file (export
// requests per line, or one document); it is read as a trace (and again per LLM call) to its end. Every record
// handed out must parse as a JSON object; the reader's counts must say how many records it wrote.
#include "fuzz_support.h"
#include "io/dataset.h"

namespace {

void read_all(const std::filesystem::path &path, const nlohmann::json &options) {
  auto reader = evalgraph::io::open_dataset(path, "otlp", options);
  std::string text;
  std::vector<evalgraph::rawjson::Member> members;
  std::size_t n = 0;
  while (reader->next_text(text, &members)) {
    ++n;
    try {
      if (!nlohmann::json::parse(text).is_object()) fuzz::fail("a trace record that is not an object", text);
    } catch (const nlohmann::json::exception &e) {
      fuzz::fail("a trace record nlohmann refuses", e.what());
    }
    for (const auto &m : members)
      if (m.value.off + m.value.len > text.size()) fuzz::fail("a member's span lies outside the record");
  }
  const nlohmann::json stats = reader->stats();
  if (stats.value("records", std::size_t{0}) != n)
    fuzz::fail("the reader's record count differs from what it handed out");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
  static fuzz::MemFile file("fuzz_otlp");
  const auto &path = file.write(fuzz::view(data, size));
  for (const char *unit : {"trace", "llm_call"}) {
    try {
      read_all(path, {{"unit", unit}, {"max_trace_spans", 64}});
    } catch (const evalgraph::io::DataError &) {
    } catch (const std::exception &e) {
      fuzz::foreign_exception("otlp reader", e);
    }
  }
  return 0;
}
