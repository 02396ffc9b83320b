#pragma once

namespace evalgraph {
// The engine's version, e.g. "0.1.0".
const char *version_string();
}  // namespace evalgraph
