// report.html written by every run: present by default, absent with --no-report, one file with nothing
// from the network, and the records it embeds (gzip + base64 chunks) are exactly the run's records.
#include <zlib.h>

#include <catch2/catch.hpp>

#include "test_support.h"

using namespace testsupport;
using nlohmann::json;

namespace {

std::string unbase64(const std::string &s) {
  static int v[256];
  static bool init = false;
  if (!init) {
    for (int &x : v) x = -1;
    const char *t = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for (int i = 0; i < 64; ++i) v[static_cast<unsigned char>(t[i])] = i;
    init = true;
  }
  std::string out;
  int acc = 0, bits = 0;
  for (char c : s) {
    int d = v[static_cast<unsigned char>(c)];
    if (d < 0) continue;  // '=' and whitespace
    acc = (acc << 6) | d;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((acc >> bits) & 0xFF);
    }
  }
  return out;
}

std::string gunzip(const std::string &z) {
  z_stream zs{};
  REQUIRE(inflateInit2(&zs, 15 + 16) == Z_OK);
  zs.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(z.data()));
  zs.avail_in = static_cast<uInt>(z.size());
  std::string out;
  char buf[65536];
  int rc = Z_OK;
  while (rc != Z_STREAM_END) {
    zs.next_out = reinterpret_cast<Bytef *>(buf);
    zs.avail_out = sizeof buf;
    rc = inflate(&zs, Z_NO_FLUSH);
    REQUIRE((rc == Z_OK || rc == Z_STREAM_END));
    out.append(buf, sizeof buf - zs.avail_out);
  }
  inflateEnd(&zs);
  return out;
}

// The records embedded in a report, as the text lines the page decodes.
std::string embedded_records(const std::string &html) {
  std::string z;
  const std::string open = "<script type=\"application/octet-stream\" class=\"eg-z\">";
  for (std::size_t p = html.find(open); p != std::string::npos; p = html.find(open, p)) {
    p += open.size();
    std::size_t e = html.find("</script>", p);
    z += unbase64(html.substr(p, e - p));
  }
  return gunzip(z);
}

std::string run_sample(const TempDir &t, const std::string &extra = "") {
  auto r = run_cmd(std::string("CI=true ") + EVALGRAPH_EXE + " run -q " + REPO_DIR + "/pipelines/ksodi-standard.yaml -o " + t.path.string() + " " + extra);
  REQUIRE(r.exit_code == 0);
  return r.output.substr(0, r.output.find_last_not_of('\n') + 1);
}

}  // namespace

TEST_CASE("report.html: written by default, self-contained, embeds exactly the run's records") {
  TempDir t;
  fs::path dir = run_sample(t);
  REQUIRE(fs::exists(dir / "report.html"));
  CHECK(!fs::exists(dir / "report.html.partial"));
  std::string html = read_file(dir / "report.html");
  // One file: no external script, style, font or image.
  for (const char *ext : {"src=\"http", "href=\"http", "@import", "url(http", "<link "}) CHECK(html.find(ext) == std::string::npos);
  CHECK(html.find("<script type=\"application/json\" id=\"eg-run\">") != std::string::npos);
  std::size_t a = html.find("id=\"eg-run\">") + 12;
  json run = json::parse(html.substr(a, html.find("</script>", a) - a));
  CHECK(run["pipeline"] == "ksodi-standard");
  REQUIRE(run["nodes"].size() == 3);
  CHECK(run["nodes"][2]["id"] == "o0");
  CHECK(run["nodes"][2]["plugin"] == "ksodi_o0");
  CHECK(!run["nodes"][2]["plugin_version"].get<std::string>().empty());
  CHECK(run["nodes"][0]["with"]["alpha"] == 0.4);
  CHECK(embedded_records(html) == read_file(dir / "detailed.jsonl"));
  json rj = json::parse(read_file(dir / "run.json"));
  CHECK(rj["sinks"]["sink.html_report"]["result"]["records"] == 64);
}

TEST_CASE("report.html: --no-report writes none; a pipeline may configure the report itself") {
  TempDir t;
  fs::path dir = run_sample(t, "--no-report");
  CHECK(!fs::exists(dir / "report.html"));
  CHECK(fs::exists(dir / "detailed.jsonl"));
  std::string yaml = read_file(fs::path(REPO_DIR) / "pipelines/ksodi-standard.yaml");
  yaml.replace(yaml.find("path: data/"), 11, std::string("path: ") + REPO_DIR + "/pipelines/data/");
  yaml += "\n";
  yaml.replace(yaml.find("  - uses: ksodi.summary"), 0, "  - uses: sink.html_report\n    with: {file: view/index.html, title: My run}\n");
  t.write("p/own.yaml", yaml);
  auto r = run_cmd(std::string("CI=true ") + EVALGRAPH_EXE + " run -q " + (t.path / "p/own.yaml").string() + " -o " + (t.path / "own").string());
  REQUIRE(r.exit_code == 0);
  fs::path d2 = r.output.substr(0, r.output.find_last_not_of('\n') + 1);
  CHECK(fs::exists(d2 / "view/index.html"));
  CHECK(!fs::exists(d2 / "report.html"));  // declared once: not added a second time
  CHECK(read_file(d2 / "view/index.html").find("<title>My run") != std::string::npos);
}

TEST_CASE("report.html: records with '</script>' and '<!--' in their text cannot break the page") {
  TempDir t;
  t.write("d/data.jsonl", "{\"id\":\"x1\",\"text\":\"</script><script>alert(1)</script><!-- \\u2028\"}\n{\"id\":\"x2\",\"text\":\"ok\"}\n");
  t.write("d/p.yaml", "name: tricky\ndataset: {path: data.jsonl}\nsinks:\n  - uses: sink.jsonl\n    with: {file: detailed.jsonl}\n");
  auto r = run_cmd(std::string("CI=true ") + EVALGRAPH_EXE + " run -q " + (t.path / "d/p.yaml").string() + " -o " + (t.path / "out").string());
  REQUIRE(r.exit_code == 0);
  fs::path dir = r.output.substr(0, r.output.find_last_not_of('\n') + 1);
  std::string html = read_file(dir / "report.html");
  CHECK(html.find("alert(1)") == std::string::npos);  // only inside the compressed block
  CHECK(embedded_records(html) == read_file(dir / "detailed.jsonl"));
}

TEST_CASE("evalgraph graph: an edge carrying several dataset fields breaks the label into lines, not a literal \\n") {
  auto r = run_cmd(std::string(EVALGRAPH_EXE) + " graph " + REPO_DIR + "/pipelines/ksodi-standard.yaml");
  REQUIRE(r.exit_code == 0);
  CHECK(r.output.find("\"dataset\" -> \"s0\" [label=\"assistant_text\\nsystem_prompt\\n") != std::string::npos);
  CHECK(r.output.find("\\\\n") == std::string::npos);
}
