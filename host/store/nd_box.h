// Small N-dimensional helpers shared by the chunk codecs and the array API: element counts,
// C-order index stepping, and copying a box between two C-order buffers of different shapes
// (chunk <-> array region, inner chunk <-> shard).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "host/store/dtype.h"

namespace s2r {

// Product of the entries (1 for rank 0).
int64_t Product(const std::vector<int64_t>& v);

// Advances `idx` to the next index inside `extent` in C order; false after the last one.
bool NextIndex(std::vector<int64_t>* idx, const std::vector<int64_t>& extent);

// Copies the box of size `count` at `src_start` in `src` (C order, `src_shape`) to `dst_start` in
// `dst` (C order, `dst_shape`); `elem` bytes per element. Rank 0 copies one element.
void CopyBox(const uint8_t* src, const std::vector<int64_t>& src_shape, const std::vector<int64_t>& src_start,
             uint8_t* dst, const std::vector<int64_t>& dst_shape, const std::vector<int64_t>& dst_start,
             const std::vector<int64_t>& count, size_t elem);

// Writes `fill` into `count` consecutive elements.
void FillElements(uint8_t* dst, int64_t count, const FillValue& fill);

// Whether all `count` elements equal `fill` bit for bit.
bool AllEqualFill(const uint8_t* data, int64_t count, const FillValue& fill);

}  // namespace s2r
