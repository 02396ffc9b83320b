#include "chatbot_config/xlsx_reader.h"

#include <expat.h>
#include <zip.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <new>
#include <optional>
#include <stdexcept>
#include <string_view>

namespace evalgraph::chatbot {
namespace {

constexpr std::uint64_t kMiB = 1024 * 1024;
constexpr std::uint64_t kMaxSheetBytes = 256 * kMiB;          // the worksheet's XML, uncompressed
constexpr std::uint64_t kMaxSharedStringsBytes = 64 * kMiB;   // xl/sharedStrings.xml, uncompressed
constexpr std::uint64_t kMaxSmallPartBytes = 16 * kMiB;       // xl/workbook.xml and its relationships
constexpr std::size_t kMaxTextBytes = 8 * kMiB;               // one cell's or one shared string's text
constexpr std::uint64_t kMaxTotalTextBytes = 256 * kMiB;      // all cell text (shared strings are copied)
constexpr std::uint64_t kMaxCells = 10'000'000;               // rows and cells, gaps included
constexpr std::size_t kMaxColumns = 16384;                    // A to XFD, as in Excel
constexpr std::size_t kMaxRows = 1048576;                     // as in Excel

const char *const kResave = "open it in Excel or LibreOffice and save it again as .xlsx, or export the sheet as CSV";
// What to do about a damaged file.
std::string fetch_again() { return std::string("copy or download the file again, or ") + kResave; }

// An error in the reader's words: what is wrong (with the part, sheet and cell where known) and what to do.
struct ReadError : std::runtime_error {
  ReadError(const std::string &what, const std::string &todo) : std::runtime_error(what + "; " + todo) {}
};

std::string mib(std::uint64_t bytes) { return std::to_string(bytes / kMiB) + " MiB"; }

// ---- the archive (libzip) ----

class Archive {
 public:
  explicit Archive(const std::filesystem::path &file) {
    int code = 0;
    z_ = zip_open(file.c_str(), ZIP_RDONLY | ZIP_CHECKCONS, &code);
    if (z_ == nullptr) throw open_error(file, code);
  }
  ~Archive() { zip_discard(z_); }
  Archive(const Archive &) = delete;
  Archive &operator=(const Archive &) = delete;

  std::optional<zip_uint64_t> find(const std::string &name) const {
    zip_int64_t i = zip_name_locate(z_, name.c_str(), 0);
    if (i < 0) return std::nullopt;
    return static_cast<zip_uint64_t>(i);
  }

  // Passes the part's uncompressed bytes to `sink` in chunks. Refuses a part whose declared size or whose
  // inflated bytes exceed `limit`, or which inflates to more than its declared size (a ZIP bomb either way).
  void read(zip_uint64_t index, const std::string &name, std::uint64_t limit,
            const std::function<void(const char *, std::size_t)> &sink) const {
    zip_stat_t st;
    zip_stat_init(&st);
    if (zip_stat_index(z_, index, 0, &st) != 0)
      throw ReadError("the ZIP directory entry of " + name + " is damaged", kResave);
    if ((st.valid & ZIP_STAT_ENCRYPTION_METHOD) && st.encryption_method != ZIP_EM_NONE)
      throw ReadError(name + " is encrypted", "save the workbook without a password");
    if ((st.valid & ZIP_STAT_COMP_METHOD) && st.comp_method != ZIP_CM_STORE && st.comp_method != ZIP_CM_DEFLATE)
      throw ReadError(name + " is compressed with ZIP method " + std::to_string(st.comp_method) +
                          ", which .xlsx files do not use (only stored and deflated parts are read)",
                      kResave);
    const bool sized = (st.valid & ZIP_STAT_SIZE) != 0;
    if (sized && st.size > limit) throw too_large(name, limit, st.size);
    std::unique_ptr<zip_file_t, decltype(&zip_fclose)> f(zip_fopen_index(z_, index, 0), &zip_fclose);
    if (!f) throw part_error(name, zip_error_code_zip(zip_get_error(z_)));
    char buf[64 * 1024];
    std::uint64_t total = 0;
    zip_int64_t n;
    while ((n = zip_fread(f.get(), buf, sizeof buf)) > 0) {
      total += static_cast<std::uint64_t>(n);
      if (total > limit) throw too_large(name, limit, 0);
      if (sized && total > st.size)
        throw ReadError(name + " inflates to more than the " + std::to_string(st.size) +
                            " bytes its ZIP header declares (a damaged archive or a ZIP bomb)",
                        kResave);
      sink(buf, static_cast<std::size_t>(n));
    }
    if (n < 0) throw part_error(name, zip_error_code_zip(zip_file_get_error(f.get())));
  }

 private:
  static ReadError too_large(const std::string &name, std::uint64_t limit, std::uint64_t declared) {
    return ReadError(name + " is larger than " + mib(limit) + " uncompressed" +
                         (declared != 0 ? " (its ZIP header declares " + std::to_string(declared) + " bytes)"
                                        : std::string(" (counted while inflating)")) +
                         ", the most evalgraph reads from a workbook part (a ZIP bomb, or far too much data for "
                         "one sheet)",
                     "split the data set into several files, or export the sheet as CSV");
  }

  static ReadError part_error(const std::string &name, int code) {
    switch (code) {
      case ZIP_ER_CRC:
        return ReadError(name + " is damaged (its checksum does not match)", fetch_again());
      case ZIP_ER_ZLIB:
      case ZIP_ER_COMPRESSED_DATA:
      case ZIP_ER_INCONS:
      case ZIP_ER_EOF:
        return ReadError(name + " is damaged (its compressed data cannot be inflated; the file may be cut short)",
                         fetch_again());
      case ZIP_ER_NOPASSWD:
      case ZIP_ER_WRONGPASSWD:
      case ZIP_ER_ENCRNOTSUPP:
        return ReadError(name + " is encrypted", "save the workbook without a password");
      case ZIP_ER_COMPNOTSUPP:
        return ReadError(name + " uses a compression method evalgraph does not read", kResave);
      case ZIP_ER_MEMORY:
        throw std::bad_alloc();
      default:
        return ReadError("reading " + name + " from the ZIP archive failed (libzip: " + libzip_text(code) + ")", kResave);
    }
  }

  // libzip's own words for an error code.
  static std::string libzip_text(int code) {
    zip_error_t e;
    zip_error_init_with_code(&e, code);
    std::string text = zip_error_strerror(&e);
    zip_error_fini(&e);
    return text;
  }

  static ReadError open_error(const std::filesystem::path &file, int code) {
    switch (code) {
      case ZIP_ER_NOENT:
        return ReadError("the file does not exist", "check the path (data_files in evaluation.yaml)");
      case ZIP_ER_OPEN:
      case ZIP_ER_READ:
      case ZIP_ER_SEEK:
        return ReadError("cannot open or read the file", "check that it exists and is readable");
      case ZIP_ER_NOZIP: {
        char magic[8] = {};
        std::ifstream in(file, std::ios::binary);
        in.read(magic, sizeof magic);
        if (std::memcmp(magic, "\xD0\xCF\x11\xE0\xA1\xB1\x1A\xE1", 8) == 0)
          return ReadError("it is an old .xls workbook or a password-protected one, not an .xlsx (ZIP) file",
                           "save it as 'Excel workbook (.xlsx)' without a password, or export the sheet as CSV");
        return ReadError("it is not a ZIP archive, so not an .xlsx workbook (a renamed .csv or .xls file, or a "
                         "download cut short?)",
                         "save it as 'Excel workbook (.xlsx)' in Excel or LibreOffice, or export the sheet as CSV");
      }
      case ZIP_ER_INCONS:
      case ZIP_ER_EOF:
        return ReadError("its ZIP archive is damaged (cut short or inconsistent)", fetch_again());
      case ZIP_ER_MULTIDISK:
        return ReadError("it is a multi-part (spanned) ZIP archive", kResave);
      case ZIP_ER_MEMORY:
        throw std::bad_alloc();
      default:
        return ReadError("cannot open it as a ZIP archive (libzip: " + libzip_text(code) + ")", kResave);
    }
  }

  zip_t *z_ = nullptr;
};

// ---- XML (expat): namespace-aware, no DTD ----

// expat reports a namespaced name as "<namespace URI>\n<local name>".
constexpr char kNsSep = '\n';

std::string_view local_name(const XML_Char *name) {
  std::string_view n(name);
  std::size_t p = n.rfind(kNsSep);
  return p == std::string_view::npos ? n : n.substr(p + 1);
}
bool has_namespace(const XML_Char *name) { return std::strchr(name, kNsSep) != nullptr; }

// An attribute by its local name; `namespaced`: only a prefixed one (r:id), else only an unprefixed one.
const XML_Char *attribute(const XML_Char **atts, std::string_view local, bool namespaced = false) {
  for (; atts[0] != nullptr; atts += 2)
    if (local_name(atts[0]) == local && has_namespace(atts[0]) == namespaced) return atts[1];
  return nullptr;
}

// A SAX handler over one XML part. Handlers throw ReadError; the parser stops and feed() rethrows it (no
// exception crosses expat's C frames).
class XmlPart {
 public:
  explicit XmlPart(std::string part) : part_(std::move(part)) {
    p_ = XML_ParserCreateNS(nullptr, kNsSep);
    if (p_ == nullptr) throw std::bad_alloc();
    XML_SetUserData(p_, this);
    XML_SetElementHandler(p_, &XmlPart::on_start, &XmlPart::on_end);
    XML_SetCharacterDataHandler(p_, &XmlPart::on_text);
    XML_SetStartDoctypeDeclHandler(p_, &XmlPart::on_doctype);
    XML_SetEntityDeclHandler(p_, &XmlPart::on_entity);
    XML_SetParamEntityParsing(p_, XML_PARAM_ENTITY_PARSING_NEVER);
  }
  virtual ~XmlPart() { XML_ParserFree(p_); }
  XmlPart(const XmlPart &) = delete;
  XmlPart &operator=(const XmlPart &) = delete;

  void feed(const char *data, std::size_t len, bool final) {
    if (XML_Parse(p_, data, static_cast<int>(len), final ? 1 : 0) == XML_STATUS_OK) return;
    if (error_) std::rethrow_exception(error_);
    throw ReadError("the XML of " + part_ + " is damaged at line " + std::to_string(XML_GetCurrentLineNumber(p_)) +
                        ", column " + std::to_string(XML_GetCurrentColumnNumber(p_) + 1) + " (" +
                        XML_ErrorString(XML_GetErrorCode(p_)) + ")",
                    kResave);
  }
  void read(const Archive &zip, zip_uint64_t index, std::uint64_t limit) {
    zip.read(index, part_, limit, [this](const char *d, std::size_t n) { feed(d, n, false); });
    feed("", 0, true);
  }

 protected:
  virtual void start(std::string_view name, const XML_Char **atts) = 0;
  virtual void end(std::string_view name) = 0;
  virtual void text(const char *s, std::size_t len) = 0;
  const std::string &part() const { return part_; }
  std::string where() const { return " (" + part_ + " line " + std::to_string(XML_GetCurrentLineNumber(p_)) + ")"; }

 private:
  template <class F>
  static void guarded(void *self, F &&f) {
    auto *x = static_cast<XmlPart *>(self);
    if (x->error_) return;
    try {
      f(*x);
    } catch (...) {
      x->error_ = std::current_exception();
      XML_StopParser(x->p_, XML_FALSE);
    }
  }
  static void XMLCALL on_start(void *self, const XML_Char *name, const XML_Char **atts) {
    guarded(self, [&](XmlPart &x) { x.start(local_name(name), atts); });
  }
  static void XMLCALL on_end(void *self, const XML_Char *name) {
    guarded(self, [&](XmlPart &x) { x.end(local_name(name)); });
  }
  static void XMLCALL on_text(void *self, const XML_Char *s, int len) {
    guarded(self, [&](XmlPart &x) { x.text(s, static_cast<std::size_t>(len)); });
  }
  static void XMLCALL on_doctype(void *self, const XML_Char *, const XML_Char *, const XML_Char *, int) {
    guarded(self, [](XmlPart &x) -> void {
      throw ReadError(x.part_ + " has a DOCTYPE declaration" + x.where() +
                          ": a workbook never has one, and its entities could expand without bound (a 'billion "
                          "laughs' attack), so evalgraph does not read DTDs",
                      "do not use a file of unknown origin; " + std::string(kResave));
    });
  }
  static void XMLCALL on_entity(void *self, const XML_Char *, int, const XML_Char *, int, const XML_Char *,
                                const XML_Char *, const XML_Char *, const XML_Char *) {
    guarded(self, [](XmlPart &x) -> void {
      throw ReadError(x.part_ + " declares an XML entity" + x.where() + ", which evalgraph does not expand",
                      "do not use a file of unknown origin; " + std::string(kResave));
    });
  }

  std::string part_;
  XML_Parser p_ = nullptr;
  std::exception_ptr error_;
};

// Appends text to a cell or shared string, refusing more than kMaxTextBytes.
void append_text(std::string &to, const char *s, std::size_t len, const std::function<std::string()> &what) {
  if (to.size() + len > kMaxTextBytes)
    throw ReadError(what() + " holds more than " + mib(kMaxTextBytes) + " of text, the most evalgraph reads in one cell",
                    "shorten that cell, or export the sheet as CSV");
  to.append(s, len);
}

// xl/workbook.xml: the first <sheet>'s name and relationship id.
class WorkbookPart final : public XmlPart {
 public:
  using XmlPart::XmlPart;
  bool found = false;
  std::string name, rid;

 protected:
  void start(std::string_view n, const XML_Char **atts) override {
    if (found || n != "sheet") return;
    found = true;
    if (const XML_Char *v = attribute(atts, "name")) name = v;
    if (const XML_Char *v = attribute(atts, "id", true)) rid = v;
  }
  void end(std::string_view) override {}
  void text(const char *, std::size_t) override {}
};

// xl/_rels/workbook.xml.rels: relationship id -> target, and the shared strings' target.
class RelsPart final : public XmlPart {
 public:
  using XmlPart::XmlPart;
  std::map<std::string, std::string> targets;
  std::string shared_strings;

 protected:
  void start(std::string_view n, const XML_Char **atts) override {
    if (n != "Relationship") return;
    const XML_Char *id = attribute(atts, "Id"), *target = attribute(atts, "Target"), *type = attribute(atts, "Type");
    if (id == nullptr || target == nullptr) return;
    targets[id] = target;
    std::string_view t = type != nullptr ? type : "";
    if (shared_strings.empty() && t.size() >= 14 && t.substr(t.size() - 14) == "/sharedStrings") shared_strings = target;
  }
  void end(std::string_view) override {}
  void text(const char *, std::size_t) override {}
};

// The text of <t> elements, phonetic runs (<rPh>) left out: a shared string <si> or an inline string <is>.
struct RunText {
  int depth = 0, t_depth = 0, rph_depth = 0;
  void start(std::string_view n, int d) {
    if (n == "rPh" && rph_depth == 0) rph_depth = d;
    else if (n == "t" && rph_depth == 0 && t_depth == 0) t_depth = d;
  }
  void end(int d) {
    if (d == t_depth) t_depth = 0;
    if (d == rph_depth) rph_depth = 0;
  }
  bool collecting() const { return t_depth != 0; }
};

// xl/sharedStrings.xml: <sst><si>…</si>…</sst>.
class SharedStringsPart final : public XmlPart {
 public:
  using XmlPart::XmlPart;
  std::vector<std::string> strings;

 protected:
  void start(std::string_view n, const XML_Char **) override {
    ++depth_;
    if (si_depth_ == 0) {
      if (n == "si") {
        si_depth_ = depth_;
        runs_ = RunText{};
        cur_.clear();
      }
      return;
    }
    runs_.start(n, depth_);
  }
  void end(std::string_view) override {
    if (depth_ == si_depth_) {
      strings.push_back(std::move(cur_));
      cur_ = std::string();
      si_depth_ = 0;
    } else if (si_depth_ != 0) {
      runs_.end(depth_);
    }
    --depth_;
  }
  void text(const char *s, std::size_t len) override {
    if (si_depth_ != 0 && runs_.collecting())
      append_text(cur_, s, len, [&] { return "shared string " + std::to_string(strings.size()) + where(); });
  }

 private:
  int depth_ = 0, si_depth_ = 0;
  RunText runs_;
  std::string cur_;
};

std::string column_letters(std::size_t col) {
  std::string s;
  for (std::size_t c = col + 1; c > 0; c = (c - 1) / 26) s.insert(s.begin(), static_cast<char>('A' + (c - 1) % 26));
  return s;
}

// The worksheet: <sheetData><row r="…"><c r="…" t="…"><v>…</v> | <is>…</is></c>…</row>…</sheetData>.
class SheetPart final : public XmlPart {
 public:
  SheetPart(std::string part, std::string sheet_name, const std::vector<std::string> *shared, bool has_shared)
      : XmlPart(std::move(part)), sheet_(std::move(sheet_name)), shared_(shared), has_shared_(has_shared) {}
  std::vector<std::vector<std::string>> rows;

 protected:
  void start(std::string_view n, const XML_Char **atts) override {
    ++depth_;
    if (data_depth_ == 0) {
      if (n == "sheetData") data_depth_ = depth_;
    } else if (row_depth_ == 0) {
      if (n == "row") start_row(atts);
    } else if (cell_depth_ == 0) {
      if (n == "c") start_cell(atts);
    } else if (depth_ == cell_depth_ + 1 && n == "v" && v_depth_ == 0 && is_depth_ == 0) {
      v_depth_ = depth_;
    } else if (depth_ == cell_depth_ + 1 && n == "is" && v_depth_ == 0 && is_depth_ == 0) {
      is_depth_ = depth_;
    } else if (is_depth_ != 0) {
      runs_.start(n, depth_);
    }
  }
  void end(std::string_view) override {
    if (depth_ == cell_depth_) finish_cell();
    else if (depth_ == row_depth_) row_depth_ = 0;
    else if (depth_ == data_depth_) data_depth_ = 0;
    else if (depth_ == v_depth_) v_depth_ = 0;
    else if (depth_ == is_depth_) is_depth_ = 0;
    else if (is_depth_ != 0) runs_.end(depth_);
    --depth_;
  }
  void text(const char *s, std::size_t len) override {
    if (v_depth_ != 0 || (is_depth_ != 0 && runs_.collecting()))
      append_text(v_depth_ != 0 ? value_ : inline_, s, len, [&] { return cell(); });
  }

 private:
  std::string cell() const {
    return "sheet '" + sheet_ + "', cell " + (ref_.empty() ? column_letters(col_) + std::to_string(rows.size()) : ref_) +
           where();
  }

  void count(std::uint64_t n) {
    cells_ += n;
    if (cells_ > kMaxCells)
      throw ReadError("sheet '" + sheet_ + "' has more than " + std::to_string(kMaxCells) +
                          " cells (empty rows and cells before the last used one included)" + where() +
                          ", the most evalgraph reads",
                      "split the data set into several files, or delete unused rows and columns");
  }

  void start_row(const XML_Char **atts) {
    row_depth_ = depth_;
    std::size_t want = rows.size();
    if (const XML_Char *r = attribute(atts, "r")) {
      std::string_view s(r);
      std::uint64_t v = 0;
      bool ok = !s.empty() && s.size() <= 7;
      for (char ch : s) {
        ok = ok && ch >= '0' && ch <= '9';
        v = v * 10 + static_cast<std::uint64_t>(ch - '0');
      }
      if (!ok || v == 0 || v > kMaxRows)
        throw ReadError("sheet '" + sheet_ + "' has a row numbered '" + std::string(s) + "', but rows are numbered 1 to " +
                            std::to_string(kMaxRows) + where(),
                        kResave);
      want = static_cast<std::size_t>(v - 1);
    }
    if (want > rows.size()) count(want - rows.size());
    while (rows.size() < want) rows.emplace_back();
    count(1);
    rows.emplace_back();
  }

  void start_cell(const XML_Char **atts) {
    cell_depth_ = depth_;
    auto &row = rows.back();
    const XML_Char *r = attribute(atts, "r");
    const XML_Char *t = attribute(atts, "t");
    ref_ = r != nullptr ? r : "";
    type_ = t != nullptr ? t : "";
    value_.clear();
    inline_.clear();
    runs_ = RunText{};
    col_ = row.size();
    if (ref_.empty()) return;
    std::size_t c = 0, i = 0;
    for (; i < ref_.size() && c <= kMaxColumns; ++i) {
      char ch = ref_[i];
      if (ch >= 'a' && ch <= 'z') ch = static_cast<char>(ch - 'a' + 'A');
      if (ch < 'A' || ch > 'Z') break;
      c = c * 26 + static_cast<std::size_t>(ch - 'A' + 1);
    }
    if (i == 0)
      throw ReadError("sheet '" + sheet_ + "' has a cell with the reference '" + ref_ + "'" + where() +
                          ", which names no column",
                      kResave);
    if (c > kMaxColumns)
      throw ReadError("cell " + ref_ + " of sheet '" + sheet_ + "' lies beyond column XFD, the last of a sheet's " +
                          std::to_string(kMaxColumns) + where(),
                      kResave);
    col_ = c - 1;
  }

  void finish_cell() {
    cell_depth_ = v_depth_ = is_depth_ = 0;
    std::string value = type_ == "inlineStr" ? std::move(inline_) : std::move(value_);
    if (type_ == "s") {
      std::size_t i = 0;
      bool ok = !value.empty() && value.size() <= 10;
      for (char ch : value) {
        ok = ok && ch >= '0' && ch <= '9';
        i = i * 10 + static_cast<std::size_t>(ch - '0');
      }
      if (!ok)
        throw ReadError(cell() + " is a shared string cell, but its index '" + value + "' is not a number", kResave);
      if (i >= shared_->size())
        throw ReadError(cell() + " refers to shared string " + std::to_string(i) + ", but the workbook has " +
                            (has_shared_ ? std::to_string(shared_->size()) + " (xl/sharedStrings.xml)"
                                         : std::string("no shared strings part")),
                        kResave);
      value = (*shared_)[i];
    } else if (type_ == "b") {
      value = value == "1" ? "TRUE" : "FALSE";
    }
    auto &row = rows.back();
    if (row.size() <= col_) {
      count(col_ + 1 - row.size());
      row.resize(col_ + 1);
    }
    text_bytes_ += value.size();
    if (text_bytes_ > kMaxTotalTextBytes)
      throw ReadError("sheet '" + sheet_ + "' holds more than " + mib(kMaxTotalTextBytes) + " of cell text" + where() +
                          ", the most evalgraph reads",
                      "split the data set into several files");
    row[col_] = std::move(value);
    value_ = std::string();
    inline_ = std::string();
  }

  std::string sheet_;
  const std::vector<std::string> *shared_;
  bool has_shared_;
  int depth_ = 0, data_depth_ = 0, row_depth_ = 0, cell_depth_ = 0, v_depth_ = 0, is_depth_ = 0;
  RunText runs_;
  std::string ref_, type_, value_, inline_;
  std::size_t col_ = 0;
  std::uint64_t cells_ = 0, text_bytes_ = 0;
};

// A relationship target, relative to xl/ unless absolute; "." and ".." resolved.
std::string resolve(const std::string &target) {
  std::string path = !target.empty() && target[0] == '/' ? target.substr(1) : "xl/" + target;
  std::vector<std::string> parts;
  std::size_t p = 0;
  while (p <= path.size()) {
    std::size_t q = path.find('/', p);
    if (q == std::string::npos) q = path.size();
    std::string seg = path.substr(p, q - p);
    if (seg == "..") {
      if (!parts.empty()) parts.pop_back();
    } else if (!seg.empty() && seg != ".") {
      parts.push_back(seg);
    }
    p = q + 1;
  }
  std::string out;
  for (const auto &s : parts) out += (out.empty() ? "" : "/") + s;
  return out;
}

std::vector<std::vector<std::string>> read(const std::filesystem::path &file) {
  Archive zip(file);
  // The first sheet: workbook.xml names it and its relationship, the relationships its part.
  std::string sheet_path = "xl/worksheets/sheet1.xml", sheet_name = "sheet1";
  std::string shared_path = "xl/sharedStrings.xml";
  auto wb_i = zip.find("xl/workbook.xml");
  auto rels_i = zip.find("xl/_rels/workbook.xml.rels");
  if (wb_i && rels_i) {
    WorkbookPart wb("xl/workbook.xml");
    wb.read(zip, *wb_i, kMaxSmallPartBytes);
    RelsPart rels("xl/_rels/workbook.xml.rels");
    rels.read(zip, *rels_i, kMaxSmallPartBytes);
    if (wb.found && !wb.name.empty()) sheet_name = wb.name;
    if (auto it = rels.targets.find(wb.rid); wb.found && it != rels.targets.end()) sheet_path = resolve(it->second);
    if (!rels.shared_strings.empty()) shared_path = resolve(rels.shared_strings);
  }
  auto sheet_i = zip.find(sheet_path);
  if (!sheet_i)
    throw ReadError("the first sheet '" + sheet_name + "' should be the part " + sheet_path +
                        ", but the archive has no such part",
                    kResave);
  SharedStringsPart shared(shared_path);
  auto shared_i = zip.find(shared_path);
  if (shared_i) shared.read(zip, *shared_i, kMaxSharedStringsBytes);
  SheetPart sheet(sheet_path, sheet_name, &shared.strings, shared_i.has_value());
  sheet.read(zip, *sheet_i, kMaxSheetBytes);
  return std::move(sheet.rows);
}

}  // namespace

std::vector<std::vector<std::string>> read_xlsx(const std::filesystem::path &file) {
  try {
    return read(file);
  } catch (const ReadError &e) {
    throw std::runtime_error(file.string() + ": cannot read the workbook: " + e.what());
  } catch (const std::bad_alloc &) {
    throw std::runtime_error(file.string() + ": cannot read the workbook: out of memory; export the sheet as CSV, "
                                             "or free memory");
  }
}

}  // namespace evalgraph::chatbot
