// The output of ksodi.k_t (part of the operator's contract; tested in tests/ksodi_full).
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "k_t.hpp"

namespace ksodi {

// One object per turn of `res` (computed from `turns`); turn_ids[i] and scope_ids[i] are turn i's turn and
// context_scope_id as they came in, `provider` the embedding provider (null = host default).
nlohmann::json k_t_output(const std::vector<KTTurn> &res, const std::vector<KTInput> &turns,
                          const std::vector<nlohmann::json> &turn_ids, const std::vector<nlohmann::json> &scope_ids,
                          const KTParams &p, const nlohmann::json &provider);

}  // namespace ksodi
