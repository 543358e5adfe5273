// Known-answer tests for the two hashes the store computes itself: CRC-32C (the crc32c codec and
// shard indexes) and SHA-256 (`s2r inspect` content fingerprints).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "host/store/crc32c.h"
#include "host/store/sha256.h"

namespace s2r {
namespace {

TEST(StoreCrc32c, KnownAnswers) {
  const std::string check = "123456789";
  EXPECT_EQ(Crc32c(check.data(), check.size()), 0xE3069283u);
  EXPECT_EQ(Crc32c("", 0), 0u);
  // RFC 3720 (iSCSI) B.4: 32 zero bytes, 32 0xFF bytes, 0..31 ascending.
  std::vector<uint8_t> zeros(32, 0), ones(32, 0xFF), up(32);
  for (int i = 0; i < 32; ++i) up[i] = uint8_t(i);
  EXPECT_EQ(Crc32c(zeros.data(), 32), 0x8A9136AAu);
  EXPECT_EQ(Crc32c(ones.data(), 32), 0x62A8AB43u);
  EXPECT_EQ(Crc32c(up.data(), 32), 0x46DD794Eu);
}

TEST(StoreCrc32c, ExtendEqualsOneShotAtEverySplit) {
  std::vector<uint8_t> data(100);
  for (size_t i = 0; i < data.size(); ++i) data[i] = uint8_t(i * 31 + 7);
  uint32_t whole = Crc32c(data.data(), data.size());
  for (size_t split = 0; split <= data.size(); ++split) {
    EXPECT_EQ(Crc32cExtend(Crc32c(data.data(), split), data.data() + split, data.size() - split), whole) << split;
  }
}

// The hardware path (SSE4.2, where present) and the software tables agree on every length and
// alignment.
TEST(StoreCrc32c, HardwareAndSoftwareAgree) {
  std::vector<uint8_t> data(1000);
  for (size_t i = 0; i < data.size(); ++i) data[i] = uint8_t(i * 131 + 7);
  for (size_t offset : {0u, 1u, 3u, 7u}) {
    for (size_t n : {0u, 1u, 7u, 8u, 9u, 63u, 64u, 500u, 993u}) {
      EXPECT_EQ(Crc32cExtend(0x12345678u, data.data() + offset, n),
                Crc32cExtendSoftware(0x12345678u, data.data() + offset, n))
          << offset << " " << n;
    }
  }
}

TEST(StoreSha256, KnownAnswers) {
  EXPECT_EQ(Sha256Hex("", 0), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Sha256Hex("abc", 3), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  const std::string two_blocks = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  EXPECT_EQ(Sha256Hex(two_blocks.data(), two_blocks.size()),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  Sha256 million;
  const std::string a(1000, 'a');
  for (int i = 0; i < 1000; ++i) million.Update(a.data(), a.size());
  EXPECT_EQ(million.HexFinal(), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(StoreSha256, PieceSizesDoNotMatter) {
  std::vector<uint8_t> data(1000);
  for (size_t i = 0; i < data.size(); ++i) data[i] = uint8_t(i ^ (i >> 3));
  const std::string whole = Sha256Hex(data.data(), data.size());
  for (size_t piece : {1, 3, 55, 56, 63, 64, 65, 127, 999}) {
    Sha256 h;
    for (size_t at = 0; at < data.size(); at += piece) h.Update(data.data() + at, std::min(piece, data.size() - at));
    EXPECT_EQ(h.HexFinal(), whole) << piece;
  }
}

}  // namespace
}  // namespace s2r
