// Cost, budget and estimate (docs/cost.md) against the loopback server: what a run spent from the server's
// usage and from counted tokens, cache hits counted apart, price and budget errors with their location, and
// `evalgraph estimate` before and after a cached run.
#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>

#include "llm/tokens.h"
#include "llm_fixture.h"
#include "test_support.h"

using namespace testsupport;
using nlohmann::json;
using evalgraph::llm::TokenCounter;
namespace fs = std::filesystem;

namespace {
std::string priced_pipeline(const TestLlmServer &srv, const std::string &out_dir, const std::string &price,
                            const std::string &extra = "", const std::string &nodes = "") {
  return "name: cost\ndataset: {path: data.csv}\n"
         "providers:\n  judge:\n    base_url: " + srv.base_url() + "\n    model: m\n    api_key_env: EG_TEST_SECRET_KEY\n"
         "    price: " + price + "\n" + extra +
         "nodes:\n" + (nodes.empty() ? "  - id: j\n    uses: test.needs_llm\n" : nodes) +
         "sinks:\n  - uses: sink.jsonl\n    with: {file: out.jsonl}\n"
         "output: {dir: " + out_dir + "}\n";
}
// Two LLM nodes, b asking about a's answer.
const char *const kChain = "  - {id: a, uses: test.needs_llm}\n  - {id: b, uses: test.needs_llm, inputs: {text: a.answer}}\n";
std::string data(int n) {
  return text_csv(n, [](int i) { return "question number " + std::to_string(i) + " about the weather"; });
}
}  // namespace

TEST_CASE("cost: tokens from the server's usage, cached tokens at their price, hits free and counted apart", "[cost][llm]") {
  ServerOptions o;
  o.cached_tokens = 2;  // the server says 2 prompt tokens of each call came from its prompt cache
  o.default_reply = "a short answer";
  LlmServer srv(o);
  TempDir d;
  d.write("data.csv", data(10));
  d.write("p.yaml", priced_pipeline(srv, "out", "{input_per_mtok: 2.5, output_per_mtok: 10, cached_input_per_mtok: 1.25}"));
  const std::string cache = (d.path / "cache.sqlite").string();
  auto r = run_pipeline(d, "p.yaml", "--cache " + cache);
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  json c = read_run_json(r.dir)["cost"];
  // Each request: "question number N about the weather" = 6 words (the server counts words); answer 3 words.
  CHECK(c["billed_calls"] == 10);
  CHECK(c["prompt_tokens"] == 60);
  CHECK(c["cached_prompt_tokens"] == 20);
  CHECK(c["completion_tokens"] == 30);
  CHECK(c["usage_estimated_calls"] == 0);
  const double expect = (40 * 2.5 + 20 * 1.25 + 30 * 10) / 1e6;
  CHECK(c["cost_usd"].get<double>() == Approx(expect));
  CHECK(c["input_cost_usd"].get<double>() + c["cached_input_cost_usd"].get<double>() + c["output_cost_usd"].get<double>() ==
        Approx(expect));
  CHECK(c["providers"]["judge"]["cost_usd"].get<double>() == Approx(expect));
  CHECK(c["providers"]["judge"]["price"]["cached_input_per_mtok"] == 1.25);
  CHECK(c["nodes"]["j"]["cost_usd"].get<double>() == Approx(expect));
  CHECK(c["nodes"]["j"]["providers"]["judge"]["billed_calls"] == 10);
  // the report has it (eg-final: what the host said at the end of the run) and the table that shows it
  const std::string html = read_file(r.dir / "report.html");
  const std::string open = "id=\"eg-final\">";
  const auto at = html.find(open);
  REQUIRE(at != std::string::npos);
  const auto from = at + open.size();
  json fin = json::parse(html.substr(from, html.find("</script>", from) - from));
  CHECK(fin["cost"]["cost_usd"].get<double>() == Approx(expect));
  CHECK(fin["cost"]["nodes"]["j"]["billed_calls"] == 10);
  CHECK_THAT(html, Catch::Contains("function renderCost"));

  // The same run again: every answer from the cache, nothing spent, the hits counted apart.
  auto again = run_cmd(evalgraph_cmd("run -q --cache " + cache + " " + (d.path / "p.yaml").string()));
  REQUIRE(again.exit_code == 0);
  CHECK(srv.request_count() == 10);
  json c2 = read_run_json(last_line(again.output))["cost"];
  CHECK(c2["cost_usd"] == 0.0);
  CHECK(c2["billed_calls"] == 0);
  CHECK(c2["cache_hits"] == 10);
  json llm = read_run_json(last_line(again.output))["llm"]["judge"];
  CHECK(llm["cache_hit_prompt_tokens"] == 60);  // what the hits would have cost, kept apart
  CHECK(llm["cost_usd"] == 0.0);
}

TEST_CASE("cost: a server without usage gets counted tokens, marked estimated", "[cost][llm]") {
  ServerOptions o;
  o.send_usage = false;
  o.default_reply = "The answer is forty-two, as everyone knows.";
  LlmServer srv(o);
  TempDir d;
  d.write("data.csv", data(5));
  d.write("p.yaml", priced_pipeline(srv, "out", "{input_per_mtok: 1, output_per_mtok: 4}"));
  json c = run_ok(d, "p.yaml", "--no-cache")["cost"];
  CHECK(c["billed_calls"] == 5);
  CHECK(c["usage_estimated_calls"] == 5);
  // The counts are the token counter's over the requests the server received and its answer.
  auto tc = TokenCounter::approximate();
  std::uint64_t prompt = 0;
  for (const auto &req : srv.requests()) prompt += tc->chat_prompt_tokens(json::parse(req.body));
  const std::uint64_t completion = 5 * tc->count(o.default_reply);
  CHECK(c["prompt_tokens"] == prompt);
  CHECK(c["completion_tokens"] == completion);
  CHECK(prompt > 5 * 6);  // the message overhead is counted too
  CHECK(c["cost_usd"].get<double>() == Approx((prompt * 1.0 + completion * 4.0) / 1e6));
  CHECK_THAT(c["tokenizer"].get<std::string>(), Catch::Contains("approximate"));
}

TEST_CASE("cost: price and budget errors say where", "[cost]") {
  TestLlmServer srv;
  TempDir d;
  d.write("data.csv", data(1));
  auto check = [&](const std::string &price, const std::string &where, const std::string &what) {
    d.write("p.yaml", priced_pipeline(srv, "out", price));
    auto r = validate(d, "p.yaml");
    INFO(price << "\n" << r.output);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.output, Catch::Contains("p.yaml:" + where + ": error: provider 'judge': " + what));
  };
  check("{input_per_mtok: -1, output_per_mtok: 2}", "8:29", "price 'input_per_mtok' must be a number >= 0");
  check("{input_per_mtok: 1, output_per_mtok: two}", "8:49", "price 'output_per_mtok' must be a number >= 0");
  check("{input_per_mtok: 1, output_per_mtok: 2, input: 3}", "8:52", "unknown key 'input' in 'price'");
  check("{input_per_mtok: 1}", "8:12", "'price' needs 'output_per_mtok'");
  check("12", "8:12", "'price' must be a mapping");
  d.write("p.yaml", "budget: {max_cost_usd: -3}\n" + priced_pipeline(srv, "out", "{input_per_mtok: 1, output_per_mtok: 2}"));
  auto r = validate(d, "p.yaml");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Catch::Contains("p.yaml:1:24: error: budget 'max_cost_usd' must be a number of US dollars > 0"));
  d.write("p.yaml", "budget: {max_usd: 3}\n" + priced_pipeline(srv, "out", "{input_per_mtok: 1, output_per_mtok: 2}"));
  r = validate(d, "p.yaml");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Catch::Contains("p.yaml:1:"));
  CHECK_THAT(r.output, Catch::Contains("max_usd"));
}


TEST_CASE("estimate: before a run every call is to make, after a complete cached run none, at no cost", "[estimate][llm]") {
  ServerOptions o;
  o.latency_ms = 20;
  LlmServer srv(o);
  srv.reply_all("reply: {last_user}");  // a's answers differ per record, and so do b's requests
  TempDir d;
  d.write("data.csv", data(12));
  // a chain: b reads a's answer, so b's requests are known exactly only once a's answers are cached
  d.write("p.yaml", priced_pipeline(srv, "out", "{input_per_mtok: 3, output_per_mtok: 15}", "    max_in_flight: 4\n", kChain));
  const std::string cache = (d.path / "cache.sqlite").string();
  auto est = [&](const std::string &extra = "") {
    auto r = run_cmd(evalgraph_cmd("estimate --json --cache " + cache + " " + extra + (d.path / "p.yaml").string()));
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    return json::parse(r.output);
  };
  json before = est();
  CHECK(srv.request_count() == 0);  // nothing is sent
  CHECK(before["calls"] == 24.0);
  CHECK(before["cached"] == 0.0);
  CHECK(before["to_call"] == 24.0);
  CHECK(before["nodes"]["a"]["to_call"] == 12.0);
  CHECK(before["nodes"]["b"]["to_call"] == 12.0);
  CHECK(before["prompt_tokens"].get<double>() > 0);
  CHECK(before["cost_usd_low"].get<double>() > 0);
  CHECK(before["cost_usd_high"].get<double>() >= before["cost_usd_low"].get<double>());
  CHECK(before["wall_time_s"].is_null());  // no latency known yet
  json limited = est("--limit 5 ");
  CHECK(limited["calls"] == 10.0);

  auto r = run_cmd(evalgraph_cmd("run -q --cache " + cache + " " + (d.path / "p.yaml").string()));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  REQUIRE(srv.request_count() == 24);
  json spent = read_run_json(last_line(r.output))["cost"];
  // what the run spent lies within what was estimated for a's calls (exact prompts); b's prompts were unknown
  CHECK(spent["cost_usd"].get<double>() > 0);

  json after = est();
  CHECK(srv.request_count() == 24);
  CHECK(after["calls"] == 24.0);
  CHECK(after["cached"] == 24.0);
  CHECK(after["to_call"] == 0.0);
  CHECK(after["cost_usd_low"] == 0.0);
  CHECK(after["cost_usd_high"] == 0.0);
  CHECK(after["wall_time_s"] == 0.0);
  // the cache's observed answers: a's 7 words each ("reply: question number N about the weather"), b's 8;
  // latency about the server's 20 ms
  CHECK(after["providers"]["judge"]["cache"]["mean_completion_tokens"] == 7.5);
  CHECK(after["providers"]["judge"]["cache"]["mean_latency_s"].get<double>() >= 0.015);

  // One record more in the data set: its two calls are to make, the rest is cached.
  d.write("data.csv", data(13));
  json more = est();
  CHECK(more["to_call"] == 2.0);
  CHECK(more["cached"] == 24.0);
  CHECK(more["nodes"]["a"]["providers"]["judge"]["output_tokens_low"] == 7.0);  // the node's mean cached answer
  CHECK(more["nodes"]["b"]["providers"]["judge"]["output_tokens_low"] == 8.0);
  // wall time: 2 calls x ~20 ms over 4 in flight
  CHECK(more["wall_time_s"].get<double>() > 0.0);
  CHECK(more["wall_time_s"].get<double>() < 1.0);
  auto text = run_cmd(evalgraph_cmd("estimate --cache " + cache + " " + (d.path / "p.yaml").string()));
  CHECK(text.exit_code == 0);
  CHECK_THAT(text.output, Catch::Contains("total"));
  CHECK_THAT(text.output, Catch::Contains("expected wall time"));
}

TEST_CASE("tokens: the split follows the encodings' patterns, byte-pair merges follow the ranks", "[cost][tokens]") {
  using V = std::vector<std::string>;
  CHECK(TokenCounter::pieces("Hello world's 12345 !!", TokenCounter::Encoding::cl100k_base) ==
        V{"Hello", " world", "'s", " ", "123", "45", " !!"});
  CHECK(TokenCounter::pieces("  two\n\nlines  ", TokenCounter::Encoding::cl100k_base) == V{" ", " two", "\n\n", "lines", "  "});
  CHECK(TokenCounter::pieces("HelloWorld THE", TokenCounter::Encoding::o200k_base) == V{"Hello", "World", " THE"});
  CHECK(TokenCounter::pieces("HelloWorld", TokenCounter::Encoding::cl100k_base) == V{"HelloWorld"});
  TempDir d;
  // A tiny encoding: the 256 bytes, then "ab" (256), "bc" (257), "abc" (258).
  std::string f;
  auto b64 = [](const std::string &s) {
    static const char *a = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string o;
    int val = 0, bits = -6;
    for (unsigned char c : s) {
      val = (val << 8) + c;
      bits += 8;
      while (bits >= 0) {
        o.push_back(a[(val >> bits) & 0x3F]);
        bits -= 6;
      }
    }
    if (bits > -6) o.push_back(a[((val << 8) >> (bits + 8)) & 0x3F]);
    while (o.size() % 4) o.push_back('=');
    return o;
  };
  for (int i = 0; i < 256; ++i) f += b64(std::string(1, static_cast<char>(i))) + " " + std::to_string(i) + "\n";
  f += b64("ab") + " 256\n" + b64("bc") + " 257\n" + b64("abc") + " 258\n";
  d.write("tiny.tiktoken", f);
  auto tc = TokenCounter::from_file((d.path / "tiny.tiktoken").string());
  CHECK(tc->exact());
  CHECK(tc->count("abc") == 1);   // the whole piece is a token
  CHECK(tc->count("abcd") == 2);  // a+b (rank 256) first, then ab+c (258): abc, d
  CHECK(tc->count("xbc") == 2);   // x, bc
  CHECK(tc->count("bcab") == 2);  // bc, ab
  {
    // the counts of recent pieces are kept per thread (piece_tokens' memo): two encodings that split "abc"
    // differently, counted in turn, and one made after the other is freed (maybe at its address), keep their own
    std::string f2 = f.substr(0, f.find(b64("abc")));  // without the rank of "abc"
    d.write("tiny2.tiktoken", f2);
    auto other = TokenCounter::from_file((d.path / "tiny2.tiktoken").string());
    for (int i = 0; i < 3; ++i) {
      CHECK(tc->count("abc") == 1);
      CHECK(other->count("abc") == 2);  // ab, c
    }
    auto first = TokenCounter::from_file((d.path / "tiny.tiktoken").string());
    CHECK(first->count("abc") == 1);
    first.reset();
    auto second = TokenCounter::from_file((d.path / "tiny2.tiktoken").string());
    CHECK(second->count("abc") == 2);
  }
  d.write("bad.tiktoken", "QQ== 0\nnot base64! 1\n");
  CHECK_THROWS_WITH(TokenCounter::from_file((d.path / "bad.tiktoken").string()), Catch::Contains("bad.tiktoken:2: not a .tiktoken line"));
  setenv("EVALGRAPH_TIKTOKEN_FILE", (d.path / "bad.tiktoken").string().c_str(), 1);
  CHECK_THROWS_WITH(TokenCounter::from_environment(),
                    Catch::Contains("EVALGRAPH_TIKTOKEN_FILE: ") && Catch::Contains("bad.tiktoken:2: not a .tiktoken line"));
  setenv("EVALGRAPH_TIKTOKEN_FILE", (d.path / "tiny.tiktoken").string().c_str(), 1);
  CHECK(TokenCounter::from_environment()->exact());
  unsetenv("EVALGRAPH_TIKTOKEN_FILE");
  CHECK(!TokenCounter::from_environment()->exact());
  // the approximation is within its measured error on plain English
  auto ap = TokenCounter::approximate();
  CHECK(ap->count("The quick brown fox jumps over the lazy dog.") >= 9);
  CHECK(ap->count("The quick brown fox jumps over the lazy dog.") <= 12);
  CHECK(ap->approximation_error()["mean_abs_pct"].get<double>() > 0);
}

TEST_CASE("estimate: what it says before a run against what the run then spends", "[estimate][cost][llm]") {
  // A server without usage: the run counts tokens with the same counter as the estimate, so the first node's
  // prompt tokens must agree exactly and the run's cost must lie within the estimate's range.
  ServerOptions o;
  o.send_usage = false;
  LlmServer srv(o);
  srv.reply_all("reply: {last_user}");
  TempDir d;
  d.write("data.csv", data(20));
  d.write("p.yaml", priced_pipeline(srv, "out", "{input_per_mtok: 3, output_per_mtok: 15}", "", kChain));
  auto e = run_cmd(evalgraph_cmd("estimate --json --no-cache " + (d.path / "p.yaml").string()));
  INFO(e.output);
  REQUIRE(e.exit_code == 0);
  json est = json::parse(e.output);
  json spent = run_ok(d, "p.yaml", "--no-cache")["cost"];
  CHECK(spent["billed_calls"] == 40);
  CHECK(est["to_call"] == 40.0);
  CHECK(spent["nodes"]["a"]["prompt_tokens"].get<double>() == est["nodes"]["a"]["prompt_tokens_to_call"].get<double>());
  CHECK(spent["cost_usd"].get<double>() >= est["cost_usd_low"].get<double>());
  CHECK(spent["cost_usd"].get<double>() <= est["cost_usd_high"].get<double>());
  // b's prompts held a's answers, which the estimate could not know: it counted fewer tokens
  CHECK(spent["nodes"]["b"]["prompt_tokens"].get<double>() > est["nodes"]["b"]["prompt_tokens_to_call"].get<double>());
}
