#include "util/junit.h"

#include <fmt/format.h>

#include <evalgraph/utf8.hpp>

namespace evalgraph::junit {

namespace {

// Escapes for an attribute or text node. Characters XML 1.0 forbids (C0 controls but tab, CR, LF) become
// U+FFFD, as do bytes that are not UTF-8 (a value may come from any data).
std::string esc(const std::string &in) {
  std::string out;
  out.reserve(in.size() + 16);
  for (std::size_t i = 0; i < in.size(); ++i) {
    const char ch = in[i];
    if (static_cast<unsigned char>(ch) >= 0x80) {
      const std::size_t len = utf8::sequence_length(in, i);
      if (len == 0) out += "\xEF\xBF\xBD";
      else out.append(in, i, len), i += len - 1;
      continue;
    }
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      case '\n': out += "&#10;"; break;
      case '\r': out += "&#13;"; break;
      case '\t': out += "&#9;"; break;
      default: out += static_cast<unsigned char>(ch) < 0x20 ? std::string("\xEF\xBF\xBD") : std::string(1, ch);
    }
  }
  return out;
}

// Text content keeps its line breaks as they are (an attribute needs them escaped).
std::string text(const std::string &s) {
  std::string e = esc(s);
  std::string out;
  for (std::size_t i = 0; i < e.size(); ++i) {
    if (e.compare(i, 5, "&#10;") == 0) {
      out += '\n';
      i += 4;
    } else {
      out += e[i];
    }
  }
  return out;
}

}  // namespace

std::string document(const std::string &suite, const std::vector<Case> &cases, double seconds) {
  std::size_t failures = 0;
  for (const auto &c : cases) failures += c.failed ? 1 : 0;
  std::string o = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  o += fmt::format("<testsuites name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"0\" time=\"{:.3f}\">\n", esc(suite),
                   cases.size(), failures, seconds);
  o += fmt::format("  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"0\" time=\"{:.3f}\">\n",
                   esc(suite), cases.size(), failures, seconds);
  for (const auto &c : cases) {
    o += fmt::format("    <testcase classname=\"{}\" name=\"{}\" time=\"0\"", esc(c.classname), esc(c.name));
    if (!c.failed && c.details.empty()) {
      o += "/>\n";
      continue;
    }
    o += ">\n";
    if (c.failed)
      o += fmt::format("      <failure message=\"{}\" type=\"expectation\">{}</failure>\n", esc(c.message), text(c.details));
    else
      o += fmt::format("      <system-out>{}</system-out>\n", text(c.details));
    o += "    </testcase>\n";
  }
  o += "  </testsuite>\n</testsuites>\n";
  return o;
}

}  // namespace evalgraph::junit
