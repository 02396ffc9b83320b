// Verdict parsing and prompt rendering shared by the chatbot judges judge.task_comparison and
// index.llm_hallucination (header-only, SDK only).
//
// A binary verdict is parsed strictly but forgiving of form:
//   - surrounding whitespace, a ``` code fence, quotes (" ' ` „ “ ” ‚ ‘ ’ « » ‹ ›), markdown emphasis (* _)
//     and trailing punctuation (. ! ; :) are removed, repeatedly;
//   - what is left must be, case-insensitively, exactly one of: true, wahr (→ 1) or false, falsch (→ 0);
//   - a JSON object {"verdict": ...} (key case-insensitive) whose value is a boolean, 1/0, or a string that
//     parses by the rule above.
// Anything else ("True, because ...", "Yes", "Das Kriterium ist erfüllt", an empty answer) is INVALID: the
// judge stores it with the raw answer and the reports count it; it is never turned into False.
#pragma once
#include <algorithm>
#include <nlohmann/json.hpp>
#include <optional>

#include "evalgraph/json_bounded.hpp"
#include "evalgraph/params.hpp"
#include "evalgraph/llm.hpp"
#include "evalgraph/plugin.hpp"
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace chatbot_judge {

// The parameters every chatbot judge takes (declared once, evalgraph/params.hpp); a judge's own parameter
// struct derives from JudgeConfig and its Params start with judge_params().
struct JudgeConfig : evalgraph::LlmParams {
  std::optional<std::string> system_prompt;
  nlohmann::json system_prompts = nlohmann::json::object();

  // system_prompt, else the prompt map's entry `key`, else `builtin`.
  std::string prompt(const char *key, const char *builtin) const {
    return system_prompt ? *system_prompt : system_prompts.value(key, std::string(builtin));
  }
};
inline const evalgraph::Params<JudgeConfig> &judge_params() {
  using evalgraph::param;
  using C = JudgeConfig;
  static const evalgraph::Params<C> p{evalgraph::llm_params(), {
    param(&C::system_prompt, "system_prompt", "System prompt template (placeholders: see the node type); null: system_prompts' entry for this judge, else the built-in prompt."),
    param(&C::system_prompts, "system_prompts", "A prompt map as in llm_system_prompts.yaml; this judge's entry is used when system_prompt is not given.").with_schema({{"type", "object"}}),
  }};
  return p;
}

// A verdict object nested deeper than this is invalid ({"verdict": true} is depth 1).
constexpr int kMaxVerdictDepth = 32;

enum class Verdict { yes, no, invalid };

inline std::string strip_decoration(std::string s) {
  static const std::vector<std::string> marks = {"\xE2\x80\x9E", "\xE2\x80\x9C", "\xE2\x80\x9D", "\xE2\x80\x9A",
                                                 "\xE2\x80\x98", "\xE2\x80\x99", "\xC2\xAB", "\xC2\xBB",
                                                 "\xE2\x80\xB9", "\xE2\x80\xBA", "\"", "'", "`", "*", "_",
                                                 " ", "\t", "\r", "\n"};
  static const std::vector<std::string> trailing = {".", "!", ";", ":"};
  for (bool changed = true; changed && !s.empty();) {
    changed = false;
    for (const auto &m : marks) {
      if (s.size() >= m.size() && s.compare(0, m.size(), m) == 0) {
        s.erase(0, m.size());
        changed = true;
      }
      if (s.size() >= m.size() && s.compare(s.size() - m.size(), m.size(), m) == 0) {
        s.erase(s.size() - m.size());
        changed = true;
      }
    }
    for (const auto &m : trailing) {
      if (s.size() >= m.size() && s.compare(s.size() - m.size(), m.size(), m) == 0) {
        s.erase(s.size() - m.size());
        changed = true;
      }
    }
  }
  return s;
}

inline Verdict parse_word(const std::string &raw) {
  std::string s = strip_decoration(raw);
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (s == "true" || s == "wahr") return Verdict::yes;
  if (s == "false" || s == "falsch") return Verdict::no;
  return Verdict::invalid;
}

inline Verdict parse_verdict(const std::string &answer) {
  std::string s = answer;
  // A fenced block: keep what is inside.
  auto a = s.find_first_not_of(" \t\r\n");
  if (a != std::string::npos && s.compare(a, 3, "```") == 0) {
    auto nl = s.find('\n', a);
    auto end = s.rfind("```");
    if (nl != std::string::npos && end != std::string::npos && end > nl) s = s.substr(nl + 1, end - nl - 1);
  }
  auto b = s.find_first_not_of(" \t\r\n");
  if (b != std::string::npos && s[b] == '{') {
    nlohmann::json j;  // an answer nested absurdly deep is invalid, not a stack overflow
    if (!evalgraph::parse_bounded(s, j, kMaxVerdictDepth) || !j.is_object()) return Verdict::invalid;
    for (auto it = j.begin(); it != j.end(); ++it) {
      std::string k = it.key();
      std::transform(k.begin(), k.end(), k.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
      if (k != "verdict") continue;
      const auto &v = it.value();
      if (v.is_boolean()) return v.get<bool>() ? Verdict::yes : Verdict::no;
      if (v.is_number_integer() && (v.get<long long>() == 0 || v.get<long long>() == 1))
        return v.get<long long>() == 1 ? Verdict::yes : Verdict::no;
      if (v.is_string()) return parse_word(v.get<std::string>());
      return Verdict::invalid;
    }
    return Verdict::invalid;
  }
  return parse_word(s);
}

inline const char *verdict_name(Verdict v) { return v == Verdict::yes ? "true" : v == Verdict::no ? "false" : "invalid"; }

inline constexpr auto &render = evalgraph::render_template;  // {name} placeholders (evalgraph/plugin.hpp)

inline constexpr auto &answer_text = evalgraph::chat_text;  // choices[0].message.content (evalgraph/plugin.hpp)

// The judge's output for one verdict.
inline nlohmann::json verdict_output(Verdict v, const std::string &raw) {
  nlohmann::json out = {{"verdict", verdict_name(v)}, {"valid", v != Verdict::invalid}, {"raw", raw}};
  out["value"] = v == Verdict::invalid ? nlohmann::json(nullptr) : nlohmann::json(v == Verdict::yes ? 1 : 0);
  return out;
}

// One chatbot judge's question to the LLM: its system prompt template, provider and request parameters.
class Judge {
 public:
  Judge(const evalgraph::Host &host, const JudgeConfig &c, const char *prompt_key, const char *builtin_prompt)
      : host_(host), provider_(c.provider), prompt_(c.prompt(prompt_key, builtin_prompt)), inference_(c.request_base()) {}

  // The system prompt rendered with `vars`, `user` as the user message; the verdict_output of the answer.
  nlohmann::json ask(evalgraph::Call &call, const std::vector<std::pair<std::string, std::string>> &vars,
                     const std::string &user) const {
    nlohmann::json req = inference_;
    req["messages"] = nlohmann::json::array({{{"role", "system"}, {"content", render(prompt_, vars)}}, {{"role", "user"}, {"content", user}}});
    nlohmann::json resp = host_.chat(call, req, provider_.empty() ? nullptr : provider_.c_str());
    auto text = answer_text(resp);
    if (!text) throw std::runtime_error("the judge's answer has no text content");
    return verdict_output(parse_verdict(*text), *text);
  }

 private:
  evalgraph::Host host_;
  std::string provider_, prompt_;
  nlohmann::json inference_;
};

}  // namespace chatbot_judge
