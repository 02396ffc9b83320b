#include "compression/llm_util.hpp"

#include <numeric>
#include <stdexcept>

#include "compression/session.hpp"
#include "evalgraph/json_bounded.hpp"

namespace compression {

json chat_request(const std::string &system, const std::string &user, double temperature, int max_tokens) {
  json r = {{"messages", json::array({{{"role", "system"}, {"content", system}}, {{"role", "user"}, {"content", user}}})},
            {"temperature", temperature}};
  if (max_tokens > 0) r["max_tokens"] = max_tokens;
  return r;
}

std::string chat_content(const json &response) {
  if (response.is_object()) {
    auto ch = response.find("choices");
    if (ch != response.end() && ch->is_array() && !ch->empty()) {
      const json &c0 = (*ch)[0];
      if (c0.is_object()) {
        auto msg = c0.find("message");
        if (msg != c0.end() && msg->is_object()) {
          auto content = msg->find("content");
          if (content != msg->end() && content->is_string()) return content->get<std::string>();
        }
      }
    }
  }
  throw std::runtime_error("the LLM response has no choices[0].message.content");
}

std::vector<BatchAnswer> chat_batch_texts(const evalgraph::Host &host, evalgraph::Call &call, const std::string &provider,
                                          const json &requests) {
  if (requests.empty()) return {};
  const json res = host.chat_batch(call, requests, provider.empty() ? nullptr : provider.c_str());
  if (!res.is_array() || res.size() != requests.size())
    throw std::runtime_error("chat_batch returned " + std::to_string(res.is_array() ? res.size() : 0) + " answers for " +
                             std::to_string(requests.size()) + " requests");
  std::vector<BatchAnswer> out(res.size());
  for (std::size_t i = 0; i < res.size(); ++i) {
    if (!res[i].value("ok", false)) {
      out[i].text = res[i].value("error", std::string("unknown error"));
      continue;
    }
    try {
      out[i] = {true, chat_content(res[i]["response"])};
    } catch (const std::exception &e) {
      out[i].text = e.what();
    }
  }
  return out;
}

std::optional<json> parse_json_answer(const std::string &text) {
  std::string t = trim(text);
  if (t.rfind("```", 0) == 0) {
    std::size_t nl = t.find('\n');
    if (nl == std::string::npos || t.size() < 6 || t.compare(t.size() - 3, 3, "```") != 0) return std::nullopt;
    std::string lang = trim(t.substr(3, nl - 3));
    if (!lang.empty() && lower(lang) != "json") return std::nullopt;
    std::string body = t.substr(nl + 1, t.size() - 3 - (nl + 1));
    if (body.find("```") != std::string::npos) return std::nullopt;  // more than one block
    t = trim(body);
  }
  json j;  // bounded: a judge's answer nested 100,000 deep is no JSON answer, not a stack overflow
  if (!evalgraph::parse_bounded(t, j, kMaxAnswerDepth)) return std::nullopt;
  return j;
}

std::uint64_t fnv1a64(const std::string &s, std::uint64_t h) {
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

std::uint64_t splitmix64(std::uint64_t &state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

std::vector<std::size_t> seeded_permutation(std::size_t n, std::uint64_t seed) {
  std::vector<std::size_t> p(n);
  std::iota(p.begin(), p.end(), std::size_t{0});
  std::uint64_t st = seed;
  for (std::size_t i = n; i > 1; --i) {
    std::size_t j = static_cast<std::size_t>(splitmix64(st) % i);
    std::swap(p[i - 1], p[j]);
  }
  return p;
}

}  // namespace compression
