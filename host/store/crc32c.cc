// CRC-32C: the SSE4.2 crc32 instruction where the CPU has it (x86-64), otherwise slicing-by-8
// (eight 256-entry tables built once, eight bytes per step). Both give the same value.
#include "host/store/crc32c.h"

#include <array>
#include <cstring>

namespace s2r {
namespace {

constexpr uint32_t kPolynomial = 0x82F63B78u;  // Castagnoli, bit-reversed

struct Tables {
  std::array<std::array<uint32_t, 256>, 8> t;
  Tables() {
    // Table 0 is the classic byte-at-a-time table; table k advances a byte through k more zero
    // bytes, which lets one step consume eight input bytes.
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int bit = 0; bit < 8; ++bit) c = (c & 1u) ? (c >> 1) ^ kPolynomial : (c >> 1);
      t[0][i] = c;
    }
    for (int k = 1; k < 8; ++k) {
      for (uint32_t i = 0; i < 256; ++i) t[k][i] = (t[k - 1][i] >> 8) ^ t[0][t[k - 1][i] & 0xFFu];
    }
  }
};

const Tables& GetTables() {
  static const Tables tables;
  return tables;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define S2R_CRC32C_HW 1
__attribute__((target("sse4.2"))) uint32_t Crc32cHardware(uint32_t crc, const unsigned char* p, size_t n) {
  uint64_t c = ~crc;
  while (n >= 8) {
    uint64_t v;
    std::memcpy(&v, p, 8);  // x86 is little-endian, as the checksum's byte order assumes
    c = __builtin_ia32_crc32di(c, v);
    p += 8;
    n -= 8;
  }
  uint32_t c32 = uint32_t(c);
  while (n-- > 0) c32 = __builtin_ia32_crc32qi(c32, *p++);
  return ~c32;
}

bool HaveHardwareCrc() {
  static const bool have = __builtin_cpu_supports("sse4.2");
  return have;
}
#endif

}  // namespace

uint32_t Crc32cExtendSoftware(uint32_t crc, const void* data, size_t n) {
  const auto& t = GetTables().t;
  const auto* p = static_cast<const unsigned char*>(data);
  uint32_t c = ~crc;
  // Eight bytes at a time (the loads are assembled byte-wise, so this is endian-independent).
  while (n >= 8) {
    uint32_t lo = c ^ (uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24);
    c = t[7][lo & 0xFF] ^ t[6][(lo >> 8) & 0xFF] ^ t[5][(lo >> 16) & 0xFF] ^ t[4][lo >> 24] ^ t[3][p[4]] ^ t[2][p[5]] ^
        t[1][p[6]] ^ t[0][p[7]];
    p += 8;
    n -= 8;
  }
  while (n-- > 0) c = (c >> 8) ^ t[0][(c ^ *p++) & 0xFFu];
  return ~c;
}

uint32_t Crc32cExtend(uint32_t crc, const void* data, size_t n) {
#ifdef S2R_CRC32C_HW
  if (HaveHardwareCrc()) return Crc32cHardware(crc, static_cast<const unsigned char*>(data), n);
#endif
  return Crc32cExtendSoftware(crc, data, n);
}

uint32_t Crc32c(const void* data, size_t n) { return Crc32cExtend(0, data, n); }

}  // namespace s2r
