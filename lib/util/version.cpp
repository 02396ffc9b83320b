#include "util/version.h"

namespace evalgraph {
const char *version_string() { return EVALGRAPH_VERSION; }
}  // namespace evalgraph
