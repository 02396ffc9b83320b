// report.html written by every run: present by default, absent with --no-report, one file with nothing
// from the network, the records it embeds (gzip + base64 chunks) are exactly the run's records, and the
// run's final counts and LLM usage (eg-final, from the host's run_info) match run.json; the page writer of
// sink.html_report on its own (html_report::PageWriter).
#include <zlib.h>

#include <cstdint>
#include <cstdio>

#include <catch2/catch.hpp>

#include "page.hpp"
#include "test_llm_server.h"
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
  json rj = read_run_json(dir);
  CHECK(rj["sinks"]["sink.html_report"]["result"]["records"] == 64);
}

// (No ";" or "\\" in test names: catch_discover_tests would split or mangle them, and ctest would run none.)
TEST_CASE("report.html: --no-report writes none, and a pipeline may configure the report itself") {
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

TEST_CASE("evalgraph graph: an edge carrying several dataset fields breaks the label into lines, not a literal backslash-n") {
  auto r = run_cmd(std::string(EVALGRAPH_EXE) + " graph " + REPO_DIR + "/pipelines/ksodi-standard.yaml");
  REQUIRE(r.exit_code == 0);
  CHECK(r.output.find("\"dataset\" -> \"s0\" [label=\"assistant_text\\nsystem_prompt\\n") != std::string::npos);
  CHECK(r.output.find("\\\\n") == std::string::npos);
}

namespace {
// The JSON of a <script type="application/json" id="ID"> element (null when the page has none).
json script_element(const std::string &html, const std::string &id) {
  const std::string open = "<script type=\"application/json\" id=\"" + id + "\">";
  std::size_t a = html.find(open);
  if (a == std::string::npos) return nullptr;
  a += open.size();
  return json::parse(html.substr(a, html.find("</script>", a) - a));
}

std::string llm_pipeline(const evalgraph::testing::TestLlmServer &srv, const std::string &out_dir) {
  return "name: llm-usage\ndataset: {path: data.csv}\n"
         "providers:\n  judge:\n    base_url: " + srv.base_url() + "\n    model: m\n"
         "nodes:\n  - id: t\n    uses: transform.llm\n"
         "sinks:\n  - uses: sink.jsonl\n    with: {file: detailed.jsonl}\n"
         "output: {dir: " + out_dir + "}\n";
}

}  // namespace

TEST_CASE("report.html: the run's final counts and LLM usage (eg-final) come from the host at the end of the run") {
  // Without LLM: the counts, and an empty LLM usage.
  TempDir t;
  fs::path dir = run_sample(t);
  std::string html = read_file(dir / "report.html");
  json fin = script_element(html, "eg-final");
  REQUIRE(fin.is_object());
  CHECK(fin["records"] == 64);
  json rj = read_run_json(dir);
  CHECK(fin["failed_records"] == rj["failed_records"]);
  CHECK(fin["llm"] == json::object());
  CHECK(!rj.contains("llm"));
  // Before the page's script, which reads it.
  CHECK(html.find("id=\"eg-final\"") < html.find("<script>\n"));
  CHECK(html.find("id=\"eg-meta\"") < html.find("id=\"eg-final\""));
}

TEST_CASE("report.html: a run with an LLM node shows its calls per provider, and so does the merge of its shards") {
  evalgraph::testing::TestLlmServer srv;
  evalgraph::testing::Rule ok;
  ok.reply = "reply to {last_user}";
  // Records move on their own (no barrier between chunks), so the repeated question is shared only while the
  // first is still in flight: answers take long enough that all six are asked before the first comes back.
  ok.latency_ms = 500;
  srv.add_rule(ok);
  TempDir t;
  // Six records, two of them the same question: six calls, five HTTP requests (one answer shared).
  t.write("data.csv", "id,original\nq1,one\nq2,two\nq3,three\nq4,four\nq5,five\nq6,one\n");
  t.write("p.yaml", llm_pipeline(srv, "out"));
  auto r = run_cmd(std::string("CI=true ") + EVALGRAPH_EXE + " run -q -j 1 --no-cache " + (t.path / "p.yaml").string());
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  fs::path dir = last_line(r.output);
  CHECK(srv.request_count() == 5);
  json fin = script_element(read_file(dir / "report.html"), "eg-final");
  REQUIRE(fin.is_object());
  CHECK(fin["records"] == 6);
  CHECK(fin["failed_records"] == 0);
  REQUIRE(fin["llm"].contains("judge"));
  const json &u = fin["llm"]["judge"];
  CHECK(u["calls"] == 6);
  CHECK(u["http_requests"] == 5);
  CHECK(u["cache_hits"].get<int>() + u["merged"].get<int>() == 1);
  CHECK(u["errors"] == 0);
  CHECK(u["prompt_tokens"].get<long long>() > 0);
  CHECK(u["completion_tokens"].get<long long>() > 0);
  json rj = read_run_json(dir);
  CHECK(fin["llm"] == rj["llm"]);  // the same numbers as run.json

  // Two shards, merged: the merged report shows the shards' usage summed (the merge itself calls nobody).
  srv.reset_counters();
  std::vector<fs::path> shards;
  for (int i = 1; i <= 2; ++i) {
    auto s = run_cmd(std::string("CI=true ") + EVALGRAPH_EXE + " run -q --no-cache --shard " + std::to_string(i) + "/2 " +
                     (t.path / "p.yaml").string());
    INFO(s.output);
    REQUIRE(s.exit_code == 0);
    shards.push_back(last_line(s.output));
    json sf = script_element(read_file(shards.back() / "report.html"), "eg-final");
    CHECK(sf["records"] == 3);
    CHECK(sf["llm"]["judge"]["calls"] == 3);
  }
  auto m = run_cmd(std::string("CI=true ") + EVALGRAPH_EXE + " merge -q " + shards[0].string() + " " + shards[1].string() + " -o " +
                   (t.path / "merged").string());
  INFO(m.output);
  REQUIRE(m.exit_code == 0);
  json mf = script_element(read_file(t.path / "merged" / "report.html"), "eg-final");
  REQUIRE(mf.is_object());
  CHECK(mf["records"] == 6);
  CHECK(mf["llm"]["judge"]["calls"] == 6);
  CHECK(mf["llm"]["judge"]["http_requests"] == 6);  // each shard asked its three questions itself
  CHECK(mf["llm"] == read_run_json(t.path / "merged")["llm"]);
}

TEST_CASE("html_report page helpers: base64 with padding, HTML escaping, script JSON without a '<'") {
  std::string b;
  html_report::base64_append(reinterpret_cast<const unsigned char *>("Man"), 3, b);
  CHECK(b == "TWFu");
  b.clear();
  html_report::base64_append(reinterpret_cast<const unsigned char *>("Ma"), 2, b);
  CHECK(b == "TWE=");
  b.clear();
  html_report::base64_append(reinterpret_cast<const unsigned char *>("M"), 1, b);
  CHECK(b == "TQ==");
  CHECK(html_report::html_escape("<a href=\"x\">&</a>") == "&lt;a href=&quot;x&quot;&gt;&amp;&lt;/a&gt;");
  CHECK(html_report::script_json({{"t", "</script><!--"}}) == "{\"t\":\"\\u003c/script>\\u003c!--\"}");
}

TEST_CASE("html_report page writer: head, every record in order across several chunks, counts, eg-final and the script") {
  TempDir t;
  const fs::path file = t.path / "page.html";
  std::string expected;
  std::size_t raw_bytes = 0;
  {
    html_report::PageWriter page(file, "A <b> & \"c\"", "body{color:red}\n", {{"pipeline", "p"}});
    // Enough records for several 1 MiB batches and 768 KiB chunks; a record spread over lines is written
    // compact, trailing line ends are trimmed.
    const std::string multi_line = "{\n  \"id\": \"multi\",\n  \"v\": [1, 2]\n}";
    page.add_record(multi_line + "\r\n");
    expected += "{\"id\":\"multi\",\"v\":[1,2]}\n";
    raw_bytes += multi_line.size() + 1;  // raw_bytes counts the record as it came (trimmed)
    std::uint64_t lcg = 42;
    for (int i = 0; i < 40000; ++i) {
      // Pseudo-random hex text, so that the compressed stream spans several chunks.
      std::string noise;
      for (int k = 0; k < 8; ++k) {
        lcg = lcg * 6364136223846793005u + 1442695040888963407u;
        char hex[17];
        std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(lcg));
        noise += hex;
      }
      std::string rec = "{\"id\":\"r" + std::to_string(i) + "\",\"x\":\"" + noise + "</script>\"}";
      raw_bytes += rec.size() + 1;
      page.add_record(rec + "\n");
      expected += rec + "\n";
    }
    CHECK_THROWS_AS(page.add_record(" \n"), std::invalid_argument);
    CHECK(page.records() == 40001);
    page.finish([] { return json{{"records", 40001}}; }, "console.log(1)");
    CHECK_THROWS(page.finish([] { return json::object(); }, ""));
  }
  const std::string html = read_file(file);
  CHECK(html.rfind("<!DOCTYPE html>", 0) == 0);
  CHECK(html.find("<title>A &lt;b&gt; &amp; &quot;c&quot; — evalgraph report</title>") != std::string::npos);
  CHECK(html.find("<style>\nbody{color:red}\n</style>") != std::string::npos);
  CHECK(script_element(html, "eg-run") == json{{"pipeline", "p"}});
  CHECK(html.find("</script><script>") == std::string::npos);  // the records' text only inside the compressed block
  CHECK(embedded_records(html) == expected);
  const json meta = script_element(html, "eg-meta");
  CHECK(meta["records"] == 40001);
  CHECK(meta["raw_bytes"] == raw_bytes);
  CHECK(meta["chunks"].get<int>() > 1);
  CHECK(script_element(html, "eg-final") == json{{"records", 40001}});
  const std::string tail = "<script>\nconsole.log(1)\n</script>\n</body></html>\n";
  REQUIRE(html.size() > tail.size());
  CHECK(html.substr(html.size() - tail.size()) == tail);
}

TEST_CASE("html_report page writer: no eg-final element when the host says nothing, and no records is a valid page") {
  TempDir t;
  html_report::PageWriter page(t.path / "empty.html", "t", "", json::object());
  page.finish([] { return json::object(); }, "");
  const std::string html = read_file(t.path / "empty.html");
  CHECK(script_element(html, "eg-final").is_null());
  CHECK(script_element(html, "eg-meta")["records"] == 0);
  CHECK(embedded_records(html).empty());
}
