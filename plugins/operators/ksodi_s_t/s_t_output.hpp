// The output of ksodi.s_t (part of the operator's contract; tested in tests/ksodi_full).
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "s_t.hpp"

namespace ksodi {

// One object per turn of `res`; turn_ids[i] is turn i's id as it came in, `provider` the embedding provider
// (null = host default).
nlohmann::json s_t_output(const std::vector<STTurn> &res, const std::vector<nlohmann::json> &turn_ids, const STParams &p,
                          const nlohmann::json &provider);

}  // namespace ksodi
