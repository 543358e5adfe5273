// CRC-32C (Castagnoli), the checksum of the Zarr v3 `crc32c` codec and of shard indexes: the
// SSE4.2 instruction on x86-64 CPUs that have it, a table-driven software version elsewhere.
#pragma once

#include <cstddef>
#include <cstdint>

namespace s2r {

// CRC-32C of `n` bytes (reflected polynomial 0x82F63B78, initial value and final xor 0xFFFFFFFF).
// Crc32c("123456789") == 0xE3069283.
uint32_t Crc32c(const void* data, size_t n);

// Continues a CRC over more bytes: Crc32cExtend(Crc32c(a), b) == Crc32c(a + b).
uint32_t Crc32cExtend(uint32_t crc, const void* data, size_t n);
// The portable implementation, always software (tests compare it with the hardware path).
uint32_t Crc32cExtendSoftware(uint32_t crc, const void* data, size_t n);

}  // namespace s2r
