// SHA-256 (FIPS 180-4), used by `s2r inspect` to fingerprint decoded array contents so that two
// implementations (s2r, numpy) can be compared without moving the data. Written here to avoid a
// crypto-library dependency for one hash.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

namespace s2r {

class Sha256 {
 public:
  Sha256();
  // Feeds `n` more bytes.
  void Update(const void* data, size_t n);
  // Finishes and returns the 32-byte digest; the object must not be updated afterwards.
  std::array<uint8_t, 32> Final();
  // Finishes and returns the digest as 64 lowercase hex digits.
  std::string HexFinal();

 private:
  void Compress(const uint8_t* block);

  std::array<uint32_t, 8> state_;
  std::array<uint8_t, 64> buffer_;
  size_t buffered_ = 0;
  uint64_t total_bytes_ = 0;
};

// One-shot convenience: lowercase hex SHA-256 of `n` bytes.
std::string Sha256Hex(const void* data, size_t n);

}  // namespace s2r
