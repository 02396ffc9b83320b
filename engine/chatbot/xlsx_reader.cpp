#include "chatbot/xlsx_reader.h"

#include <zlib.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>

namespace evalgraph::chatbot {
namespace {

std::uint32_t u32(const std::string &b, std::size_t at) {
  if (at + 4 > b.size()) throw std::runtime_error("truncated ZIP structure");
  return static_cast<std::uint32_t>(static_cast<unsigned char>(b[at])) |
         static_cast<std::uint32_t>(static_cast<unsigned char>(b[at + 1])) << 8 |
         static_cast<std::uint32_t>(static_cast<unsigned char>(b[at + 2])) << 16 |
         static_cast<std::uint32_t>(static_cast<unsigned char>(b[at + 3])) << 24;
}
std::uint16_t u16(const std::string &b, std::size_t at) {
  if (at + 2 > b.size()) throw std::runtime_error("truncated ZIP structure");
  return static_cast<std::uint16_t>(static_cast<unsigned char>(b[at]) | static_cast<unsigned char>(b[at + 1]) << 8);
}

struct Entry {
  std::uint16_t method = 0;
  std::uint32_t csize = 0, usize = 0, local = 0;
};

class Zip {
 public:
  explicit Zip(std::string bytes) : b_(std::move(bytes)) {
    if (b_.size() < 22) throw std::runtime_error("not a ZIP file (too short)");
    std::size_t eocd = std::string::npos;
    for (std::size_t i = b_.size() - 22 + 1; i-- > 0 && b_.size() - i < 22 + 65536;)
      if (u32(b_, i) == 0x06054b50) {
        eocd = i;
        break;
      }
    if (eocd == std::string::npos) throw std::runtime_error("not a ZIP file (no end of central directory)");
    std::size_t n = u16(b_, eocd + 10), off = u32(b_, eocd + 16);
    for (std::size_t k = 0; k < n; ++k) {
      if (u32(b_, off) != 0x02014b50) throw std::runtime_error("damaged ZIP central directory");
      Entry e;
      e.method = u16(b_, off + 10);
      e.csize = u32(b_, off + 20);
      e.usize = u32(b_, off + 24);
      std::size_t nl = u16(b_, off + 28), xl = u16(b_, off + 30), cl = u16(b_, off + 32);
      e.local = u32(b_, off + 42);
      if (off + 46 + nl > b_.size()) throw std::runtime_error("damaged ZIP central directory");
      entries_[b_.substr(off + 46, nl)] = e;
      off += 46 + nl + xl + cl;
    }
  }
  bool has(const std::string &name) const { return entries_.count(name) != 0; }
  std::string read(const std::string &name) const {
    auto it = entries_.find(name);
    if (it == entries_.end()) throw std::runtime_error("the workbook has no " + name);
    const Entry &e = it->second;
    if (u32(b_, e.local) != 0x04034b50) throw std::runtime_error("damaged ZIP entry " + name);
    std::size_t data = e.local + 30 + u16(b_, e.local + 26) + u16(b_, e.local + 28);
    if (data + e.csize > b_.size()) throw std::runtime_error("truncated ZIP entry " + name);
    if (e.method == 0) return b_.substr(data, e.csize);
    if (e.method != 8) throw std::runtime_error("unsupported ZIP compression method in " + name);
    std::string out(e.usize, '\0');
    z_stream z{};
    if (inflateInit2(&z, -MAX_WBITS) != Z_OK) throw std::runtime_error("zlib init failed");
    z.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(b_.data() + data));
    z.avail_in = e.csize;
    z.next_out = reinterpret_cast<Bytef *>(out.data());
    z.avail_out = e.usize;
    int rc = inflate(&z, Z_FINISH);
    inflateEnd(&z);
    if (rc != Z_STREAM_END) throw std::runtime_error("cannot decompress " + name);
    return out;
  }

 private:
  std::string b_;
  std::map<std::string, Entry> entries_;
};

void append_utf8(std::string &out, unsigned long cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

std::string unescape(const std::string &s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '&') {
      out += s[i];
      continue;
    }
    std::size_t semi = s.find(';', i);
    if (semi == std::string::npos) {
      out += s[i];
      continue;
    }
    std::string ent = s.substr(i + 1, semi - i - 1);
    if (ent == "amp") out += '&';
    else if (ent == "lt") out += '<';
    else if (ent == "gt") out += '>';
    else if (ent == "quot") out += '"';
    else if (ent == "apos") out += '\'';
    else if (!ent.empty() && ent[0] == '#') {
      unsigned long cp = ent.size() > 1 && (ent[1] == 'x' || ent[1] == 'X') ? std::stoul(ent.substr(2), nullptr, 16)
                                                                              : std::stoul(ent.substr(1));
      append_utf8(out, cp);
    } else {
      out += s.substr(i, semi - i + 1);
    }
    i = semi;
  }
  return out;
}

// An attribute's value in a start tag's text (e.g. ` r="A1" t="s"`).
std::string attr(const std::string &tag, const std::string &name) {
  std::size_t p = 0;
  while ((p = tag.find(name + "=", p)) != std::string::npos) {
    if (p == 0 || tag[p - 1] == ' ' || tag[p - 1] == '\t' || tag[p - 1] == '\n' || tag[p - 1] == '\r') {
      char q = tag[p + name.size() + 1];
      std::size_t end = tag.find(q, p + name.size() + 2);
      if (end == std::string::npos) return "";
      return unescape(tag.substr(p + name.size() + 2, end - p - name.size() - 2));
    }
    p += name.size();
  }
  return "";
}

// Concatenates the text of every <t ...>...</t> between from and to (rich text runs included; phonetic
// runs <rPh> skipped).
std::string text_runs(const std::string &x, std::size_t from, std::size_t to) {
  std::string out;
  std::size_t p = from;
  while (true) {
    std::size_t t = x.find("<t", p);
    if (t == std::string::npos || t >= to) break;
    char next = x[t + 2];
    if (next != '>' && next != ' ') {
      p = t + 2;
      continue;
    }
    std::size_t rph = x.rfind("<rPh", t);
    std::size_t rph_end = rph == std::string::npos ? std::string::npos : x.find("</rPh>", rph);
    std::size_t gt = x.find('>', t);
    if (gt == std::string::npos) break;
    if (x[gt - 1] == '/') {
      p = gt + 1;
      continue;
    }
    std::size_t end = x.find("</t>", gt);
    if (end == std::string::npos || end > to) break;
    bool phonetic = rph != std::string::npos && rph >= from && rph_end != std::string::npos && rph_end > t;
    if (!phonetic) out += unescape(x.substr(gt + 1, end - gt - 1));
    p = end + 4;
  }
  return out;
}

int column_index(const std::string &ref) {
  int c = 0;
  for (char ch : ref) {
    if (ch >= 'A' && ch <= 'Z') c = c * 26 + (ch - 'A' + 1);
    else break;
  }
  return c - 1;
}

std::string first_sheet_path(const Zip &z) {
  if (!z.has("xl/workbook.xml") || !z.has("xl/_rels/workbook.xml.rels")) return "xl/worksheets/sheet1.xml";
  std::string wb = z.read("xl/workbook.xml");
  std::size_t s = wb.find("<sheet ");
  if (s == std::string::npos) return "xl/worksheets/sheet1.xml";
  std::string tag = wb.substr(s, wb.find('>', s) - s);
  std::string rid = attr(tag, "r:id");
  std::string rels = z.read("xl/_rels/workbook.xml.rels");
  for (std::size_t p = 0; (p = rels.find("<Relationship ", p)) != std::string::npos; ++p) {
    std::string rt = rels.substr(p, rels.find('>', p) - p);
    if (attr(rt, "Id") != rid) continue;
    std::string target = attr(rt, "Target");
    if (!target.empty() && target[0] == '/') return target.substr(1);
    return "xl/" + target;
  }
  return "xl/worksheets/sheet1.xml";
}

}  // namespace

std::vector<std::vector<std::string>> read_xlsx(const std::filesystem::path &file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw std::runtime_error(file.string() + ": cannot open the file");
  std::stringstream ss;
  ss << in.rdbuf();
  try {
    Zip z(ss.str());
    std::vector<std::string> shared;
    if (z.has("xl/sharedStrings.xml")) {
      std::string x = z.read("xl/sharedStrings.xml");
      for (std::size_t p = 0; (p = x.find("<si", p)) != std::string::npos;) {
        std::size_t end = x.find("</si>", p);
        std::size_t gt = x.find('>', p);
        if (gt != std::string::npos && x[gt - 1] == '/') {
          shared.emplace_back();
          p = gt + 1;
          continue;
        }
        if (end == std::string::npos) break;
        shared.push_back(text_runs(x, p, end));
        p = end + 5;
      }
    }
    std::string x = z.read(first_sheet_path(z));
    std::vector<std::vector<std::string>> rows;
    for (std::size_t p = 0; (p = x.find("<row", p)) != std::string::npos;) {
      std::size_t gt = x.find('>', p);
      if (gt == std::string::npos) break;
      std::string rtag = x.substr(p, gt - p);
      std::string rnum = attr(rtag, "r");
      std::size_t want = rnum.empty() ? rows.size() : std::stoul(rnum) - 1;
      while (rows.size() < want) rows.emplace_back();
      rows.emplace_back();
      auto &row = rows.back();
      if (x[gt - 1] == '/') {
        p = gt + 1;
        continue;
      }
      std::size_t rend = x.find("</row>", gt);
      if (rend == std::string::npos) rend = x.size();
      for (std::size_t c = x.find("<c", gt); c != std::string::npos && c < rend; c = x.find("<c", c + 2)) {
        char nx = x[c + 2];
        if (nx != ' ' && nx != '>' && nx != '/') continue;
        std::size_t cgt = x.find('>', c);
        std::string ctag = x.substr(c, cgt - c);
        std::string ref = attr(ctag, "r"), type = attr(ctag, "t");
        int col = ref.empty() ? static_cast<int>(row.size()) : column_index(ref);
        std::string value;
        if (x[cgt - 1] != '/') {
          std::size_t cend = x.find("</c>", cgt);
          if (cend == std::string::npos || cend > rend) cend = rend;
          if (type == "inlineStr") {
            value = text_runs(x, cgt, cend);
          } else {
            std::size_t v = x.find("<v", cgt);
            if (v != std::string::npos && v < cend) {
              std::size_t vgt = x.find('>', v), vend = x.find("</v>", v);
              if (vend != std::string::npos && vend < cend) value = unescape(x.substr(vgt + 1, vend - vgt - 1));
            }
            if (type == "s") {
              std::size_t i = value.empty() ? shared.size() : std::stoul(value);
              if (i >= shared.size()) throw std::runtime_error("cell " + ref + " refers to a missing shared string");
              value = shared[i];
            } else if (type == "b") {
              value = value == "1" ? "TRUE" : "FALSE";
            }
          }
        }
        if (col < 0) continue;
        if (row.size() <= static_cast<std::size_t>(col)) row.resize(static_cast<std::size_t>(col) + 1);
        row[static_cast<std::size_t>(col)] = value;
      }
      p = rend;
    }
    return rows;
  } catch (const std::runtime_error &e) {
    throw std::runtime_error(file.string() + ": cannot read the workbook: " + e.what());
  } catch (const std::logic_error &e) {  // stoul on a damaged number
    throw std::runtime_error(file.string() + ": cannot read the workbook: damaged cell reference or index");
  }
}

}  // namespace evalgraph::chatbot
