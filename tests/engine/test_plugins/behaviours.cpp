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
#include <evalgraph/plugin.hpp>

#include <atomic>
#include <cctype>
#include <map>
#include <mutex>
#include <thread>

using evalgraph::json;
using evalgraph::NoParams;

namespace {

std::string upper(std::string s) {
  for (auto &c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

class Flaky : public evalgraph::Node {
 public:
  Flaky(const evalgraph::Host &, const NoParams &) {}
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
  Upper(const evalgraph::Host &, const NoParams &) {}
  json process(evalgraph::Call &, const json &in) override { return {{"upper", upper(in.at("text").get<std::string>())}}; }
};

struct ConcatConfig {
  std::string separator = "|";
};
const evalgraph::Params<ConcatConfig> kConcatParams{
    {evalgraph::param(&ConcatConfig::separator, "separator", "between a and b")}};
class Concat : public evalgraph::Node {
 public:
  Concat(const evalgraph::Host &, const ConcatConfig &c) : sep_(c.separator) {}
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
  Seq(const evalgraph::Host &, const NoParams &) {}
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

struct ChecksConfig {
  std::string mode;
  double weight = 0;
  int count = 1;
};
const evalgraph::Params<ChecksConfig> kChecksParams{{
    evalgraph::param(&ChecksConfig::mode, "mode", "how").one_of({"fast", "careful", "refuse"}).make_required(),
    evalgraph::param(&ChecksConfig::weight, "weight", "a share").range(0, 1),
    evalgraph::param(&ChecksConfig::count, "count", "how many").at_least(1),
}};
// Answers the parameters as the host passed them.
class Params : public evalgraph::Node {
 public:
  Params(const evalgraph::Host &, const ChecksConfig &c, const json &p) : p_(p) {
    if (c.mode == "refuse") throw std::runtime_error("mode 'refuse' refuses to start");
  }
  json process(evalgraph::Call &, const json &) override { return {{"params", p_}}; }

 private:
  json p_;
};

struct SlowConfig {
  int ms = 5;
};
const evalgraph::Params<SlowConfig> kSlowParams{
    {evalgraph::param(&SlowConfig::ms, "ms", "sleep per record").at_least(0)}};
class Slow : public evalgraph::Node {
 public:
  Slow(const evalgraph::Host &, const SlowConfig &c) : ms_(c.ms) {}
  json process(evalgraph::Call &, const json &in) override {
    std::this_thread::sleep_for(std::chrono::milliseconds(ms_));
    return {{"text", upper(in.at("text").get<std::string>())}};
  }

 private:
  int ms_;
};

struct SlowSinkConfig {
  int ms = 1000;
};
const evalgraph::Params<SlowSinkConfig> kSlowSinkParams{
    {evalgraph::param(&SlowSinkConfig::ms, "ms", "sleep per record").at_least(0)}};
class SlowSink : public evalgraph::RawNode {
 public:
  SlowSink(const evalgraph::Host &, const SlowSinkConfig &c) : ms_(c.ms) {}
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
  NeedsLlm(const evalgraph::Host &h, const NoParams &) : host_(h) {}
  json process(evalgraph::Call &call, const json &in) override {
    json req = {{"messages", json::array({{{"role", "user"}, {"content", in.at("text")}}})}};
    json r = host_.chat(call, req);
    return {{"answer", r.at("choices").at(0).at("message").at("content")}};
  }

 private:
  evalgraph::Host host_;
};

class Scored : public evalgraph::Node {
 public:
  Scored(const evalgraph::Host &, const NoParams &) {}
  json process(evalgraph::Call &, const json &in) override {
    const json &v = in.at("x");
    if (v.is_string() && v.get<std::string>() == "fail") throw std::runtime_error("scored: asked to fail");
    const double x = v.is_number() ? v.get<double>() : std::stod(v.get<std::string>());
    return {{"score", x}, {"ok", x >= 0.5}, {"label", x >= 0.5 ? "hi" : "lo"}, {"error_rate", 1 - x}, {"tags", {"a"}}};
  }
};
}  // namespace

const auto &kNone = evalgraph::no_params();
constexpr uint32_t kSafe = EG_FLAG_THREAD_SAFE;

EVALGRAPH_PLUGIN("test-behaviours", "engine test node types",
                 evalgraph::node_type<Flaky>({.name = "test.flaky",
                                              .description = "fails on demand",
                                              .reads = {"text"},
                                              .writes = {"text", "attempts"},
                                              .flags = kSafe,
                                              .params = kNone}),
                 evalgraph::node_type<Upper>({.name = "test.upper",
                                              .description = "upper-cases text",
                                              .reads = {"text"},
                                              .writes = {"upper"},
                                              .params = kNone}),
                 evalgraph::node_type<Concat>({.name = "test.concat",
                                               .description = "joins a and b",
                                               .reads = {"a"},
                                               .reads_optional = {"b"},
                                               .writes = {"joined"},
                                               .flags = kSafe,
                                               .params = kConcatParams}),
                 evalgraph::node_type<Seq>({.name = "test.seq",
                                            .description = "sequence positions",
                                            .reads = {"text"},
                                            .writes = {"position", "group_size", "running"},
                                            .flags = kSafe | EG_FLAG_SEQUENCE,
                                            .params = kNone}),
                 evalgraph::node_type<Params>({.name = "test.params",
                                               .description = "parameter checks",
                                               .writes = {"params"},
                                               .flags = kSafe,
                                               .params = kChecksParams}),
                 evalgraph::node_type<Slow>({.name = "test.slow",
                                             .description = "sleeps",
                                             .reads = {"text"},
                                             .writes = {"text"},
                                             .flags = kSafe,
                                             .params = kSlowParams}),
                 evalgraph::node_type<NeedsLlm>({.kind = EG_KIND_JUDGE,
                                                 .name = "test.needs_llm",
                                                 .description = "asks the LLM",
                                                 .reads = {"text"},
                                                 .writes = {"answer"},
                                                 .flags = kSafe | EG_FLAG_USES_LLM,
                                                 .params = kNone}),
                 evalgraph::node_type<Scored>({.name = "test.scored",
                                               .description = "declared outputs",
                                               .reads = {"x"},
                                               .writes = {{"score", "number"},
                                                          {"ok", "boolean"},
                                                          {"label", "string"},
                                                          {"error_rate", "number", "lower"},
                                                          {"tags", "array"}},
                                               .flags = kSafe,
                                               .params = kNone}),
                 evalgraph::node_type<SlowSink>({.kind = EG_KIND_SINK,
                                                 .name = "test.slow_sink",
                                                 .description = "sleeps per record",
                                                 .params = kSlowSinkParams}))
