// The output of ksodi.o0 (part of the operator's contract; tested in tests/ksodi).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "ksodi_measures/o0.hpp"

namespace ksodi {

// What the output states besides the result: the calibration's id, the pipeline's embedding provider (null =
// host default) and the bytes of each sentence's text kept in the audit list (0 = offsets only).
struct O0OutputOptions {
  std::string calibration;
  std::optional<std::string> provider;
  std::size_t text_max = 200;
};

// One unit's output text for the answer `answer`, members in sorted order (as the SDK would dump the same values).
std::string o0_output(const O0Result &r, const O0Params &p, const O0OutputOptions &o, std::string_view answer);

}  // namespace ksodi
