// The KSODI code names the SDK's text library (evalgraph/text.hpp, target evalgraph::text) ksodi::text.
#pragma once

#include "evalgraph/text.hpp"

namespace ksodi {
namespace text = ::evalgraph::text;
}  // namespace ksodi
