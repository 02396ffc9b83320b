// SHA-256 (FIPS 180-4) from OpenSSL's libcrypto, for LLM cache keys and shard fingerprints.
#pragma once

#include <string>
#include <string_view>

namespace evalgraph {

// Lower-case hex SHA-256 of a byte string. Throws std::runtime_error if libcrypto fails (out of memory).
std::string sha256_hex(std::string_view data);

}  // namespace evalgraph
