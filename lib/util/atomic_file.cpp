#include "util/atomic_file.h"

#include <fstream>
#include <stdexcept>

namespace evalgraph {
void write_file_atomically(const std::filesystem::path &path, const std::string &content) {
  std::filesystem::path tmp = path;
  tmp += ".partial";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
    out.flush();
    if (!out) throw std::runtime_error("cannot write " + tmp.string() + " (disk full or no permission?)");
  }
  std::filesystem::rename(tmp, path);
}
}  // namespace evalgraph
