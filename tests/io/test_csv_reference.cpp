// The CSV reader against a reference: Python 3's csv module (run as a subprocess, one for all cases) reads the
// same bytes, and both must give the same header and rows on RFC 4180's edge cases: quoted separators,
// doubled quotes, LF / CRLF / CR line ends (also inside quotes, and cut in two by the reader's 1 MiB refill),
// empty and trailing empty fields, blank lines, a BOM, quotes inside unquoted fields, NUL bytes, UTF-8, the
// separators the chatbot's csv_separator uses (; , tab |), quoting off and another quote character. They
// agreed on every case; the reader needed no fix.
//
// Differences, by design, pinned by the second test:
//   - text after a closing quote ("ab"c, or "x" followed by a space): Python's default (strict=False) glues it
//     on ("abc"); ours refuses with file:line, as Python's strict=True does;
//   - an unterminated quote: Python's default silently reads the rest of the file into one field; ours refuses
//     with the line where the quote opened (strict=True refuses too);
//   - a row with more or fewer fields than the header: valid CSV to Python (even strict); ours refuses with
//     the line and both counts, since a dataset's records need every column.
// Differences of framing, not of parsing: Python's csv keeps a UTF-8 BOM in the first header name unless the
// file is decoded as 'utf-8-sig' (ours drops it, so the reference reads that way); Python yields [] for a
// blank line where ours skips it (the reference leaves those out); Python limits a field to 131072
// characters by default (the reference lifts that; ours has its own per-record limits).
#include <catch2/catch.hpp>
#include <cstdio>
#include <string>
#include <vector>

#include "io/dataset.h"
#include "test_util.h"

using evalgraph::io::open_dataset;
using nlohmann::json;

namespace {

// Reads every file that the manifest (a JSON list of [path, separator, quote]) names; prints a JSON list of
// {"rows": [...]} or {"error": ...}, each with "strict_error" (null when strict=True reads the file too).
const char *const kReference = R"PY(
import csv, json, sys
csv.field_size_limit(2**31 - 1)
def read(path, sep, quote, strict):
    kw = {'delimiter': sep, 'strict': strict}
    if quote:
        kw['quotechar'] = quote
    else:
        kw['quoting'] = csv.QUOTE_NONE
    with open(path, newline='', encoding='utf-8-sig') as f:
        return [row for row in csv.reader(f, **kw) if row != []]
results = []
for path, sep, quote in json.load(open(sys.argv[1])):
    out = {}
    try:
        out['rows'] = read(path, sep, quote, False)
    except csv.Error as e:
        out['error'] = str(e)
    try:
        read(path, sep, quote, True)
        out['strict_error'] = None
    except csv.Error as e:
        out['strict_error'] = str(e)
    results.append(out)
print(json.dumps(results))
)PY";

std::string shell_quote(const std::string &s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string run(const std::string &cmd, int &status) {
  std::string out;
  FILE *p = popen(cmd.c_str(), "r");
  if (p == nullptr) {
    status = -1;
    return out;
  }
  char buf[4096];
  std::size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  status = pclose(p);
  return out;
}

bool have_python() {
  int status = 0;
  run("python3 -c 'import csv, json' 2>/dev/null", status);
  return status == 0;
}

// Python's reading of each [path, separator, quote].
json reference(const iotest::TempDir &dir, const json &manifest) {
  auto script = iotest::write_file(dir / "reference.py", kReference);
  auto list = iotest::write_file(dir / "manifest.json", manifest.dump());
  int status = 0;
  std::string out = run("python3 " + shell_quote(script.string()) + " " + shell_quote(list.string()), status);
  INFO("python3 said: " << out.substr(0, 2000));
  REQUIRE(status == 0);
  json r = json::parse(out);
  REQUIRE(r.size() == manifest.size());
  return r;
}

// Our reading: the header then the rows (values in header order), or {"error": message}.
json ours(const std::filesystem::path &file, const std::string &sep, const std::string &quote) {
  try {
    auto reader = open_dataset(file, "csv", {{"separator", sep}, {"quote", quote}});
    json rows = json::array({reader->columns()});
    json rec;
    while (reader->next(rec)) {
      json row = json::array();
      for (const auto &c : reader->columns()) row.push_back(rec.at(c));
      rows.push_back(row);
    }
    return {{"rows", rows}};
  } catch (const std::exception &e) {
    return {{"error", e.what()}};
  }
}

// "a,b\n", short rows, then `tail`, laid out so that tail[split] is the first byte of the reader's second
// 1 MiB chunk: a doubled quote, a CRLF or a closing quote cut in two by a refill.
std::string straddle(const std::string &tail, std::size_t split) {
  const std::size_t chunk = std::size_t{1} << 20;
  std::string s = "a,b\n";
  std::size_t remaining = chunk - split - s.size();
  const std::string row = std::string(97, 'f') + ",g\n";  // 100 bytes
  std::size_t rows = remaining / row.size() - 1;
  for (std::size_t i = 0; i < rows; ++i) s += row;
  s += std::string(remaining - row.size() * rows - 3, 'p') + ",g\n";
  REQUIRE(s.size() + split == chunk);
  return s + tail;
}

struct Case {
  const char *name;
  std::string bytes;
  std::string sep = ",";
  std::string quote = "\"";
};

}  // namespace

TEST_CASE("csv reference: our reader and Python's csv module agree on RFC 4180 edge cases", "[io][csv]") {
  if (!have_python()) {
    WARN("python3 with its csv module is not available: the reference comparison is skipped");
    return;
  }
  const std::vector<Case> cases = {
      {"quoted fields with separators", "a,b\n\"1,2\",x\n\"\",\",\"\n"},
      {"doubled quotes", "a,b\n\"say \"\"hi\"\"\",\"\"\"\"\n"},
      {"CRLF line ends", "a,b\r\n1,2\r\n3,4\r\n"},
      {"LF line ends", "a,b\n1,2\n3,4\n"},
      {"CR line ends", "a,b\r1,2\r3,4\r"},
      {"mixed line ends", "a,b\r\n1,2\n3,4\r5,6"},
      {"LF inside quotes", "a,b\n\"line 1\nline 2\",x\n"},
      {"CRLF inside quotes", "a,b\r\n\"line 1\r\nline 2\",x\r\n"},
      {"CR inside quotes", "a,b\n\"line 1\rline 2\",x\n"},
      {"empty fields", "a,b,c\n,,\n1,,3\n"},
      {"trailing empty field", "a,b\n1,\n2,\n"},
      {"trailing empty field at the end of the file", "a,b\n1,"},
      {"last line without a line break", "a,b\n1,2"},
      {"quoted last field at the end of the file", "a,b\n1,\"2\""},
      {"quoted empty field", "a,b\n\"\",x\n"},
      {"blank lines between rows", "a,b\n\n1,2\n\r\n\n3,4\n\n"},
      {"blank lines before the header", "\n\na,b\n1,2\n"},
      {"UTF-8 BOM", "\xEF\xBB\xBF" "a,b\n1,2\n"},
      {"UTF-8 BOM before a quoted header", "\xEF\xBB\xBF\"a\",b\n1,2\n"},
      {"a quote inside an unquoted field", "a,b\n1\"2,x\n"},
      {"quotes at the end of an unquoted field", "a,b\nx\"\",y\"\n"},
      {"spaces before an opening quote", "a,b\n \"1\",2\n"},
      {"spaces around fields", "a , b\n 1 , 2 \n"},
      {"a quoted header with separators", "\"a,1\",b\n1,2\n"},
      {"a one-column file", "a\nx\n \ny\n"},
      {"UTF-8 text", "frage,antwort\nGröße,\"Maß, „ja“\"\n"},
      {"NUL bytes", std::string("a,b\n1\0002,\"x\0y\"\n", 14)},
      {"semicolon separator (the chatbot's csv_separator)", "Original;Zahl\n\"a;b\";1,5\n", ";"},
      {"tab separator", "a\tb\n\"x\ty\"\t2\n1 2\t\n", "\t"},
      {"pipe separator", "a|b\n\"x|y\"|2\n", "|"},
      {"quoting off", "a,b\n\"x,y\"\n", ",", ""},
      {"another quote character", "a,b\n'x,y','it''s'\n", ",", "'"},
      {"a doubled quote cut by a refill", straddle("1,\"q\"\"q\"\n2,3\n", 5)},
      {"a CRLF cut by a refill", straddle("1,2\r\n3,4\r\n", 4)},
      {"a closing quote and its separator cut by a refill", straddle("\"1\",\"2\"\n", 3)},
      {"a quoted line break cut by a refill", straddle("\"1\r\n2\",3\n", 3)},
  };
  iotest::TempDir dir;
  json manifest = json::array();
  for (std::size_t i = 0; i < cases.size(); ++i) {
    auto file = iotest::write_file(dir / ("case" + std::to_string(i) + ".csv"), cases[i].bytes);
    manifest.push_back({file.string(), cases[i].sep, cases[i].quote});
  }
  json refs = reference(dir, manifest);
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const auto &c = cases[i];
    json mine = ours(manifest[i][0].get<std::string>(), c.sep, c.quote);
    bool same = mine == json{{"rows", refs[i]["rows"]}};
    if (!same) FAIL_CHECK(c.name << "\n  ours:   " << mine.dump() << "\n  python: " << refs[i].dump());
    CHECK(same);
  }
}

TEST_CASE("csv reference: where Python's lenient default guesses, our reader refuses with the line (as strict=True does)",
          "[io][csv]") {
  if (!have_python()) {
    WARN("python3 with its csv module is not available: the reference comparison is skipped");
    return;
  }
  struct Refused {
    const char *name;
    std::string bytes;
    std::string ours;          // part of our message
    json python_lenient;       // what Python's default reader makes of it
  };
  const std::vector<Refused> cases = {
      {"text after a closing quote", "a,b\n\"ab\"c,d\n", "data.csv:2: unexpected text after the closing quote",
       json::array({{"a", "b"}, {"abc", "d"}})},
      {"a space after a closing quote", "a,b\n\"x\" ,y\n", "data.csv:2: unexpected text after the closing quote",
       json::array({{"a", "b"}, {"x ", "y"}})},
      {"an unterminated quote", "a,b\n1,2\n\"abc,d\n3,4\n", "data.csv:3: a quoted field that starts on this line is never closed",
       json::array({{"a", "b"}, {"1", "2"}, {"abc,d\n3,4\n"}})},
      {"a row with fewer fields than the header", "a,b,c\n1,2\n", "data.csv:2: the row has 2 fields but the header has 3",
       json::array({{"a", "b", "c"}, {"1", "2"}})},
      {"a row with more fields than the header", "a,b\n1,2,3\n", "data.csv:2: the row has 3 fields but the header has 2",
       json::array({{"a", "b"}, {"1", "2", "3"}})},
  };
  iotest::TempDir dir;
  json manifest = json::array();
  for (std::size_t i = 0; i < cases.size(); ++i) {
    auto sub = dir / std::to_string(i);
    std::filesystem::create_directories(sub);
    manifest.push_back({iotest::write_file(sub / "data.csv", cases[i].bytes).string(), ",", "\""});
  }
  json refs = reference(dir, manifest);
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const auto &c = cases[i];
    json mine = ours(manifest[i][0].get<std::string>(), ",", "\""), ref = refs[i];
    INFO(c.name << "\n  ours:   " << mine.dump() << "\n  python: " << ref.dump());
    REQUIRE(mine.contains("error"));
    CHECK_THAT(mine["error"].get<std::string>(), Catch::Contains(c.ours));
    CHECK(ref["rows"] == c.python_lenient);
    // Ragged rows are valid CSV to Python even when strict; the quoting errors are not.
    if (std::string(c.name).find("fields than the header") == std::string::npos) CHECK(ref["strict_error"].is_string());
  }
}
