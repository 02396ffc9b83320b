// Turn cues of the KSODI-Full operators: transparent keyword lists (German and English) that classify a user
// turn as a follow-up/complaint, an explicit correction, a back-reference or an announced topic change, and an
// answer as acknowledging a correction. Shared by ksodi.s_t, ksodi.k_t and ksodi.o_t (plugins/shared/ksodi_measures).
// Any change of a list must bump kFullCueVersion.
#pragma once

#include <string>
#include <string_view>

#include "ksodi/detect.hpp"

namespace ksodi::full {

inline constexpr const char *kFullCueVersion = "ksodi-full-cues-1.0";

const detect::KeywordSet &cues_followup();       // complaint / request to redo or reformat (S repair trigger)
const detect::KeywordSet &cues_correction();     // user contradicts a claim (O correction trigger)
const detect::KeywordSet &cues_backref();        // refers back to earlier turns (K shift exemption)
const detect::KeywordSet &cues_topic_change();   // announces a new topic (K shift evidence)
const detect::KeywordSet &cues_acknowledge();    // answer acknowledges a correction (O correction response)

// The pattern of the first match in `text` (lowercased inside), or "" when none.
std::string find_cue(const detect::KeywordSet &set, std::string_view text);

// Number of word tokens of a text.
std::size_t word_count(std::string_view text);

}  // namespace ksodi::full
