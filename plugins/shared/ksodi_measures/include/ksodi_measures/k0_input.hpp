// ksodi.k0's input from a record: the ports ksodi.k0 reads, and ksodi.k_t reads in each turn, resolved once.
#pragma once

#include <string>

#include "evalgraph/input.hpp"
#include "ksodi_measures/k0.hpp"
#include "ksodi/text.hpp"

namespace ksodi {

struct K0Ports {
  explicit K0Ports(const evalgraph::NodeSpec &spec)
      : system_prompt(spec.port("system_prompt")), tool_profile(spec.port("tool_profile")),
        user_text(spec.port("user_text")), docs(spec.port("retrieved_docs")) {}
  // The record's input: its texts and how many of its documents are not blank (documents in a text port nest at
  // most `nesting_depth` deep). With `docs_text`, every document's text is also appended to it, each ending in "\n".
  K0Input read(const evalgraph::Record &in, int nesting_depth, std::string *docs_text = nullptr) const {
    K0Input x{in.text(system_prompt), in.text(tool_profile), in.text(user_text)};
    for (const auto &d : in.docs(docs, "doc_", nesting_depth)) {
      x.n_docs += text::trim(d.text).empty() ? 0 : 1;
      if (docs_text != nullptr) *docs_text += d.text + "\n";
    }
    return x;
  }

  evalgraph::Port system_prompt, tool_profile, user_text, docs;
};

}  // namespace ksodi
