// ksodi.o0's input from a record: the ports ksodi.o0 reads, and ksodi.o_t reads in each turn, resolved once.
#pragma once

#include <string>
#include <utility>

#include "evalgraph/input.hpp"
#include "ksodi_measures/o0.hpp"

namespace ksodi {

struct O0Ports {
  explicit O0Ports(const evalgraph::NodeSpec &spec)
      : answer(spec.port("answer")), docs(spec.port("retrieved_docs")), tool_outputs(spec.port("tool_outputs")),
        user_text(spec.port("user_text")) {}
  // The record's input with `answer_text`, the text in port `answer` as the node read and checked it; documents
  // in a text port nest at most `nesting_depth` deep.
  O0Input read(const evalgraph::Record &in, std::string answer_text, int nesting_depth) const {
    return {std::move(answer_text), in.docs(docs, "doc_", nesting_depth), in.docs(tool_outputs, "tool_", nesting_depth),
            in.text(user_text)};
  }

  evalgraph::Port answer, docs, tool_outputs, user_text;
};

}  // namespace ksodi
