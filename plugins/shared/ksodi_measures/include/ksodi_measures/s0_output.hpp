// The output of ksodi.s0 (part of the operator's contract; tested in tests/ksodi).
#pragma once

#include <optional>
#include <string>

#include "ksodi_measures/s0.hpp"

namespace ksodi {

// One unit's output text: the result and the parameters it was computed with, members in sorted order (as the
// SDK would dump the same values). `provider` is the pipeline's embedding provider (null = host default).
std::string s0_output(const S0Result &r, const S0Params &p, const std::optional<std::string> &provider);

}  // namespace ksodi
