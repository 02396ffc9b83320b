#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>

#include "llm/llm_service.h"

namespace evalgraph::llm {
namespace {

[[noreturn]] void fail(const std::string& name, const std::string& msg, const std::string& ptr = "") {
  throw ProviderConfigError(fmt::format("provider '{}': {}", name, msg), ptr);
}

double get_number(const std::string& name, const nlohmann::json& j, const char* key, double lo, bool lo_inclusive) {
  const auto& v = j.at(key);
  if (!v.is_number()) fail(name, fmt::format("'{}' must be a number", key), std::string("/") + key);
  double d = v.get<double>();
  if (lo_inclusive ? d < lo : d <= lo)
    fail(name, fmt::format("'{}' must be {} {} (got {})", key, lo_inclusive ? ">=" : ">", lo, d), std::string("/") + key);
  return d;
}

int get_int(const std::string& name, const nlohmann::json& j, const char* key, int lo) {
  const auto& v = j.at(key);
  if (!v.is_number_integer()) fail(name, fmt::format("'{}' must be an integer", key), std::string("/") + key);
  auto d = v.get<long long>();
  if (d < lo || d > 1000000)
    fail(name, fmt::format("'{}' must be between {} and 1000000 (got {})", key, lo, d), std::string("/") + key);
  return static_cast<int>(d);
}

// A size: a whole number of bytes, or a text with a unit: "512 KiB", "8 MiB", "1 GB" (powers of 1024).
std::size_t get_size(const std::string& name, const nlohmann::json& j, const char* key, std::size_t lo) {
  const auto& v = j.at(key);
  std::size_t out = 0;
  bool ok = false;
  if (v.is_number_integer() && v.get<long long>() >= 0) {
    out = static_cast<std::size_t>(v.get<long long>());
    ok = true;
  } else if (v.is_string()) {
    std::string s;
    for (char c : v.get<std::string>())
      if (c != ' ' && c != '_') s.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
    std::size_t i = 0;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
    if (i > 0 && i <= 12) {
      std::string unit = s.substr(i);
      std::size_t mul = unit.empty() || unit == "b" ? 1
                        : unit == "k" || unit == "kb" || unit == "kib" ? std::size_t(1) << 10
                        : unit == "m" || unit == "mb" || unit == "mib" ? std::size_t(1) << 20
                        : unit == "g" || unit == "gb" || unit == "gib" ? std::size_t(1) << 30
                                                                         : 0;
      out = std::stoull(s.substr(0, i)) * mul;
      ok = mul != 0;
    }
  }
  if (!ok) fail(name, fmt::format("'{}' must be a size: a whole number of bytes or e.g. \"8 MiB\", \"512 KiB\"", key));
  if (out < lo || out > (std::size_t(1) << 40))
    fail(name, fmt::format("'{}' must be between {} bytes and 1 TiB (got {})", key, lo, out));
  return out;
}

std::string get_string(const std::string& name, const nlohmann::json& j, const char* key) {
  const auto& v = j.at(key);
  if (!v.is_string()) fail(name, fmt::format("'{}' must be a string", key), std::string("/") + key);
  return v.get<std::string>();
}

std::string trim(std::string s) {
  auto issp = [](unsigned char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  while (!s.empty() && issp(static_cast<unsigned char>(s.back()))) s.pop_back();
  std::size_t i = 0;
  while (i < s.size() && issp(static_cast<unsigned char>(s[i]))) ++i;
  return s.substr(i);
}

bool ieq(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  return true;
}

}  // namespace

nlohmann::json Price::to_json() const {
  nlohmann::json j = {{"input_per_mtok", input_per_mtok}, {"output_per_mtok", output_per_mtok}};
  if (cached_input_per_mtok >= 0) j["cached_input_per_mtok"] = cached_input_per_mtok;
  return j;
}

Cost cost_of(const Price& price, const Usage& u) {
  Cost c;
  if (!price.set) return c;
  const std::uint64_t cached = std::min(u.cached_tokens, u.prompt_tokens);
  c.input_usd = static_cast<double>(u.prompt_tokens - cached) * price.input_per_mtok / 1e6;
  c.cached_input_usd = static_cast<double>(cached) * price.cached_rate() / 1e6;
  c.output_usd = static_cast<double>(u.completion_tokens) * price.output_per_mtok / 1e6;
  return c;
}

Price price_from_json(const std::string& name, const nlohmann::json& j) {
  static const std::set<std::string> keys = {"input_per_mtok", "output_per_mtok", "cached_input_per_mtok"};
  if (!j.is_object())
    fail(name, "'price' must be a mapping: {input_per_mtok: USD, output_per_mtok: USD, cached_input_per_mtok: USD}",
         "/price");
  for (const auto& [k, v] : j.items()) {
    (void)v;
    if (!keys.count(k))
      fail(name, fmt::format("unknown key '{}' in 'price' (known: input_per_mtok, output_per_mtok, cached_input_per_mtok; "
                             "USD per million tokens)", k),
           "/price/" + k + "#key");
  }
  Price p;
  p.set = true;
  auto num = [&](const char* k) {
    const auto& v = j.at(k);
    if (!v.is_number() || v.get<double>() < 0 || !(v.get<double>() < 1e9))
      fail(name, fmt::format("price '{}' must be a number >= 0 (USD per million tokens), got {}", k, v.dump()),
           std::string("/price/") + k);
    return v.get<double>();
  };
  for (const char* k : {"input_per_mtok", "output_per_mtok"}) {
    if (!j.contains(k))
      fail(name, fmt::format("'price' needs '{}' (USD per million tokens; 0 if free)", k), "/price");
  }
  p.input_per_mtok = num("input_per_mtok");
  p.output_per_mtok = num("output_per_mtok");
  if (j.contains("cached_input_per_mtok")) p.cached_input_per_mtok = num("cached_input_per_mtok");
  return p;
}

namespace {

void check_known_keys(const std::string& name, const nlohmann::json& j) {
  static const std::set<std::string> known = {
      "base_url",    "model",         "embedding_model",     "api_key_env",  "api_key_file",
      "headers",     "timeout_s",     "connect_timeout_s",   "max_in_flight", "requests_per_minute",
      "tokens_per_minute", "adaptive",
      "max_attempts", "backoff_initial_s", "backoff_max_s",  "max_malformed_attempts", "retry_after_max_s",
      "retry_total_max_s", "max_response_bytes", "max_response_bytes_in_flight", "price"};
  for (const auto& [k, v] : j.items()) {
    (void)v;
    if (!known.count(k))
      fail(name, fmt::format("unknown key '{}' (known keys: {})", k, fmt::join(known, ", ")),
           "/" + k + "#key");
  }
}

// The API key from api_key_env or api_key_file (one of them), and where it came from.
void read_api_key(const std::string& name, const nlohmann::json& j, ProviderConfig& p) {
  if (j.contains("api_key_env")) {
    std::string var = get_string(name, j, "api_key_env");
    if (var.empty()) fail(name, "'api_key_env' is empty");
    const char* val = std::getenv(var.c_str());
    if (!val || !*val) fail(name, fmt::format("environment variable {} (api_key_env) is not set or empty", var));
    p.api_key = trim(val);
    p.api_key_source = "env:" + var;
  } else if (j.contains("api_key_file")) {
    std::string path = get_string(name, j, "api_key_file");
    std::ifstream in(path, std::ios::binary);
    if (!in) fail(name, fmt::format("cannot read API key file '{}' (api_key_file)", path));
    std::ostringstream ss;
    ss << in.rdbuf();
    p.api_key = trim(ss.str());
    if (p.api_key.empty()) fail(name, fmt::format("API key file '{}' is empty", path));
    if (p.api_key.find('\n') != std::string::npos || p.api_key.find('\r') != std::string::npos)
      fail(name, fmt::format("API key file '{}' must hold one line", path));
    p.api_key_source = "file:" + path;
  }
}

// `headers`: extra request headers, none that the client sets itself or that would carry a second key.
void read_headers(const std::string& name, const nlohmann::json& h, ProviderConfig& p) {
  if (!h.is_object()) fail(name, "'headers' must be a mapping of header name to string value");
  for (const auto& [k, v] : h.items()) {
    if (!v.is_string()) fail(name, fmt::format("header '{}' must be a string", k));
    if (k.empty() || k.find_first_of(":\r\n ") != std::string::npos)
      fail(name, fmt::format("invalid header name '{}'", k));
    if (v.get<std::string>().find_first_of("\r\n") != std::string::npos)
      fail(name, fmt::format("header '{}' has a line break in its value", k));
    if (ieq(k, "Authorization") && !p.api_key.empty())
      fail(name, "header 'Authorization' conflicts with api_key_env/api_key_file");
    if (ieq(k, "Content-Type") || ieq(k, "Content-Length"))
      fail(name, fmt::format("header '{}' is set by the client and cannot be overridden", k));
    p.headers[k] = v.get<std::string>();
  }
}

// Timeouts, concurrency, retries and response bounds, each where it is given.
void read_limits(const std::string& name, const nlohmann::json& j, ProviderConfig& p) {
  auto number = [&](const char* k, double& dst, bool zero_ok) {
    if (j.contains(k)) dst = get_number(name, j, k, 0, zero_ok);
  };
  auto whole = [&](const char* k, int& dst) {
    if (j.contains(k)) dst = get_int(name, j, k, 1);
  };
  number("timeout_s", p.timeout_s, false);
  number("connect_timeout_s", p.connect_timeout_s, false);
  whole("max_in_flight", p.max_in_flight);
  number("requests_per_minute", p.requests_per_minute, true);
  number("tokens_per_minute", p.tokens_per_minute, true);
  if (j.contains("adaptive")) {
    if (!j.at("adaptive").is_boolean())
      fail(name, "'adaptive' must be true or false (false: max_in_flight is a fixed window)", "/adaptive");
    p.adaptive = j.at("adaptive").get<bool>();
  }
  whole("max_attempts", p.max_attempts);
  number("backoff_initial_s", p.backoff_initial_s, true);
  number("backoff_max_s", p.backoff_max_s, true);
  whole("max_malformed_attempts", p.max_malformed_attempts);
  number("retry_after_max_s", p.retry_after_max_s, true);
  number("retry_total_max_s", p.retry_total_max_s, true);
  if (j.contains("max_response_bytes")) p.max_response_bytes = get_size(name, j, "max_response_bytes", 1024);
  if (j.contains("max_response_bytes_in_flight"))
    p.max_response_bytes_in_flight = get_size(name, j, "max_response_bytes_in_flight", 1024);
  else  // one answer may always take the whole bound
    p.max_response_bytes_in_flight = std::max(p.max_response_bytes_in_flight, p.max_response_bytes);
  if (p.max_response_bytes_in_flight < p.max_response_bytes)
    fail(name, fmt::format("'max_response_bytes_in_flight' ({}) must be at least 'max_response_bytes' ({})",
                           p.max_response_bytes_in_flight, p.max_response_bytes));
  if (p.backoff_max_s < p.backoff_initial_s) fail(name, "'backoff_max_s' must be >= 'backoff_initial_s'", "/backoff_max_s");
}

}  // namespace

ProviderConfig provider_from_json(const std::string& name, const nlohmann::json& j, bool resolve_secrets) {
  if (name.empty()) throw std::invalid_argument("provider: empty name");
  if (!j.is_object()) fail(name, "must be a mapping of settings");
  check_known_keys(name, j);
  ProviderConfig p;
  p.name = name;
  if (!j.contains("base_url")) fail(name, "missing 'base_url' (e.g. https://api.openai.com/v1)");
  p.base_url = get_string(name, j, "base_url");
  if (p.base_url.rfind("http://", 0) != 0 && p.base_url.rfind("https://", 0) != 0)
    fail(name, fmt::format("'base_url' must start with http:// or https:// (got '{}')", p.base_url));
  while (!p.base_url.empty() && p.base_url.back() == '/') p.base_url.pop_back();
  if (j.contains("model")) p.model = get_string(name, j, "model");
  if (j.contains("embedding_model")) p.embedding_model = get_string(name, j, "embedding_model");
  if (p.model.empty() && p.embedding_model.empty()) fail(name, "needs 'model' and/or 'embedding_model'");
  if (j.contains("api_key_env") && j.contains("api_key_file"))
    fail(name, "give either 'api_key_env' or 'api_key_file', not both");
  if (resolve_secrets) read_api_key(name, j, p);  // (estimate: no request is sent, the key is not needed)
  if (j.contains("headers")) read_headers(name, j.at("headers"), p);
  read_limits(name, j, p);
  if (j.contains("price")) p.price = price_from_json(name, j.at("price"));
  return p;
}

}  // namespace evalgraph::llm
