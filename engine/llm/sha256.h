// A small, dependency-free SHA-256 (FIPS 180-4) used for LLM cache keys.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace evalgraph::llm {

class Sha256 {
 public:
  Sha256();
  void update(const void* data, std::size_t len);
  void update(std::string_view s) { update(s.data(), s.size()); }
  std::array<std::uint8_t, 32> digest();  // finalises; the object must not be updated afterwards
  std::string hex_digest();

 private:
  void block(const std::uint8_t* p);
  std::array<std::uint32_t, 8> h_;
  std::array<std::uint8_t, 64> buf_{};
  std::size_t buf_len_ = 0;
  std::uint64_t total_len_ = 0;
};

// Lower-case hex SHA-256 of a byte string.
std::string sha256_hex(std::string_view data);

}  // namespace evalgraph::llm
