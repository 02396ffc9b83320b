// LlmService's answer validation (llm_service_impl.h): a 2xx body checked by the engine's JSON scanner before
// it is parsed, held to the shape asked for (choices; one embedding per input), its usage read, the model that
// answered compared with the one asked for; the server's message from an error body.
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>

#include "evalgraph/json_bounded.hpp"
#include "llm/llm_service_impl.h"
#include "llm/tokens.h"
#include "util/raw_json.h"

namespace evalgraph::llm {

using namespace detail;  // the pieces LlmService's files share (llm_service_impl.h)

namespace detail {

constexpr std::size_t kSnippetBytes = 200;

// First kSnippetBytes of a body, printable ASCII kept, everything else escaped (keeps error strings valid
// UTF-8 whatever the server sent).
std::string snippet(std::string_view body) {
  std::string out;
  std::size_t n = std::min(body.size(), kSnippetBytes);
  for (std::size_t i = 0; i < n; ++i) {
    auto c = static_cast<unsigned char>(body[i]);
    if (c >= 0x20 && c < 0x7f)
      out.push_back(static_cast<char>(c));
    else if (c == '\n' || c == '\r' || c == '\t')
      out.push_back(' ');
    else
      out += fmt::format("\\x{:02x}", c);
  }
  if (body.size() > n) out += "...";
  return out;
}

// Responses (and cache entries) nested deeper than this are refused before they are parsed: an answer is a few
// levels deep, and what a plugin does with it (dump, copy) recurses.
constexpr int kMaxResponseDepth = 64;
const rawjson::CheckOptions& response_check() {
  static const rawjson::CheckOptions o = [] {
    rawjson::CheckOptions c;
    c.max_depth = kMaxResponseDepth;
    return c;
  }();
  return o;
}

// The server's message from an error body: {"error":{"message":..}}, {"error":".."}, {"message":..}, or a snippet.
std::string server_message(const std::string& body) {
  rawjson::CheckResult chk;
  rawjson::check(body, response_check(), chk, nullptr);
  auto j = chk.ok() ? nlohmann::json::parse(body, nullptr, false) : nlohmann::json(nlohmann::json::value_t::discarded);
  if (!j.is_discarded() && j.is_object()) {
    if (j.contains("error")) {
      const auto& e = j["error"];
      if (e.is_object() && e.contains("message") && e["message"].is_string()) return e["message"].get<std::string>();
      if (e.is_string()) return e.get<std::string>();
    }
    if (j.contains("message") && j["message"].is_string()) return j["message"].get<std::string>();
    if (j.contains("detail") && j["detail"].is_string()) return j["detail"].get<std::string>();
  }
  if (body.empty()) return "(empty body)";
  return "body starts: '" + snippet(body) + "'";
}

// The usage the server reported in an answer: prompt_tokens and completion_tokens (embeddings: prompt_tokens
// only), cached tokens from prompt_tokens_details.cached_tokens. False when it sent none.
bool reported_usage(const nlohmann::json& response, bool embed, Usage& u) {
  auto it = response.find("usage");
  if (it == response.end() || !it->is_object()) return false;
  auto num = [](const nlohmann::json& o, const char* k, std::uint64_t& out) {
    auto f = o.find(k);
    if (f == o.end() || !f->is_number()) return false;
    if (f->is_number_unsigned()) {
      out = f->get<std::uint64_t>();
      return true;
    }
    // (a negative count is none; nor is one past 2^64, or 1e300: converting it would be undefined behaviour)
    const double d = f->get<double>();
    if (!(d >= 0 && fits_integer<std::uint64_t>(d))) return false;
    out = static_cast<std::uint64_t>(d);
    return true;
  };
  if (!num(*it, "prompt_tokens", u.prompt_tokens)) return false;
  if (!num(*it, "completion_tokens", u.completion_tokens) && !embed) return false;
  if (auto d = it->find("prompt_tokens_details"); d != it->end() && d->is_object()) num(*d, "cached_tokens", u.cached_tokens);
  return true;
}

}  // namespace detail

namespace {

// Whether the model that answered is the one asked for, up to a version or date suffix ("gpt-4o" answered by
// "gpt-4o-2024-08-06") and an "org/" prefix, case aside.
bool same_model(std::string asked, std::string answered) {
  auto base = [](std::string m) {
    m = lower(std::move(m));
    if (auto slash = m.rfind('/'); slash != std::string::npos) m.erase(0, slash + 1);
    return m;
  };
  asked = base(std::move(asked));
  answered = base(std::move(answered));
  if (asked == answered) return true;
  const std::string& shorter = asked.size() < answered.size() ? asked : answered;
  const std::string& longer = asked.size() < answered.size() ? answered : asked;
  if (shorter.empty() || longer.compare(0, shorter.size(), shorter) != 0) return false;
  char sep = longer[shorter.size()];
  return sep == '-' || sep == ':' || sep == '@' || sep == '.' || sep == '_';
}

}  // namespace

// A one-time warning (run.log) when the model that answered is not the one the provider asks for.
void LlmService::Impl::check_model(ProviderState& ps, const nlohmann::json& resp) {
  if (ps.model_warned.load() || !resp.contains("model") || !resp["model"].is_string()) return;
  const std::string& answered = resp["model"].get_ref<const std::string&>();
  if (answered.empty() || same_model(ps.cfg.model, answered)) return;
  if (ps.model_warned.exchange(true)) return;
  log(LogLevel::warn, fmt::format("provider '{}': asked for model '{}', the answer names model '{}' (said once; "
                                  "the answers are used as they are)", ps.cfg.name, ps.cfg.model, snippet(answered)));
}

// The tokens of an answer: the server's usage, else counted (marked estimated).
Usage LlmService::Impl::usage_of(const Job& job, const nlohmann::json& response) const {
  Usage u;
  if (reported_usage(response, job.embed, u)) return u;
  u = Usage{};
  u.estimated = true;
  auto tc = tokens();
  nlohmann::json body = nlohmann::json::parse(job.body, nullptr, false);
  if (!body.is_discarded()) u.prompt_tokens = job.embed ? tc->embedding_tokens(body) : tc->chat_prompt_tokens(body);
  if (!job.embed) u.completion_tokens = tc->completion_tokens(response);
  return u;
}

// Validates a 2xx body; returns the normalised response or an error string.
bool LlmService::Impl::validate(const Job& job, const Transfer& t, nlohmann::json& out, std::string& err) {
  if (!t.content_type.empty() && lower(t.content_type).find("json") == std::string::npos) {
    err = fmt::format("wrong content type '{}' (expected application/json); body starts: '{}'", snippet(t.content_type),
                      snippet(t.body));
    return false;
  }
  // Checked by the engine's own scanner first (no recursion, our words): valid, nested at most
  // kMaxResponseDepth deep, numbers within a double; only then parsed.
  rawjson::CheckResult chk;
  rawjson::check(t.body, response_check(), chk, nullptr);
  if (chk.error.fault == rawjson::Fault::bad_utf8) {
    err = fmt::format("the server's response is not UTF-8 (a byte sequence at byte {} is not UTF-8; JSON must be "
                      "UTF-8: check the server's or a proxy's charset); body starts: '{}'",
                      chk.error.offset, snippet(t.body));
    return false;
  }
  if (chk.error.fault != rawjson::Fault::none) {
    err = fmt::format("response is not valid JSON ({} at byte {}); body starts: '{}'", chk.error.what,
                      chk.error.offset, snippet(t.body));
    return false;
  }
  if (chk.limit_faults > 0) {
    err = fmt::format("response cannot be taken: {} (at byte {}); body starts: '{}'", chk.limits.front().what,
                      chk.limits.front().offset, snippet(t.body));
    return false;
  }
  if (!chk.object) {
    err = fmt::format("response is not a JSON object; body starts: '{}'", snippet(t.body));
    return false;
  }
  out = nlohmann::json::parse(t.body);
  if (!job.embed) {
    if (!out.contains("choices") || !out["choices"].is_array() || out["choices"].empty()) {
      err = fmt::format("response has no 'choices'; body starts: '{}'", snippet(t.body));
      return false;
    }
    return true;
  }
  if (!out.contains("data") || !out["data"].is_array() || out["data"].size() != job.n_inputs) {
    err = fmt::format("embeddings response needs 'data' with {} items; body starts: '{}'", job.n_inputs,
                      snippet(t.body));
    return false;
  }
  auto& data = out["data"];
  for (const auto& d : data)
    if (!d.is_object() || !d.contains("embedding") || !d["embedding"].is_array()) {
      err = fmt::format("embeddings item without 'embedding' array; body starts: '{}'", snippet(t.body));
      return false;
    }
  bool indexed = std::all_of(data.begin(), data.end(),
                             [](const nlohmann::json& d) { return d.contains("index") && d["index"].is_number_integer(); });
  if (indexed)
    std::stable_sort(data.begin(), data.end(), [](const nlohmann::json& a, const nlohmann::json& b) {
      return a["index"].get<long long>() < b["index"].get<long long>();
    });
  return true;
}

// A 2xx answer: parsed and checked; one that is not what was asked for counts as malformed.
void LlmService::Impl::read_answer(Job& job, const Transfer& t, long status, ProviderState& ps, Outcome& o) {
  bool valid = false;
  try {
    valid = validate(job, t, o.resp, o.err);
  } catch (const std::exception&) {  // (a library's words would say little here)
    o.err = fmt::format("cannot read the response: a field has an unexpected type; body starts: '{}'",
                        snippet(t.body));
  }
  if (valid) return;
  o.malformed = true;
  ++job.malformed;
  o.retryable = job.malformed < ps.cfg.max_malformed_attempts;
  o.err = fmt::format("malformed response (HTTP {}): {}", status, o.err);
  std::lock_guard lk(stats_mu);
  ++ps.stats.malformed;
}

}  // namespace evalgraph::llm
