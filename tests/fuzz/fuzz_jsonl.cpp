// fuzz_jsonl: the JSON Lines dataset reader — the engine's fast path (next_text with the members, as the
// executor reads), the parsed path (next), and a shard's skip(). Also checks the reader's promise that a line
// it hands over as text parses as JSON anywhere (lib/util/raw_json.h).
#include "fuzz_support.h"
#include "io/dataset.h"

namespace {

constexpr int kMaxRecords = 256;  // a few records per input is all the reader's state machine needs

void check_parses(const std::string &text) {
  try {
    auto j = nlohmann::json::parse(text);
    if (!j.is_object()) fuzz::fail("next_text handed over a record that is not an object", text);
  } catch (const nlohmann::json::parse_error &e) {
    fuzz::fail("next_text handed over text that nlohmann refuses", e.what());
  } catch (const nlohmann::json::out_of_range &e) {
    // A number beyond double (1e999999): accepted by the checker, refused by nlohmann (issue #15 part 3).
    fuzz::foreign_exception("jsonl record text", e);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
  static fuzz::MemFile file("fuzz_jsonl");
  const auto &path = file.write(fuzz::view(data, size));

  try {  // the executor's path
    auto reader = evalgraph::io::open_dataset(path, "jsonl", nullptr);
    std::string text;
    std::vector<evalgraph::rawjson::Member> members;
    for (int i = 0; i < kMaxRecords && reader->next_text(text, &members); ++i) {
      check_parses(text);
      for (const auto &m : members)
        if (m.value.off + m.value.len > text.size()) fuzz::fail("a member's span lies outside the record");
      (void)reader->columns();
      (void)reader->line();
    }
  } catch (const evalgraph::io::DataError &) {
  } catch (const std::exception &e) {
    fuzz::foreign_exception("jsonl next_text", e);
  }

  try {  // parsed records
    auto reader = evalgraph::io::open_dataset(path, "jsonl", nullptr);
    nlohmann::json rec;
    for (int i = 0; i < kMaxRecords && reader->next(rec); ++i)
      if (!rec.is_object()) fuzz::fail("next() returned a record that is not an object");
  } catch (const evalgraph::io::DataError &) {
  } catch (const std::exception &e) {
    fuzz::foreign_exception("jsonl next", e);
  }

  try {  // a shard passing over other shards' records, then reading one
    auto reader = evalgraph::io::open_dataset(path, "jsonl", nullptr);
    std::string text;
    for (int i = 0; i < kMaxRecords; ++i) {
      if (!(i % 3 == 2 ? reader->next_text(text) : reader->skip())) break;
    }
  } catch (const evalgraph::io::DataError &) {
  } catch (const std::exception &e) {
    fuzz::foreign_exception("jsonl skip", e);
  }
  return 0;
}
