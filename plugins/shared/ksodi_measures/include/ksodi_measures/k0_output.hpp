// The output of ksodi.k0 (part of the operator's contract; tested in tests/ksodi).
#pragma once

#include <cstddef>
#include <functional>
#include <string>

#include "evalgraph/json_writer.hpp"
#include "ksodi_measures/k0.hpp"

namespace ksodi {

// The members passed through from the input, in sorted (output) order.
inline constexpr const char *kK0Meta[] = {"chunk_range", "context_scope_id", "system_prompt_id", "tool_profile_id"};

// One unit's output text, members in sorted order (as the SDK would dump the same values); `n_docs` is the
// unit's non-empty retrieved docs, meta(i, w) writes the value of the pass-through member kK0Meta[i].
using K0Meta = std::function<void(std::size_t, evalgraph::JsonWriter &)>;
std::string k0_output(const K0Result &r, const K0Params &p, std::size_t n_docs, const K0Meta &meta);

}  // namespace ksodi
