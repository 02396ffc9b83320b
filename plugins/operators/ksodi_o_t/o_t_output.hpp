// The output of ksodi.o_t (part of the operator's contract; tested in tests/ksodi_full).
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <vector>

#include "o_t.hpp"

namespace ksodi {

// One object per turn of `res` (computed from `turns`); turn_ids[i] is turn i's id as it came in, `provider` the
// embedding provider (null = host default), text_max the bytes of each sentence's text kept in the embedded O0
// audit (0 = offsets only).
nlohmann::json o_t_output(const std::vector<OTTurn> &res, const std::vector<OTInput> &turns,
                          const std::vector<nlohmann::json> &turn_ids, const OTParams &p, const nlohmann::json &provider,
                          std::size_t text_max);

}  // namespace ksodi
