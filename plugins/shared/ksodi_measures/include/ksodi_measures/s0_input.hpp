// ksodi.s0's input from a record: the ports ksodi.s0 reads, and ksodi.s_t reads in each turn, resolved once.
#pragma once

#include <string>
#include <utility>

#include "evalgraph/input.hpp"
#include "ksodi_measures/s0.hpp"

namespace ksodi {

struct S0Ports {
  explicit S0Ports(const evalgraph::NodeSpec &spec)
      : answer(spec.port("answer")), system_prompt(spec.port("system_prompt")), tool_profile(spec.port("tool_profile")),
        user_text(spec.port("user_text")), tool_profile_id(spec.port("tool_profile_id")) {}
  // The record's input with `answer_text`, the text in port `answer` as the node read and checked it.
  S0Input read(const evalgraph::Record &in, std::string answer_text) const {
    return {std::move(answer_text), in.text(system_prompt), in.text(tool_profile), in.text(user_text),
            in.text(tool_profile_id)};
  }

  evalgraph::Port answer, system_prompt, tool_profile, user_text, tool_profile_id;
};

}  // namespace ksodi
