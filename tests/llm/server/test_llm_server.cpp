#include "test_llm_server.h"

#include <atomic>
#include <chrono>
#include <cmath>
#include <mutex>
#include <optional>
#include <regex>
#include <sstream>
#include <thread>

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
  }
  return "?";
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

std::size_t word_count(const std::string& s) {
  std::istringstream in(s);
  std::string w;
  std::size_t n = 0;
  while (in >> w) ++n;
  return n;
}

struct Action {
  int delay_ms = 0;
  bool raw = false;
  std::string raw_bytes;
  http::response<http::string_body> res;
};

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
          if (c < opts.random_fault_times) {
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
      case Fault::malformed_json: {
        http::response<http::string_body> res{http::status::ok, v};
        res.set(http::field::content_type, "application/json");
        res.body() = "{\"id\": \"chatcmpl-broken\", \"choices\": [ {oops, this is not JSON";
        act.res = std::move(res);
        return act;
      }
      case Fault::deep_json: {  // what a hostile or broken server may send: valid JSON, absurdly deep
        http::response<http::string_body> res{http::status::ok, v};
        res.set(http::field::content_type, "application/json");
        res.body() = "{\"id\": \"chatcmpl-deep\", \"choices\": [{\"index\": 0, \"message\": {\"role\": \"assistant\", "
                     "\"content\": \"OK\"}, \"finish_reason\": \"stop\"}], \"extra\": " +
                     std::string(100000, '[') + std::string(100000, ']') + "}";
        act.res = std::move(res);
        return act;
      }
      case Fault::wrong_content_type: {
        http::response<http::string_body> res{http::status::ok, v};
        res.set(http::field::content_type, "text/html; charset=utf-8");
        res.body() = "<html><head><title>502 Bad Gateway</title></head><body><h1>Bad Gateway</h1></body></html>";
        act.res = std::move(res);
        return act;
      }
      case Fault::missing_choices:
        act.res = json_response(200, {{"id", "chatcmpl-empty"}, {"object", chat ? "chat.completion" : "list"}}, v);
        return act;
      case Fault::hang:
        act.delay_ms = opts.hang_ms;
        break;
      case Fault::none:
        break;
    }
    std::string model = body.value("model", "");
    if (chat) {
      std::string reply = rule && !rule->reply.empty() ? rule->reply : opts.default_reply;
      for (std::size_t p; (p = reply.find("{last_user}")) != std::string::npos;) reply.replace(p, 11, last_user);
      auto pt = word_count(all_text), ct = word_count(reply);
      Json out = {{"id", "chatcmpl-test-" + std::to_string(++ids)},
                  {"object", "chat.completion"},
                  {"created", 1700000000},
                  {"model", model},
                  {"choices",
                   Json::array({{{"index", 0},
                                 {"message", {{"role", "assistant"}, {"content", reply}}},
                                 {"finish_reason", "stop"}}})},
                  {"usage", {{"prompt_tokens", pt}, {"completion_tokens", ct}, {"total_tokens", pt + ct}}}};
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
      act_ = srv_->handle(req_);
      if (act_.delay_ms > 0) {
        timer_.expires_after(std::chrono::milliseconds(act_.delay_ms));
        timer_.async_wait([self = shared_from_this()](beast::error_code) { self->send(); });
      } else {
        send();
      }
    }
    void send() {
      if (act_.raw) {
        srv_->leave();
        asio::async_write(stream_.socket(), asio::buffer(act_.raw_bytes),
                          [self = shared_from_this()](beast::error_code, std::size_t) { self->close(); });
        return;
      }
      keep_alive_ = req_.keep_alive();
      act_.res.keep_alive(keep_alive_);
      act_.res.prepare_payload();
      // Leave before writing: once the answer is on its way the client may start its next request, and it
      // must not be counted as concurrent with this one.
      srv_->leave();
      http::async_write(stream_, act_.res, [self = shared_from_this()](beast::error_code ec, std::size_t) {
        if (ec || !self->keep_alive_) return self->close();
        self->do_read();
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
void TestLlmServer::reset_counters() {
  std::lock_guard lk(impl_->mu);
  impl_->recorded.clear();
  impl_->fault_counts.clear();
  impl_->count = 0;
  impl_->max_conc = 0;
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
