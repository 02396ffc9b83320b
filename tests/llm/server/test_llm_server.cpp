#include "test_llm_server.h"

#include <atomic>
#include <chrono>
#include <cmath>
#include <functional>
#include <mutex>
#include <optional>
#include <regex>
#include <sstream>
#include <thread>

#include <brotli/encode.h>
#include <zlib.h>

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

namespace evalgraph::testing {
namespace beast = boost::beast;
namespace http = beast::http;
namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using Json = nlohmann::json;

const char* fault_name(Fault f) {
  switch (f) {
    case Fault::none: return "";
    case Fault::http_429: return "429";
    case Fault::http_500: return "500";
    case Fault::http_503: return "503";
    case Fault::http_status: return "status";
    case Fault::hang: return "hang";
    case Fault::cut: return "cut";
    case Fault::malformed_json: return "malformed_json";
    case Fault::wrong_content_type: return "wrong_content_type";
    case Fault::missing_choices: return "missing_choices";
    case Fault::deep_json: return "deep_json";
    case Fault::trickle: return "trickle";
    case Fault::slow_headers: return "slow_headers";
    case Fault::endless: return "endless";
    case Fault::gzip_bomb: return "gzip_bomb";
    case Fault::deflate_bomb: return "deflate_bomb";
    case Fault::brotli_bomb: return "brotli_bomb";
    case Fault::big_content: return "big_content";
    case Fault::reset: return "reset";
    case Fault::bad_chunking: return "bad_chunking";
    case Fault::invalid_utf8: return "invalid_utf8";
    case Fault::empty_choices: return "empty_choices";
    case Fault::many_choices: return "many_choices";
    case Fault::redirect: return "redirect";
    case Fault::redirect_loop: return "redirect_loop";
    case Fault::other_model: return "other_model";
  }
  return "?";
}

bool parse_fault(const std::string& name, Fault& out) {
  for (int i = static_cast<int>(Fault::http_429); i <= static_cast<int>(Fault::other_model); ++i) {
    auto f = static_cast<Fault>(i);
    if (name == fault_name(f)) {
      out = f;
      return true;
    }
  }
  return false;
}

namespace {

std::uint64_t fnv1a(std::string_view s, std::uint64_t h = 1469598103934665603ULL) {
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

std::uint64_t mix(std::uint64_t x) {  // splitmix64 finaliser
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

std::string content_text(const Json& content) {
  if (content.is_string()) return content.get<std::string>();
  std::string out;
  if (content.is_array())
    for (const auto& part : content)
      if (part.is_object() && part.value("type", "") == "text" && part.contains("text") && part["text"].is_string())
        out += (out.empty() ? "" : " ") + part["text"].get<std::string>();
  return out;
}

std::string fmt_hex(std::size_t n) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%zx", n);
  return buf;
}

// A request's tokens as the limits count them (provider_limits.h).
double limit_tokens(const Json& body, const std::vector<std::string>& texts) {
  double n = 0;
  for (const auto& t : texts) n += std::ceil(static_cast<double>(t.size()) / 4.0) + 4;
  for (const char* k : {"max_tokens", "max_completion_tokens"})
    if (auto it = body.find(k); it != body.end() && it->is_number()) n += it->get<double>();
  return n;
}

std::size_t word_count(const std::string& s) {
  std::istringstream in(s);
  std::string w;
  std::size_t n = 0;
  while (in >> w) ++n;
  return n;
}

// A body streamed in pieces after the raw head: next(sent) gives the next piece ("" ends it), every interval_ms;
// the stream also ends after max_bytes or max_s. Then the connection is closed.
struct Stream {
  std::function<std::string(std::uint64_t sent)> next;
  int interval_ms = 0;
  std::uint64_t max_bytes = 0;
  double max_s = 0;
};

struct Action {
  int delay_ms = 0;
  bool queued = false;  // waits for one of the capacity's places (ProviderLimits::capacity)
  std::map<std::string, std::string> headers;  // the rate-limit headers (ProviderLimits), set on the answer
  bool raw = false;
  bool reset = false;  // close with a TCP reset once the request is read
  std::string raw_bytes;
  std::optional<Stream> stream;
  http::response<http::string_body> res;
};

const char kCompletionHead[] =
    "{\"id\":\"chatcmpl-hostile\",\"object\":\"chat.completion\",\"model\":\"m\",\"choices\":[{\"index\":0,"
    "\"message\":{\"role\":\"assistant\",\"content\":\"";
const char kCompletionTail[] = "\"},\"finish_reason\":\"stop\"}]}";

// Hands a completion whose content is `n` letters 'a' to `feed(data, size, last)` piece by piece: its head, the
// letters in chunks of 1 MiB, its tail (last: true).
template <class Feed>
void feed_completion(std::uint64_t n, Feed feed) {
  const std::string chunk(1 << 20, 'a');
  feed(kCompletionHead, sizeof kCompletionHead - 1, false);
  for (std::uint64_t left = n; left > 0;) {
    std::size_t k = static_cast<std::size_t>(std::min<std::uint64_t>(left, chunk.size()));
    feed(chunk.data(), k, false);
    left -= k;
  }
  feed(kCompletionTail, sizeof kCompletionTail - 1, true);
}

// A completion whose content is `n` letters 'a', compressed (gzip: windowBits 31; zlib/deflate: 15).
std::string compressed_completion(std::uint64_t n, int window_bits) {
  z_stream z{};
  deflateInit2(&z, 9, Z_DEFLATED, window_bits, 9, Z_RLE);
  std::string out;
  auto feed = [&](const char* p, std::size_t len, int flush) {
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(p));
    z.avail_in = static_cast<uInt>(len);
    do {
      char buf[1 << 16];
      z.next_out = reinterpret_cast<Bytef*>(buf);
      z.avail_out = sizeof buf;
      deflate(&z, flush);
      out.append(buf, sizeof buf - z.avail_out);
    } while (z.avail_out == 0);
  };
  feed_completion(n, [&](const char* p, std::size_t len, bool last) { feed(p, len, last ? Z_FINISH : Z_NO_FLUSH); });
  deflateEnd(&z);
  return out;
}

// The same completion compressed with brotli (quality 5: a run of one letter compresses to almost nothing).
std::string brotli_completion(std::uint64_t n) {
  BrotliEncoderState* st = BrotliEncoderCreateInstance(nullptr, nullptr, nullptr);
  BrotliEncoderSetParameter(st, BROTLI_PARAM_QUALITY, 5);
  std::string out;
  auto feed = [&](const char* p, std::size_t len, BrotliEncoderOperation op) {
    const uint8_t* in = reinterpret_cast<const uint8_t*>(p);
    std::size_t avail_in = len;
    do {
      uint8_t buf[1 << 16];
      uint8_t* next_out = buf;
      std::size_t avail_out = sizeof buf;
      BrotliEncoderCompressStream(st, op, &avail_in, &in, &avail_out, &next_out, nullptr);
      out.append(reinterpret_cast<char*>(buf), sizeof buf - avail_out);
    } while (avail_in > 0 || BrotliEncoderHasMoreOutput(st) ||
             (op == BROTLI_OPERATION_FINISH && !BrotliEncoderIsFinished(st)));
  };
  feed_completion(n, [&](const char* p, std::size_t len, bool last) {
    feed(p, len, last ? BROTLI_OPERATION_FINISH : BROTLI_OPERATION_PROCESS);
  });
  BrotliEncoderDestroyInstance(st);
  return out;
}

}  // namespace

struct TestLlmServer::Impl {
  struct RuleEntry {
    Rule rule;
    std::optional<std::regex> re;
  };
  ServerOptions opts;
  asio::io_context ioc;
  tcp::acceptor acceptor{ioc};
  std::vector<std::thread> threads;
  std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();
  unsigned short port = 0;

  mutable std::mutex mu;
  std::vector<RuleEntry> rules;
  std::vector<RecordedRequest> recorded;
  std::map<std::string, int> fault_counts;
  std::atomic<int> in_flight{0}, max_conc{0}, default_latency{0};
  std::atomic<std::size_t> count{0};
  std::atomic<std::uint64_t> ids{0};
  std::atomic<bool> stopped{false};
  std::once_flag gzip_once, deflate_once, brotli_once;
  std::string gzip_body, deflate_body, brotli_body;
  std::unique_ptr<LimitState> limits;
  std::vector<double> answer_ms;  // guarded by mu

  void enter() {
    int now = ++in_flight;
    int prev = max_conc.load();
    while (now > prev && !max_conc.compare_exchange_weak(prev, now)) {
    }
  }
  void leave() { --in_flight; }

  static http::response<http::string_body> json_response(int status, const Json& body, unsigned version) {
    http::response<http::string_body> res{static_cast<http::status>(status), version};
    res.set(http::field::server, "eg-test-llm-server");
    res.set(http::field::content_type, "application/json");
    res.body() = body.dump();
    return res;
  }
  // A 200 answer of `body` as `content_type`, without the Server header (the malformed answers of the faults).
  static http::response<http::string_body> ok_response(const char* content_type, std::string body, unsigned version) {
    http::response<http::string_body> res{http::status::ok, version};
    res.set(http::field::content_type, content_type);
    res.body() = std::move(body);
    return res;
  }
  static Json error_body(const std::string& msg, const std::string& type) {
    return {{"error", {{"message", msg}, {"type", type}, {"param", nullptr}, {"code", nullptr}}}};
  }

  Action handle(const http::request<http::string_body>& req) {
    Action act;
    const unsigned v = req.version();
    std::string target(req.target());
    if (auto q = target.find('?'); q != std::string::npos) target.resize(q);
    if (req.method() == http::verb::get && target == "/_stats") {
      act.res = json_response(200, {{"requests", count.load()}, {"max_concurrency", max_conc.load()}}, v);
      return act;
    }
    ++count;
    bool chat = target == "/v1/chat/completions" || target == "/chat/completions";
    bool emb = target == "/v1/embeddings" || target == "/embeddings";
    RecordedRequest rec;
    rec.method = std::string(req.method_string());
    rec.target = std::string(req.target());
    rec.body = req.body();
    rec.t_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    for (const auto& f : req) {
      std::string name(f.name_string());
      for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      rec.headers[name] = std::string(f.value());
    }
    auto record = [&](Fault f) {
      rec.fault = fault_name(f);
      std::lock_guard lk(mu);
      recorded.push_back(rec);
    };
    if (!chat && !emb) {
      record(Fault::none);
      act.res = json_response(404, error_body("no route for " + target, "not_found"), v);
      return act;
    }
    if (req.method() != http::verb::post) {
      record(Fault::none);
      act.res = json_response(405, error_body("use POST", "invalid_request_error"), v);
      return act;
    }
    Json body = Json::parse(req.body(), nullptr, false);
    if (body.is_discarded() || !body.is_object()) {
      record(Fault::none);
      act.res = json_response(400, error_body("request body is not a JSON object", "invalid_request_error"), v);
      return act;
    }
    std::string last_user, all_text;
    std::vector<std::string> inputs;
    if (chat) {
      if (!body.contains("messages") || !body["messages"].is_array()) {
        record(Fault::none);
        act.res = json_response(400, error_body("'messages' is required", "invalid_request_error"), v);
        return act;
      }
      for (const auto& m : body["messages"]) {
        if (!m.is_object()) continue;
        std::string t = m.contains("content") ? content_text(m["content"]) : "";
        if (m.value("role", "") == "user") last_user = t;
        all_text += (all_text.empty() ? "" : "\n") + t;
      }
    } else {
      const auto& in = body.contains("input") ? body["input"] : Json();
      if (in.is_string())
        inputs.push_back(in.get<std::string>());
      else if (in.is_array())
        for (const auto& x : in) inputs.push_back(x.is_string() ? x.get<std::string>() : x.dump());
      else {
        record(Fault::none);
        act.res = json_response(400, error_body("'input' is required", "invalid_request_error"), v);
        return act;
      }
      for (const auto& s : inputs) all_text += (all_text.empty() ? "" : "\n") + s;
      last_user = all_text;
    }

    // The provider-like limits: a request that does not fit the buckets is refused here (429).
    if (limits) {
      std::vector<std::string> texts = inputs;
      if (chat)
        for (const auto& m : body["messages"])
          if (m.is_object()) texts.push_back(m.contains("content") ? content_text(m["content"]) : "");
      LimitState::Verdict verdict = limits->admit(limit_tokens(body, texts));
      act.headers = std::move(verdict.headers);
      if (verdict.refused) {
        record(Fault::http_429);
        act.res = json_response(429, error_body("Rate limit reached for requests or tokens (test server limits)",
                                                "rate_limit_exceeded"), v);
        return act;
      }
      act.queued = opts.limits.capacity > 0;
    }
    // Pick the rule and the fault.
    std::optional<Rule> rule;
    Fault fault = Fault::none;
    std::string retry_after;
    {
      std::lock_guard lk(mu);
      for (std::size_t i = 0; i < rules.size(); ++i) {
        const auto& e = rules[i];
        if (!e.rule.endpoint.empty() && e.rule.endpoint != (chat ? "chat" : "embeddings")) continue;
        const std::string& subject = e.rule.any_message ? all_text : last_user;
        bool m = e.rule.match.empty() ||
                 (e.re ? std::regex_search(subject, *e.re) : subject.find(e.rule.match) != std::string::npos);
        if (!m) continue;
        rule = e.rule;
        if (e.rule.fault != Fault::none) {
          int c = fault_counts[std::to_string(i) + "|" + req.body()]++;
          if (e.rule.fault_times < 0 || c < e.rule.fault_times) {
            fault = e.rule.fault;
            retry_after = e.rule.retry_after;
          }
        }
        break;
      }
      if (fault == Fault::none && (!rule || rule->fault == Fault::none) && opts.fault_rate > 0 &&
          !opts.random_faults.empty()) {
        std::uint64_t h = mix(fnv1a(req.body(), 1469598103934665603ULL ^ mix(opts.seed)));
        double u = static_cast<double>(h >> 11) * (1.0 / 9007199254740992.0);
        if (u < opts.fault_rate) {
          int c = fault_counts["random|" + req.body()]++;
          if (opts.random_fault_times < 0 || c < opts.random_fault_times) {
            fault = opts.random_faults[mix(h) % opts.random_faults.size()];
            retry_after = opts.random_retry_after;
          }
        }
      }
    }
    act.delay_ms = rule && rule->latency_ms >= 0 ? rule->latency_ms : default_latency.load();
    if (opts.latency_sigma > 0 && !(rule && rule->latency_ms >= 0) && act.delay_ms > 0) {
      // Log-normal with the same mean: Box-Muller over two uniforms from the body's seeded hash.
      std::uint64_t h = mix(fnv1a(req.body(), 0x5bd1e9955bd1e995ULL ^ mix(opts.seed + 7)));
      double u1 = (static_cast<double>(h >> 11) + 0.5) * (1.0 / 9007199254740992.0);
      double u2 = static_cast<double>(mix(h) >> 11) * (1.0 / 9007199254740992.0);
      double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
      double s = opts.latency_sigma;
      act.delay_ms = static_cast<int>(std::lround(act.delay_ms * std::exp(s * z - s * s / 2)));
    }
    rec.delay_ms = act.delay_ms;
    record(fault);
    switch (fault) {
      case Fault::http_429: {
        act.res = json_response(429, error_body("Rate limit reached (scripted)", "rate_limit_exceeded"), v);
        if (!retry_after.empty()) act.res.set(http::field::retry_after, retry_after);
        return act;
      }
      case Fault::http_500:
        act.res = json_response(500, error_body("internal server error (scripted)", "server_error"), v);
        return act;
      case Fault::http_503:
        act.res = json_response(503, error_body("service unavailable (scripted)", "server_error"), v);
        if (!retry_after.empty()) act.res.set(http::field::retry_after, retry_after);
        return act;
      case Fault::http_status: {
        std::string msg = rule ? rule->error_message : "scripted error";
        auto auth = rec.headers.count("authorization") ? rec.headers["authorization"] : std::string();
        for (std::size_t p; (p = msg.find("{auth}")) != std::string::npos;) msg.replace(p, 6, auth);
        act.res = json_response(rule ? rule->status : 400, error_body(msg, "invalid_request_error"), v);
        return act;
      }
      case Fault::cut:
        act.raw = true;
        act.raw_bytes =
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n"
            "{\"id\":\"chatcmpl-cut\",\"object\":\"chat.completion\",\"choi";
        return act;
      case Fault::malformed_json:
        act.res = ok_response("application/json", "{\"id\": \"chatcmpl-broken\", \"choices\": [ {oops, this is not JSON", v);
        return act;
      case Fault::deep_json:  // what a hostile or broken server may send: valid JSON, absurdly deep
        act.res = ok_response("application/json",
                              "{\"id\": \"chatcmpl-deep\", \"choices\": [{\"index\": 0, \"message\": {\"role\": \"assistant\", "
                              "\"content\": \"OK\"}, \"finish_reason\": \"stop\"}], \"extra\": " +
                                  std::string(100000, '[') + std::string(100000, ']') + "}",
                              v);
        return act;
      case Fault::wrong_content_type:
        act.res = ok_response("text/html; charset=utf-8",
                              "<html><head><title>502 Bad Gateway</title></head><body><h1>Bad Gateway</h1></body></html>", v);
        return act;
      case Fault::missing_choices:
        act.res = json_response(200, {{"id", "chatcmpl-empty"}, {"object", chat ? "chat.completion" : "list"}}, v);
        return act;
      case Fault::hang:
        act.delay_ms = opts.hang_ms;
        break;
      case Fault::trickle: {
        act.raw = true;
        act.raw_bytes = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n";
        act.stream = Stream{[](std::uint64_t) { return std::string(" "); }, opts.trickle_ms, 100000, opts.hostile_max_s};
        return act;
      }
      case Fault::slow_headers: {
        act.raw = true;
        const std::string head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Slow: ";
        act.stream = Stream{[head](std::uint64_t sent) { return sent < head.size() ? head.substr(sent, 1) : std::string("a"); },
                            opts.trickle_ms, opts.hostile_max_bytes, opts.hostile_max_s};
        return act;
      }
      case Fault::endless: {
        act.raw = true;
        act.raw_bytes = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n";
        auto piece = std::make_shared<std::string>("10000\r\n" + std::string(65536, 'a') + "\r\n");
        std::string first = std::string(kCompletionHead);
        first = fmt_hex(first.size()) + "\r\n" + first + "\r\n";
        act.stream = Stream{[piece, first](std::uint64_t sent) { return sent == 0 ? first : *piece; }, 0,
                            opts.hostile_max_bytes, opts.hostile_max_s};
        return act;
      }
      case Fault::brotli_bomb: {
        std::call_once(brotli_once, [&] { brotli_body = brotli_completion(opts.bomb_bytes); });
        act.raw = true;
        act.raw_bytes = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Encoding: br\r\nContent-Length: " +
                        std::to_string(brotli_body.size()) + "\r\n\r\n" + brotli_body;
        return act;
      }
      case Fault::gzip_bomb:
      case Fault::deflate_bomb: {
        bool gz = fault == Fault::gzip_bomb;
        std::call_once(gz ? gzip_once : deflate_once, [&] {
          (gz ? gzip_body : deflate_body) = compressed_completion(opts.bomb_bytes, gz ? 31 : 15);
        });
        const std::string& b = gz ? gzip_body : deflate_body;
        act.raw = true;
        act.raw_bytes = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Encoding: " +
                        std::string(gz ? "gzip" : "deflate") + "\r\nContent-Length: " + std::to_string(b.size()) +
                        "\r\n\r\n" + b;
        return act;
      }
      case Fault::big_content: {
        const std::uint64_t n = opts.big_content_bytes;
        const std::uint64_t total = (sizeof kCompletionHead - 1) + n + (sizeof kCompletionTail - 1);
        act.raw = true;
        act.raw_bytes = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(total) + "\r\n\r\n";
        auto piece = std::make_shared<std::string>(65536, 'x');
        act.stream = Stream{[piece, n](std::uint64_t sent) -> std::string {
                              const std::uint64_t head = sizeof kCompletionHead - 1;
                              if (sent == 0) return kCompletionHead;
                              if (sent >= head + n) return sent == head + n ? std::string(kCompletionTail) : std::string();
                              return piece->substr(0, static_cast<std::size_t>(std::min<std::uint64_t>(piece->size(), head + n - sent)));
                            },
                            0, total, opts.hostile_max_s};
        return act;
      }
      case Fault::reset:
        act.reset = true;
        return act;
      case Fault::bad_chunking:
        act.raw = true;
        act.raw_bytes = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
                        "zz\r\n{}\r\n0\r\n\r\n";
        return act;
      case Fault::invalid_utf8: {
        std::string b = std::string(kCompletionHead) + "caf\xe9 \xff\xfe" + kCompletionTail;
        act.raw = true;
        act.raw_bytes = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(b.size()) +
                        "\r\n\r\n" + b;
        return act;
      }
      case Fault::empty_choices:
        act.res = json_response(200, {{"id", "chatcmpl-empty"}, {"object", "chat.completion"}, {"choices", Json::array()}}, v);
        return act;
      case Fault::redirect:
      case Fault::redirect_loop: {
        http::response<http::string_body> res{http::status::found, v};
        std::string host = req.count(http::field::host) ? std::string(req[http::field::host]) : "127.0.0.1";
        res.set(http::field::location, fault == Fault::redirect ? opts.redirect_location : "http://" + host + std::string(req.target()));
        act.res = std::move(res);
        return act;
      }
      case Fault::many_choices:
      case Fault::other_model:
      case Fault::none:
        break;
    }
    std::string model = fault == Fault::other_model ? opts.other_model : body.value("model", "");
    if (chat) {
      std::string reply = rule && !rule->reply.empty() ? rule->reply : opts.default_reply;
      for (std::size_t p; (p = reply.find("{last_user}")) != std::string::npos;) reply.replace(p, 11, last_user);
      auto pt = word_count(all_text), ct = word_count(reply);
      if (fault == Fault::many_choices) {
        Json choices = Json::array();
        for (int i = 0; i < 10000; ++i)
          choices.push_back({{"index", i}, {"message", {{"role", "assistant"}, {"content", reply}}}, {"finish_reason", "stop"}});
        act.res = json_response(200, {{"id", "chatcmpl-many"}, {"object", "chat.completion"}, {"model", model}, {"choices", choices}}, v);
        return act;
      }
      Json out = {{"id", "chatcmpl-test-" + std::to_string(++ids)},
                  {"object", "chat.completion"},
                  {"created", 1700000000},
                  {"model", model},
                  {"choices",
                   Json::array({{{"index", 0},
                                 {"message", {{"role", "assistant"}, {"content", reply}}},
                                 {"finish_reason", "stop"}}})},
                  {"usage", {{"prompt_tokens", pt}, {"completion_tokens", ct}, {"total_tokens", pt + ct}}}};
      if (opts.cached_tokens > 0)
        out["usage"]["prompt_tokens_details"] = {{"cached_tokens", std::min<std::size_t>(pt, static_cast<std::size_t>(opts.cached_tokens))}};
      if (!opts.send_usage) out.erase("usage");
      act.res = json_response(200, out, v);
    } else {
      Json data = Json::array();
      std::size_t toks = 0;
      // Answer in reverse index order so that clients must use "index".
      for (std::size_t i = inputs.size(); i-- > 0;) {
        data.push_back({{"object", "embedding"}, {"index", i}, {"embedding", embed_text(inputs[i], opts.embedding_dim)}});
        toks += word_count(inputs[i]);
      }
      act.res = json_response(
          200, {{"object", "list"}, {"data", data}, {"model", model}, {"usage", {{"prompt_tokens", toks}, {"total_tokens", toks}}}},
          v);
    }
    return act;
  }

  class Session : public std::enable_shared_from_this<Session> {
   public:
    Session(tcp::socket s, Impl* srv) : stream_(std::move(s)), timer_(stream_.get_executor()), srv_(srv) {}
    void start() {
      asio::dispatch(stream_.get_executor(), [self = shared_from_this()] { self->do_read(); });
    }

   private:
    void do_read() {
      parser_.emplace();
      parser_->body_limit(std::uint64_t(256) << 20);
      http::async_read(stream_, buf_, *parser_, [self = shared_from_this()](beast::error_code ec, std::size_t) {
        self->on_read(ec);
      });
    }
    void on_read(beast::error_code ec) {
      if (ec) return close();
      req_ = parser_->release();
      srv_->enter();
      arrived_ = std::chrono::steady_clock::now();
      act_ = srv_->handle(req_);
      if (act_.queued) {  // one of the capacity's places first (at once, or when one is freed)
        srv_->limits->acquire([self = shared_from_this()] {
          asio::post(self->stream_.get_executor(), [self] { self->start_answer(); });
        });
        return;
      }
      start_answer();
    }
    void start_answer() {
      if (act_.delay_ms > 0) {
        timer_.expires_after(std::chrono::milliseconds(act_.delay_ms));
        timer_.async_wait([self = shared_from_this()](beast::error_code) { self->send(); });
      } else {
        send();
      }
    }
    void send() {
      if (act_.queued) {  // the answer is done: its place goes to the next request waiting
        act_.queued = false;
        srv_->limits->release();
      }
      if (act_.reset) {
        srv_->leave();
        beast::error_code ec;
        stream_.socket().set_option(asio::socket_base::linger(true, 0), ec);
        stream_.socket().close(ec);  // linger 0: a reset, not a FIN
        return;
      }
      if (act_.raw) {
        srv_->leave();
        if (act_.stream) {
          started_ = std::chrono::steady_clock::now();
          asio::async_write(stream_.socket(), asio::buffer(act_.raw_bytes),
                            [self = shared_from_this()](beast::error_code ec, std::size_t) {
                              if (ec) return self->close();
                              self->pump();
                            });
          return;
        }
        asio::async_write(stream_.socket(), asio::buffer(act_.raw_bytes),
                          [self = shared_from_this()](beast::error_code, std::size_t) { self->close(); });
        return;
      }
      if (srv_->limits && act_.res.result_int() != 429) {
        std::lock_guard lk(srv_->mu);
        srv_->answer_ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - arrived_).count());
      }
      keep_alive_ = req_.keep_alive();
      for (const auto& [k, val] : act_.headers) act_.res.set(k, val);
      act_.res.keep_alive(keep_alive_);
      act_.res.prepare_payload();  // (the head and the body then go out in one write)
      // Leave before writing: once the answer is on its way the client may start its next request, and it
      // must not be counted as concurrent with this one.
      srv_->leave();
      http::async_write(stream_, act_.res, [self = shared_from_this()](beast::error_code ec, std::size_t) {
        if (ec || !self->keep_alive_) return self->close();
        self->do_read();
      });
    }
    // The next piece of a streamed body, within its bounds in bytes and time.
    void pump() {
      const Stream& st = *act_.stream;
      double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
      if (sent_ >= st.max_bytes || el >= st.max_s || srv_->stopped.load()) return close();
      piece_ = st.next(sent_);
      if (piece_.empty()) return close();
      asio::async_write(stream_.socket(), asio::buffer(piece_), [self = shared_from_this()](beast::error_code ec, std::size_t n) {
        if (ec) return self->close();
        self->sent_ += n;
        if (self->act_.stream->interval_ms <= 0) return self->pump();
        self->timer_.expires_after(std::chrono::milliseconds(self->act_.stream->interval_ms));
        self->timer_.async_wait([self](beast::error_code) { self->pump(); });
      });
    }
    void close() {
      beast::error_code ec;
      stream_.socket().shutdown(tcp::socket::shutdown_both, ec);
      stream_.socket().close(ec);
    }

    beast::tcp_stream stream_;
    asio::steady_timer timer_;
    Impl* srv_;
    beast::flat_buffer buf_;
    std::optional<http::request_parser<http::string_body>> parser_;
    http::request<http::string_body> req_;
    Action act_;
    bool keep_alive_ = true;
    std::string piece_;
    std::uint64_t sent_ = 0;
    std::chrono::steady_clock::time_point started_{}, arrived_{};
  };

  void do_accept() {
    acceptor.async_accept(asio::make_strand(ioc), [this](beast::error_code ec, tcp::socket s) {
      if (ec) {
        if (!stopped.load() && ec != asio::error::operation_aborted) do_accept();
        return;
      }
      s.set_option(tcp::no_delay(true), ec);
      std::make_shared<Session>(std::move(s), this)->start();
      do_accept();
    });
  }

  void stop() {
    if (stopped.exchange(true)) return;
    ioc.stop();
    for (auto& t : threads)
      if (t.joinable()) t.join();
    beast::error_code ec;
    acceptor.close(ec);
  }
};

TestLlmServer::TestLlmServer(ServerOptions opts, unsigned short port) : impl_(std::make_shared<Impl>()) {
  auto& im = *impl_;
  im.opts = std::move(opts);
  im.default_latency = im.opts.latency_ms;
  if (im.opts.limits.any()) im.limits = std::make_unique<LimitState>(im.opts.limits);
  tcp::endpoint ep(asio::ip::make_address("127.0.0.1"), port);
  im.acceptor.open(ep.protocol());
  im.acceptor.set_option(asio::socket_base::reuse_address(true));
  im.acceptor.bind(ep);
  im.acceptor.listen(asio::socket_base::max_listen_connections);
  im.port = im.acceptor.local_endpoint().port();
  im.do_accept();
  int n = std::max(1, im.opts.threads);
  for (int i = 0; i < n; ++i) im.threads.emplace_back([p = impl_.get()] { p->ioc.run(); });
}

TestLlmServer::~TestLlmServer() { impl_->stop(); }

unsigned short TestLlmServer::port() const { return impl_->port; }
std::string TestLlmServer::base_url(bool with_v1) const {
  return "http://127.0.0.1:" + std::to_string(impl_->port) + (with_v1 ? "/v1" : "");
}

void TestLlmServer::add_rule(Rule r) {
  Impl::RuleEntry e{r, std::nullopt};
  if (r.regex) e.re.emplace(r.match, std::regex::ECMAScript);
  std::lock_guard lk(impl_->mu);
  impl_->rules.push_back(std::move(e));
}
void TestLlmServer::clear_rules() {
  std::lock_guard lk(impl_->mu);
  impl_->rules.clear();
}
void TestLlmServer::set_default_latency_ms(int ms) { impl_->default_latency = ms; }
std::size_t TestLlmServer::request_count() const { return impl_->count.load(); }
std::vector<RecordedRequest> TestLlmServer::requests() const {
  std::lock_guard lk(impl_->mu);
  return impl_->recorded;
}
int TestLlmServer::max_concurrency() const { return impl_->max_conc.load(); }
std::uint64_t TestLlmServer::refused_by_limits() const { return impl_->limits ? impl_->limits->refused() : 0; }
std::vector<double> TestLlmServer::answer_latencies_ms() const {
  std::lock_guard lk(impl_->mu);
  return impl_->answer_ms;
}
void TestLlmServer::reset_counters() {
  std::lock_guard lk(impl_->mu);
  impl_->recorded.clear();
  impl_->fault_counts.clear();
  impl_->count = 0;
  impl_->max_conc = 0;
  impl_->answer_ms.clear();
}
void TestLlmServer::stop() { impl_->stop(); }

std::vector<double> TestLlmServer::embed_text(const std::string& text, int dim) {
  std::vector<double> v(static_cast<std::size_t>(std::max(1, dim)), 0.0);
  std::string w;
  auto flush = [&] {
    if (w.empty()) return;
    std::uint64_t h = mix(fnv1a(w));
    v[h % v.size()] += (h >> 63) ? 1.0 : -1.0;
    w.clear();
  };
  for (char c : text) {
    unsigned char u = static_cast<unsigned char>(c);
    if (std::isalnum(u) || u >= 0x80)
      w.push_back(static_cast<char>(std::tolower(u)));
    else
      flush();
  }
  flush();
  double n = 0;
  for (double x : v) n += x * x;
  if (n > 0)
    for (double& x : v) x /= std::sqrt(n);
  return v;
}

}  // namespace evalgraph::testing
