// The state's layouts (kernels/state_view.h): the host's world-major arrays and the CUDA
// backend's interleaved ones.
#include "kernels/state_view.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace s2r {
namespace {

// TransposeWorldWords puts word k of world w at k * nworld + w and back, for sizes that are not
// multiples of its 16 x 16 tiles (edges) and for one world or one word.
TEST(StateLayout, TransposeWorldWordsInterleavesAndBackExactly) {
  struct Size {
    int64_t nworld, words;
  };
  for (const Size& z : {Size{37, 19}, Size{16, 16}, Size{1, 5}, Size{40, 1}, Size{3, 33}}) {
    SCOPED_TRACE(::testing::Message() << z.nworld << " worlds x " << z.words << " words");
    const size_t n = static_cast<size_t>(z.nworld * z.words);
    std::vector<uint32_t> host(n), device(n, 0xFFFFFFFFu), back(n, 0xFFFFFFFFu);
    for (size_t i = 0; i < n; ++i) host[i] = static_cast<uint32_t>(1000003u * i + 7u);
    TransposeWorldWords(host.data(), device.data(), z.nworld, z.words, /*to_interleaved=*/true);
    for (int64_t w = 0; w < z.nworld; ++w) {
      for (int64_t k = 0; k < z.words; ++k) {
        ASSERT_EQ(device[k * z.nworld + w], host[w * z.words + k]) << "world " << w << " word " << k;
      }
    }
    TransposeWorldWords(device.data(), back.data(), z.nworld, z.words, /*to_interleaved=*/false);
    EXPECT_EQ(back, host);
  }
}

}  // namespace
}  // namespace s2r
