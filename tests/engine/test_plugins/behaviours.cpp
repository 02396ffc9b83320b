// Test node types that misbehave on purpose, driven by the record's text:
//   test.flaky     "fail" → EG_ERROR, "throw" → an exception, "retry:N" → EG_RETRY the first N calls,
//                  "garbage" → output that is not JSON, "invalid" → EG_INVALID_INPUT; else {"text": upper}.
//   test.upper     {"upper": text in upper case}
//   test.concat    reads a and b (b optional) → {"joined": "a|b"}
//   test.seq       sequence node: {"position": i, "group_size": n, "running": "t1+t2+..."}
//   test.params    checks its parameter schema: mode (enum), weight (0..1), count (integer)
//   test.needs_llm asks the host for a chat completion and returns its content
//   test.slow      sleeps `ms` milliseconds, then upper-cases text
//   test.scored    reads x (a number, or its text) and declares its outputs (ABI 1.3): {"score": x (number),
//                  "ok": x >= 0.5 (boolean), "label": "hi"/"lo" (string), "error_rate": 1 - x (lower is better),
//                  "tags": [..] (array)}; x "fail" fails the record
//   test.slow_sink a sink that sleeps `ms` milliseconds per record and writes nothing (a blocked file system)
#include <evalgraph/output_file.hpp>
#include <evalgraph/plugin.hpp>

#include <atomic>
#include <cctype>
#include <map>
#include <mutex>
#include <thread>

using evalgraph::json;

namespace {

std::string upper(std::string s) {
  for (auto &c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

class Flaky : public evalgraph::Node {
 public:
  Flaky(const evalgraph::Host &, const json &) {}
  json process(evalgraph::Call &, const json &in) override {
    std::string t = in.at("text").get<std::string>();
    if (t.find("throw") != std::string::npos) throw std::runtime_error("flaky threw on '" + t + "'");
    if (t.find("invalid") != std::string::npos) throw evalgraph::InputError("flaky: input marked invalid");
    if (auto p = t.find("retry:"); p != std::string::npos) {
      int n = std::stoi(t.substr(p + 6));
      std::lock_guard lk(mu_);
      if (++attempts_[t] <= n) throw evalgraph::RetryError("flaky: try again");
      return {{"text", upper(t)}, {"attempts", attempts_[t]}};
    }
    if (t.find("fail") != std::string::npos) throw std::runtime_error("flaky failed on '" + t + "'");
    if (t.find("garbage") != std::string::npos) return "not an object";
    return {{"text", upper(t)}};
  }

 private:
  std::mutex mu_;
  std::map<std::string, int> attempts_;
};

class Upper : public evalgraph::Node {
 public:
  Upper(const evalgraph::Host &, const json &) {}
  json process(evalgraph::Call &, const json &in) override { return {{"upper", upper(in.at("text").get<std::string>())}}; }
};

class Concat : public evalgraph::Node {
 public:
  Concat(const evalgraph::Host &, const json &p) : sep_(p.value("separator", "|")) {}
  json process(evalgraph::Call &, const json &in) override {
    std::string a = in.at("a").get<std::string>();
    std::string b = in.contains("b") ? in["b"].get<std::string>() : std::string("-");
    return {{"joined", a + sep_ + b}};
  }

 private:
  std::string sep_;
};

class Seq : public evalgraph::Node {
 public:
  Seq(const evalgraph::Host &, const json &) {}
  json process_sequence(evalgraph::Call &, const json &records) override {
    json out = json::array();
    std::string running;
    for (size_t i = 0; i < records.size(); ++i) {
      running += (i ? "+" : "") + records[i].at("text").get<std::string>();
      out.push_back({{"position", i}, {"group_size", records.size()}, {"running", running}});
    }
    return out;
  }
};

class Params : public evalgraph::Node {
 public:
  Params(const evalgraph::Host &, const json &p) : p_(p) {
    if (p.value("mode", "") == "refuse") throw std::runtime_error("mode 'refuse' refuses to start");
  }
  json process(evalgraph::Call &, const json &) override { return {{"params", p_}}; }

 private:
  json p_;
};

class Slow : public evalgraph::Node {
 public:
  Slow(const evalgraph::Host &, const json &p) : ms_(p.value("ms", 5)) {}
  json process(evalgraph::Call &, const json &in) override {
    std::this_thread::sleep_for(std::chrono::milliseconds(ms_));
    return {{"text", upper(in.at("text").get<std::string>())}};
  }

 private:
  int ms_;
};

class SlowSink : public evalgraph::RawNode {
 public:
  SlowSink(const evalgraph::Host &, const json &p) : ms_(p.value("ms", 1000)) {}
  std::string process_raw(evalgraph::Call &, std::string_view) override {
    std::this_thread::sleep_for(std::chrono::milliseconds(ms_));
    return {};
  }
  json finish(evalgraph::Call &) override { return json::object(); }

 private:
  int ms_;
};

class NeedsLlm : public evalgraph::Node {
 public:
  NeedsLlm(const evalgraph::Host &h, const json &) : host_(h) {}
  json process(evalgraph::Call &call, const json &in) override {
    json req = {{"messages", json::array({{{"role", "user"}, {"content", in.at("text")}}})}};
    json r = host_.chat(call, req);
    return {{"answer", r.at("choices").at(0).at("message").at("content")}};
  }

 private:
  evalgraph::Host host_;
};

constexpr const char *kNoParams = R"({"type":"object","additionalProperties":false})";
class Scored : public evalgraph::Node {
 public:
  Scored(const evalgraph::Host &, const json &) {}
  json process(evalgraph::Call &, const json &in) override {
    const json &v = in.at("x");
    if (v.is_string() && v.get<std::string>() == "fail") throw std::runtime_error("scored: asked to fail");
    const double x = v.is_number() ? v.get<double>() : std::stod(v.get<std::string>());
    return {{"score", x}, {"ok", x >= 0.5}, {"label", x >= 0.5 ? "hi" : "lo"}, {"error_rate", 1 - x}, {"tags", {"a"}}};
  }
};
constexpr const char *kScoredOutputs = R"({"score": {"type": "number"}, "ok": {"type": "boolean"},
  "label": {"type": "string"}, "error_rate": {"type": "number", "better": "lower"}, "tags": {"type": "array"}})";

constexpr const char *kParamsSchema = R"({"type":"object","additionalProperties":false,"properties":{
  "mode":{"type":"string","enum":["fast","careful","refuse"]},
  "weight":{"type":"number","minimum":0,"maximum":1},
  "count":{"type":"integer","minimum":1}},"required":["mode"]})";

}  // namespace

EVALGRAPH_PLUGIN("test-behaviours", "1.2.0", "engine test node types",
                 evalgraph::node_type<Flaky>({EG_KIND_OPERATOR, "test.flaky", "fails on demand", kNoParams, {"text"}, {}, {"text", "attempts"}, EG_FLAG_THREAD_SAFE}),
                 evalgraph::node_type<Upper>({EG_KIND_OPERATOR, "test.upper", "upper-cases text", kNoParams, {"text"}, {}, {"upper"}, 0}),
                 evalgraph::node_type<Concat>({EG_KIND_OPERATOR, "test.concat", "joins a and b",
                                               R"({"type":"object","additionalProperties":false,"properties":{"separator":{"type":"string"}}})",
                                               {"a"}, {"b"}, {"joined"}, EG_FLAG_THREAD_SAFE}),
                 evalgraph::node_type<Seq>({EG_KIND_OPERATOR, "test.seq", "sequence positions", kNoParams, {"text"}, {}, {"position", "group_size", "running"}, EG_FLAG_THREAD_SAFE | EG_FLAG_SEQUENCE}),
                 evalgraph::node_type<Params>({EG_KIND_OPERATOR, "test.params", "parameter checks", kParamsSchema, {}, {}, {"params"}, EG_FLAG_THREAD_SAFE}),
                 evalgraph::node_type<Slow>({EG_KIND_OPERATOR, "test.slow", "sleeps", R"({"type":"object","additionalProperties":false,"properties":{"ms":{"type":"integer","minimum":0}}})", {"text"}, {}, {"text"}, EG_FLAG_THREAD_SAFE}),
                 evalgraph::node_type<NeedsLlm>({EG_KIND_JUDGE, "test.needs_llm", "asks the LLM", kNoParams, {"text"}, {}, {"answer"}, EG_FLAG_THREAD_SAFE | EG_FLAG_USES_LLM}),
                 evalgraph::node_type<Scored>({EG_KIND_OPERATOR, "test.scored", "declared outputs", kNoParams, {"x"}, {},
                                               {"score", "ok", "label", "error_rate", "tags"}, EG_FLAG_THREAD_SAFE, kScoredOutputs}),
                 evalgraph::sink_type<SlowSink>("test.slow_sink", "sleeps per record",
                                                R"({"type":"object","properties":{"ms":{"type":"integer","minimum":0}}})"))
