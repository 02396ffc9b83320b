// fuzz_xlsx: the .xlsx reader of the chatbot data files (frontends/chatbot_config/xlsx_reader.h): ZIP container,
// shared strings, the first worksheet.
#include <stdexcept>

#include "chatbot_config/xlsx_reader.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
  static fuzz::MemFile file("fuzz_xlsx");
  const auto &path = file.write(fuzz::view(data, size));
  try {
    auto rows = evalgraph::chatbot::read_xlsx(path);
    std::size_t cells = 0;
    for (const auto &r : rows) cells += r.size();
    (void)cells;
  } catch (const std::runtime_error &) {  // the reader's documented error
  } catch (const std::exception &e) {
    fuzz::foreign_exception("xlsx", e);
  }
  return 0;
}
