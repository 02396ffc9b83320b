// fuzz_csv: the CSV/TSV dataset reader with its options (separator incl. auto-sniffing, quote, json_columns),
// the engine's text path and the parsed path, and the chatbot configuration's table reader (read_table).
// The last byte of the input picks the options, so seeds are plain CSV files with one extra byte.
#include "chatbot_config/config.h"
#include "fuzz_support.h"
#include "io/dataset.h"

namespace {
constexpr int kMaxRecords = 256;

nlohmann::json options_for(unsigned char sel, std::string &format) {
  static const char *const seps[] = {",", ";", "tab", "|", "auto", ",", ",", "auto"};
  nlohmann::json o = nlohmann::json::object();
  format = (sel & 0x80) ? "tsv" : "csv";
  if (format == "csv") o["separator"] = seps[sel & 7];
  switch ((sel >> 3) & 3) {
    case 1: o["quote"] = "'"; break;
    case 2: o["quote"] = ""; break;
    default: break;
  }
  if (sel & 0x20) o["json_columns"] = nlohmann::json::array({"a", "retrieved_docs", "b"});
  if (sel & 0x40) o["json_columns"] = nlohmann::json::array({"x"});
  return o;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
  if (size == 0) return 0;
  static fuzz::MemFile file("fuzz_csv");
  const unsigned char sel = data[size - 1];
  const auto &path = file.write(fuzz::view(data, size - 1));
  std::string format;
  const nlohmann::json opts = options_for(sel, format);

  try {
    auto reader = evalgraph::io::open_dataset(path, format, opts);
    std::string text;
    std::vector<evalgraph::rawjson::Member> members;
    for (int i = 0; i < kMaxRecords && reader->next_text(text, &members); ++i) {
      if (nlohmann::json::parse(text, nullptr, false).is_discarded()) fuzz::fail("CSV record text is not JSON", text);
      (void)reader->line();
    }
  } catch (const evalgraph::io::DataError &) {
  } catch (const std::exception &e) {
    fuzz::foreign_exception("csv next_text", e);
  }

  try {
    auto reader = evalgraph::io::open_dataset(path, format, opts);
    nlohmann::json rec;
    for (int i = 0; i < kMaxRecords && reader->next(rec); ++i) (void)reader->columns();
  } catch (const evalgraph::io::DataError &) {
  } catch (const std::exception &e) {
    fuzz::foreign_exception("csv next", e);
  }

  if ((sel & 7) < 2) {  // the chatbot data files: read whole, with their separator
    try {
      (void)evalgraph::chatbot::read_table(path, (sel & 7) == 0 ? "," : ";");
    } catch (const evalgraph::io::DataError &) {
    } catch (const std::exception &e) {
      fuzz::foreign_exception("csv read_table", e);
    }
  }
  return 0;
}
