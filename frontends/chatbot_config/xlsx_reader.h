#pragma once
// A small .xlsx reader for data files: the first worksheet as rows of text cells (shared strings, inline
// strings, numbers as written, booleans as TRUE/FALSE, empty cells as ""). Formulas give their cached value.
// The archive is read with libzip and the XML with expat, both hardened for files from elsewhere:
//   - a part larger than its bound is refused, by its declared size and by the bytes actually inflated
//     (sheet 256 MiB, shared strings 64 MiB, workbook and relationships 16 MiB): no ZIP bomb gets through;
//   - only stored or deflated, unencrypted parts are read;
//   - an XML part with a DOCTYPE is refused (no DTD, no entity declarations, so no entity expansion);
//   - at most 10 million cells (gaps included, columns A to XFD, rows 1 to 1048576), 8 MiB of text in one
//     cell or shared string, 256 MiB of cell text in all.
#include <filesystem>
#include <string>
#include <vector>

namespace evalgraph::chatbot {

// Throws std::runtime_error "<file>: cannot read the workbook: <what> [(part, sheet, cell)]; <what to do>".
std::vector<std::vector<std::string>> read_xlsx(const std::filesystem::path &file);

}  // namespace evalgraph::chatbot
