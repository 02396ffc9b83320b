// The .xlsx reader (libzip + expat) on what SpreadsheetML writers produce and on hostile or damaged files:
// ZIP bombs (declared and lying sizes), DOCTYPE / entity declarations ("billion laughs", external entities),
// truncated and corrupt archives, a missing sheet, shared-string indices out of range, cell and row bounds.
// The archives are written here byte by byte (zlib for deflate), so their headers can lie as an attacker's do.
#include <xlsxwriter.h>
#include <zlib.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdint>
#include <fstream>
#include <optional>

#include "chatbot_config/xlsx_reader.h"
#include "test_support.h"

using testsupport::TempDir;
namespace fs = std::filesystem;
using evalgraph::chatbot::read_xlsx;
using Rows = std::vector<std::vector<std::string>>;

namespace {

void put16(std::string &b, std::uint32_t v) {
  b += static_cast<char>(v & 0xFF);
  b += static_cast<char>((v >> 8) & 0xFF);
}
void put32(std::string &b, std::uint32_t v) {
  put16(b, v & 0xFFFF);
  put16(b, v >> 16);
}

struct Part {
  Part() = default;
  Part(std::string n, std::string d, bool deflated = true) : name(std::move(n)), data(std::move(d)), deflate(deflated) {}
  std::string name;
  std::string data;                         // compressed already when `precompressed`
  bool deflate = true;
  bool precompressed = false;
  std::uint32_t crc = 0, size = 0;          // of the uncompressed data, when precompressed
  std::optional<std::uint32_t> declared;    // a lying uncompressed size in both headers
};

std::string raw_deflate(const std::string &in) {
  z_stream z{};
  REQUIRE(deflateInit2(&z, 9, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY) == Z_OK);
  std::string out(deflateBound(&z, in.size()), '\0');
  z.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  z.next_out = reinterpret_cast<Bytef *>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  REQUIRE(deflate(&z, Z_FINISH) == Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

// `head`, then `n` spaces, then `tail`, deflated without holding the spaces in memory: a sheet of a few
// hundred KB that inflates to hundreds of MB (still well-formed XML).
Part bomb(const std::string &name, const std::string &head, std::uint64_t n, const std::string &tail) {
  Part p;
  p.name = name;
  p.precompressed = true;
  z_stream z{};
  REQUIRE(deflateInit2(&z, 9, Z_DEFLATED, -MAX_WBITS, 9, Z_RLE) == Z_OK);
  std::string chunk(1 << 20, ' ');
  std::string out(1 << 20, '\0');
  uLong crc = crc32(0, nullptr, 0);
  std::uint64_t size = 0;
  auto feed = [&](const std::string &in, int flush) {
    z.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(in.data()));
    z.avail_in = static_cast<uInt>(in.size());
    crc = crc32(crc, reinterpret_cast<const Bytef *>(in.data()), static_cast<uInt>(in.size()));
    size += in.size();
    do {
      z.next_out = reinterpret_cast<Bytef *>(out.data());
      z.avail_out = static_cast<uInt>(out.size());
      deflate(&z, flush);
      p.data.append(out.data(), out.size() - z.avail_out);
    } while (z.avail_out == 0);
  };
  feed(head, Z_NO_FLUSH);
  for (std::uint64_t left = n; left > 0;) {
    std::uint64_t k = std::min<std::uint64_t>(left, chunk.size());
    feed(chunk.substr(0, k), Z_NO_FLUSH);
    left -= k;
  }
  feed(tail, Z_FINISH);
  deflateEnd(&z);
  p.crc = static_cast<std::uint32_t>(crc);
  p.size = static_cast<std::uint32_t>(size);
  return p;
}

// A ZIP archive (no data descriptors, no ZIP64) of the parts, in order.
std::string make_zip(const std::vector<Part> &parts) {
  std::string out, central;
  for (const auto &p : parts) {
    std::string data = p.data;
    std::uint32_t crc = p.crc, size = p.size;
    if (!p.precompressed) {
      crc = static_cast<std::uint32_t>(
          crc32(crc32(0, nullptr, 0), reinterpret_cast<const Bytef *>(p.data.data()), static_cast<uInt>(p.data.size())));
      size = static_cast<std::uint32_t>(p.data.size());
      if (p.deflate) data = raw_deflate(p.data);
    }
    if (p.declared) size = *p.declared;
    const std::uint32_t method = p.deflate || p.precompressed ? 8 : 0;
    const std::uint32_t offset = static_cast<std::uint32_t>(out.size());
    auto common = [&](std::string &b) {
      put16(b, 20);  // version needed
      put16(b, 0);   // flags
      put16(b, method);
      put16(b, 0);     // time
      put16(b, 0x21);  // date 1980-01-01
      put32(b, crc);
      put32(b, static_cast<std::uint32_t>(data.size()));
      put32(b, size);
      put16(b, static_cast<std::uint32_t>(p.name.size()));
      put16(b, 0);  // extra
    };
    put32(out, 0x04034b50);
    common(out);
    out += p.name;
    out += data;
    put32(central, 0x02014b50);
    put16(central, 20);  // version made by
    common(central);
    put16(central, 0);  // comment
    put16(central, 0);  // disk
    put16(central, 0);  // internal attributes
    put32(central, 0);  // external attributes
    put32(central, offset);
    central += p.name;
  }
  const std::uint32_t cd_offset = static_cast<std::uint32_t>(out.size());
  out += central;
  put32(out, 0x06054b50);
  put16(out, 0);
  put16(out, 0);
  put16(out, static_cast<std::uint32_t>(parts.size()));
  put16(out, static_cast<std::uint32_t>(parts.size()));
  put32(out, static_cast<std::uint32_t>(central.size()));
  put32(out, cd_offset);
  put16(out, 0);
  return out;
}

const char *const kNs = "http://schemas.openxmlformats.org/spreadsheetml/2006/main";
const char *const kRelNs = "http://schemas.openxmlformats.org/officeDocument/2006/relationships";

std::string workbook_xml(const std::string &sheet_name = "Daten") {
  return std::string("<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n<workbook xmlns=\"") + kNs +
         "\" xmlns:r=\"" + kRelNs + "\"><sheets><sheet name=\"" + sheet_name +
         "\" sheetId=\"1\" r:id=\"rId7\"/></sheets></workbook>";
}
std::string rels_xml(const std::string &sheet_target = "worksheets/sheet1.xml") {
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Relationships "
         "xmlns=\"http://schemas.openxmlformats.org/package/2006/relationships\">"
         "<Relationship Id=\"rId2\" Type=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships/sharedStrings\" "
         "Target=\"sharedStrings.xml\"/>"
         "<Relationship Id=\"rId7\" Type=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet\" "
         "Target=\"" + sheet_target + "\"/></Relationships>";
}
std::string sheet_xml(const std::string &rows) {
  return std::string("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<worksheet xmlns=\"") + kNs + "\"><sheetData>" + rows +
         "</sheetData></worksheet>";
}
std::string shared_xml(const std::string &items) {
  return std::string("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<sst xmlns=\"") + kNs + "\">" + items + "</sst>";
}

// A workbook of the given sheet and shared strings (none when empty), plus extra parts.
fs::path write_workbook(const TempDir &d, const std::string &file, const std::string &sheet, const std::string &shared,
                        std::vector<Part> extra = {}) {
  std::vector<Part> parts = {{"xl/workbook.xml", workbook_xml()}, {"xl/_rels/workbook.xml.rels", rels_xml()}};
  if (!sheet.empty()) parts.push_back({"xl/worksheets/sheet1.xml", sheet});
  if (!shared.empty()) parts.push_back({"xl/sharedStrings.xml", shared});
  for (auto &p : extra) parts.push_back(std::move(p));
  return d.write(file, make_zip(parts));
}

std::string error_of(const fs::path &f) {
  try {
    read_xlsx(f);
  } catch (const std::runtime_error &e) {
    return e.what();
  }
  return "(no error)";
}

std::string read_bytes(const fs::path &f) {
  std::ifstream in(f, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace

TEST_CASE("xlsx reader: inline strings, rich text, phonetic runs, booleans, formulas, prefixes, cells without r",
          "[xlsx]") {
  TempDir d;
  std::string rows =
      "<row r=\"1\"><c r=\"A1\" t=\"s\"><v>0</v></c><c r=\"B1\" t=\"inlineStr\"><is><t>inline &amp; &#x4E2D;</t></is></c>"
      "<c r=\"D1\" t=\"b\"><v>1</v></c><c r=\"E1\" t=\"b\"><v>0</v></c></row>"
      "<row r=\"2\"><c r=\"A2\" t=\"s\"><v>1</v></c><c r=\"B2\"><f>1+1</f><v>2</v></c>"
      "<c r=\"C2\" t=\"str\"><f>\"a\"&amp;\"b\"</f><v>ab</v></c><c r=\"D2\" t=\"e\"><v>#N/A</v></c></row>"
      "<row><c><v>-1.5E-3</v></c><c t=\"inlineStr\"><is><r><t>fe</t></r><r><rPr><b/></rPr><t xml:space=\"preserve\">tt </t></r>"
      "</is></c><c r=\"e3\"/></row>"
      "<row r=\"5\" spans=\"1:2\"><c r=\"A5\" t=\"s\"><v>2</v></c></row>";
  std::string shared = "<si><t>Original</t></si><si><r><t>Grö</t></r><r><t>ße</t></r><rPh><t>ruby</t></rPh></si><si/>";
  auto f = write_workbook(d, "kinds.xlsx", sheet_xml(rows), shared_xml(shared));
  Rows r = read_xlsx(f);
  REQUIRE(r.size() == 5);
  CHECK(r[0] == std::vector<std::string>{"Original", "inline & 中", "", "TRUE", "FALSE"});
  CHECK(r[1] == std::vector<std::string>{"Größe", "2", "ab", "#N/A"});
  CHECK(r[2] == std::vector<std::string>{"-1.5E-3", "fett ", "", "", ""});
  CHECK(r[3].empty());
  CHECK(r[4] == std::vector<std::string>{""});

  // A prefixed main namespace (x:) and a sheet found through an absolute relationship target.
  std::string ns_sheet = std::string("<x:worksheet xmlns:x=\"") + kNs +
                         "\"><x:sheetData><x:row r=\"1\"><x:c r=\"B1\" t=\"inlineStr\"><x:is><x:t>b</x:t></x:is></x:c>"
                         "</x:row></x:sheetData></x:worksheet>";
  auto g = d.write("prefixed.xlsx", make_zip({{"xl/workbook.xml", workbook_xml()},
                                               {"xl/_rels/workbook.xml.rels", rels_xml("/xl/worksheets/other.xml")},
                                               {"xl/worksheets/other.xml", ns_sheet, false}}));
  CHECK(read_xlsx(g) == Rows{{"", "b"}});

  // No workbook.xml: the reader falls back to xl/worksheets/sheet1.xml, as before.
  auto h = d.write("bare.xlsx", make_zip({{"xl/worksheets/sheet1.xml",
                                           sheet_xml("<row><c t=\"inlineStr\"><is><t>x</t></is></c></row>")}}));
  CHECK(read_xlsx(h) == Rows{{"x"}});
}

TEST_CASE("xlsx reader: a ZIP bomb is refused by its declared size and by the bytes it inflates to", "[xlsx]") {
  TempDir d;
  auto t0 = std::chrono::steady_clock::now();
  // 300 MB of whitespace inside <sheetData>: a well-formed sheet of ~300 KB compressed.
  std::string open = std::string("<?xml version=\"1.0\"?><worksheet xmlns=\"") + kNs + "\"><sheetData>";
  Part big = bomb("xl/worksheets/sheet1.xml", open, 300'000'000, "</sheetData></worksheet>");
  CHECK(big.data.size() < 1'000'000);
  auto honest = write_workbook(d, "bomb.xlsx", "", "", {big});
  CHECK(fs::file_size(honest) < 1'000'000);
  std::string e = error_of(honest);
  CHECK_THAT(e, Catch::Contains("bomb.xlsx: cannot read the workbook") && Catch::Contains("xl/worksheets/sheet1.xml") &&
                    Catch::Contains("larger than 256 MiB") && Catch::Contains("declares 300000") &&
                    Catch::Contains("ZIP bomb") && Catch::Contains("split the data set"));

  // The same data under a header that declares 2000 bytes: stopped while inflating, after the first chunk.
  Part liar = big;
  liar.declared = 2000;
  auto lying = write_workbook(d, "liar.xlsx", "", "", {liar});
  e = error_of(lying);
  CHECK_THAT(e, Catch::Contains("liar.xlsx: cannot read the workbook") && Catch::Contains("xl/worksheets/sheet1.xml") &&
                    (Catch::Contains("ZIP bomb") || Catch::Contains("damaged")));

  // Shared strings have their own, smaller bound (64 MiB).
  Part strings = bomb("xl/sharedStrings.xml", std::string("<sst xmlns=\"") + kNs + "\">", 70'000'000, "</sst>");
  auto shared = write_workbook(d, "strings.xlsx", sheet_xml(""), "", {strings});
  CHECK_THAT(error_of(shared), Catch::Contains("xl/sharedStrings.xml is larger than 64 MiB"));
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(30));
}

TEST_CASE("xlsx reader: DOCTYPE and entity declarations are refused (billion laughs, external entities)", "[xlsx]") {
  TempDir d;
  std::string laughs = "<?xml version=\"1.0\"?>\n<!DOCTYPE lolz [<!ENTITY lol \"lol\">";
  laughs += "<!ENTITY lol1 \"&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;\">";
  for (int i = 2; i <= 9; ++i) {
    laughs += "<!ENTITY lol" + std::to_string(i) + " \"";
    for (int k = 0; k < 10; ++k) laughs += "&lol" + std::to_string(i - 1) + ";";
    laughs += "\">";
  }
  laughs += "]>\n<worksheet xmlns=\"" + std::string(kNs) +
            "\"><sheetData><row><c t=\"inlineStr\"><is><t>&lol9;</t></is></c></row></sheetData></worksheet>";
  auto f = write_workbook(d, "laughs.xlsx", laughs, "");
  std::string e = error_of(f);
  CHECK_THAT(e, Catch::Contains("laughs.xlsx: cannot read the workbook: xl/worksheets/sheet1.xml has a DOCTYPE "
                                "declaration (xl/worksheets/sheet1.xml line 2)") &&
                    Catch::Contains("billion laughs") && Catch::Contains("do not use a file of unknown origin"));

  // An external entity in the shared strings (XXE): refused before anything is resolved.
  std::string xxe = "<?xml version=\"1.0\"?><!DOCTYPE sst [<!ENTITY x SYSTEM \"file:///etc/passwd\">]><sst xmlns=\"" +
                    std::string(kNs) + "\"><si><t>&x;</t></si></sst>";
  auto g = write_workbook(d, "xxe.xlsx", sheet_xml("<row><c t=\"s\"><v>0</v></c></row>"), xxe);
  CHECK_THAT(error_of(g), Catch::Contains("xl/sharedStrings.xml has a DOCTYPE declaration") &&
                              !Catch::Contains("root:"));

  // A DOCTYPE without an internal subset is refused as well; an entity that nothing declares is damaged XML.
  auto h = write_workbook(d, "dtd.xlsx", "<!DOCTYPE worksheet SYSTEM \"http://example.invalid/x.dtd\">" + sheet_xml(""), "");
  CHECK_THAT(error_of(h), Catch::Contains("has a DOCTYPE declaration"));
  auto u = write_workbook(d, "undeclared.xlsx", sheet_xml("<row><c t=\"inlineStr\"><is><t>&lol;</t></is></c></row>"), "");
  CHECK_THAT(error_of(u), Catch::Contains("the XML of xl/worksheets/sheet1.xml is damaged at line 2") &&
                              Catch::Contains("undefined entity") && Catch::Contains("save it again as .xlsx"));
}

TEST_CASE("xlsx reader: truncated, corrupt and non-ZIP files end in a clear message", "[xlsx]") {
  TempDir d;
  fs::path good = d.path / "good.xlsx";
  lxw_workbook *wb = workbook_new(good.c_str());
  lxw_worksheet *ws = workbook_add_worksheet(wb, "Tabelle1");
  for (int r = 0; r < 200; ++r) worksheet_write_string(ws, static_cast<lxw_row_t>(r), 0, ("Zeile " + std::to_string(r)).c_str(), nullptr);
  REQUIRE(workbook_close(wb) == LXW_NO_ERROR);
  REQUIRE(read_xlsx(good).size() == 200);
  const std::string bytes = read_bytes(good);

  // Cut at many places: never a crash, always the file's name and a message of ours.
  for (std::size_t cut : {std::size_t{0}, std::size_t{10}, std::size_t{100}, bytes.size() / 3, bytes.size() / 2,
                          bytes.size() - 30, bytes.size() - 1}) {
    auto f = d.write("cut.xlsx", bytes.substr(0, cut));
    std::string e = error_of(f);
    INFO("cut at " << cut << " of " << bytes.size() << ": " << e);
    CHECK_THAT(e, Catch::Contains("cut.xlsx: cannot read the workbook: ") &&
                      (Catch::Contains("not a ZIP archive") || Catch::Contains("damaged")));
  }

  // 2000 bytes taken out of the middle: the central directory points past the data.
  auto m = d.write("gap.xlsx", bytes.substr(0, bytes.size() / 2 - 1000) + bytes.substr(bytes.size() / 2 + 1000));
  CHECK_THAT(error_of(m), Catch::Contains("gap.xlsx: cannot read the workbook: ") &&
                              (Catch::Contains("not a ZIP archive") || Catch::Contains("damaged")));

  // The sheet's deflated data overwritten in the middle: a checksum or inflate error, named with the part.
  Part sheet{"xl/worksheets/sheet1.xml", sheet_xml(std::string(5000, ' ') + "<row><c><v>1</v></c></row>")};
  std::string zip = make_zip({{"xl/workbook.xml", workbook_xml()}, {"xl/_rels/workbook.xml.rels", rels_xml()}, sheet});
  std::size_t at = zip.find("xl/worksheets/sheet1.xml") + 30;
  for (std::size_t i = 0; i < 8; ++i) zip[at + i] = static_cast<char>(zip[at + i] ^ 0x5A);
  auto c = d.write("corrupt.xlsx", zip);
  CHECK_THAT(error_of(c), Catch::Contains("corrupt.xlsx: cannot read the workbook: xl/worksheets/sheet1.xml is damaged") &&
                              Catch::Contains("download the file again"));

  d.write("text.xlsx", "Original;Zahl\nHallo;1\n");
  CHECK_THAT(error_of(d.path / "text.xlsx"), Catch::Contains("not a ZIP archive, so not an .xlsx workbook"));
  d.write("old.xlsx", std::string("\xD0\xCF\x11\xE0\xA1\xB1\x1A\xE1", 8) + std::string(600, '\0'));
  CHECK_THAT(error_of(d.path / "old.xlsx"), Catch::Contains("old .xls workbook or a password-protected one"));
  CHECK_THAT(error_of(d.path / "missing.xlsx"), Catch::Contains("missing.xlsx: cannot read the workbook: the file does not exist"));
}

TEST_CASE("xlsx reader: a missing sheet, shared strings out of range, bad references and the cell bound", "[xlsx]") {
  TempDir d;
  auto f = write_workbook(d, "nosheet.xlsx", "", shared_xml("<si><t>a</t></si>"));
  CHECK(error_of(f) == (d.path / "nosheet.xlsx").string() +
                           ": cannot read the workbook: the first sheet 'Daten' should be the part "
                           "xl/worksheets/sheet1.xml, but the archive has no such part; open it in Excel or "
                           "LibreOffice and save it again as .xlsx, or export the sheet as CSV");

  auto g = write_workbook(d, "index.xlsx",
                          sheet_xml("<row r=\"1\"><c r=\"A1\" t=\"s\"><v>0</v></c></row>\n<row r=\"2\"><c r=\"B2\" "
                                    "t=\"s\"><v>5</v></c></row>"),
                          shared_xml("<si><t>a</t></si><si><t>b</t></si>"));
  CHECK_THAT(error_of(g), Catch::Contains("index.xlsx: cannot read the workbook: sheet 'Daten', cell B2 "
                                          "(xl/worksheets/sheet1.xml line 3) refers to shared string 5, but the "
                                          "workbook has 2 (xl/sharedStrings.xml)"));
  auto h = write_workbook(d, "noshared.xlsx", sheet_xml("<row><c t=\"s\"><v>0</v></c></row>"), "");
  CHECK_THAT(error_of(h), Catch::Contains("cell A1") && Catch::Contains("no shared strings part"));
  auto i = write_workbook(d, "nan.xlsx", sheet_xml("<row><c r=\"C1\" t=\"s\"><v>-1</v></c></row>"), shared_xml("<si/>"));
  CHECK_THAT(error_of(i), Catch::Contains("cell C1") && Catch::Contains("index '-1' is not a number"));

  auto r0 = write_workbook(d, "row0.xlsx", sheet_xml("<row r=\"0\"/>"), "");
  CHECK_THAT(error_of(r0), Catch::Contains("has a row numbered '0', but rows are numbered 1 to 1048576"));
  auto wide = write_workbook(d, "wide.xlsx", sheet_xml("<row><c r=\"XFE1\"><v>1</v></c></row>"), "");
  CHECK_THAT(error_of(wide), Catch::Contains("cell XFE1 of sheet 'Daten' lies beyond column XFD, the last of a sheet's 16384"));
  CHECK(read_xlsx(write_workbook(d, "xfd.xlsx", sheet_xml("<row><c r=\"XFD1\"><v>1</v></c></row>"), ""))[0].size() ==
        16384);

  // 700 rows that each use column XFD: 11.5 million cells from a 30 KB sheet, refused at 10 million.
  std::string rows;
  for (int k = 0; k < 700; ++k) rows += "<row><c r=\"XFD1\"/></row>";
  auto many = write_workbook(d, "cells.xlsx", sheet_xml(rows), "");
  CHECK_THAT(error_of(many), Catch::Contains("sheet 'Daten' has more than 10000000 cells"));

  // One shared string of 1 MiB used by 300 cells: 300 MiB of text, refused at 256 MiB.
  std::string refs;
  for (int k = 0; k < 300; ++k) refs += "<row><c t=\"s\"><v>0</v></c></row>";
  auto amp = write_workbook(d, "amplified.xlsx", sheet_xml(refs), shared_xml("<si><t>" + std::string(1 << 20, 'x') + "</t></si>"));
  CHECK_THAT(error_of(amp), Catch::Contains("holds more than 256 MiB of cell text"));

  // One cell with more than 8 MiB of text.
  auto longcell = write_workbook(
      d, "long.xlsx", sheet_xml("<row><c t=\"inlineStr\"><is><t>" + std::string(9 << 20, 'y') + "</t></is></c></row>"), "");
  CHECK_THAT(error_of(longcell), Catch::Contains("sheet 'Daten', cell A1") && Catch::Contains("more than 8 MiB of text"));
}
