// Box copies walk every dimension but the last with an odometer and memcpy the contiguous rows.
#include "host/store/nd_box.h"

#include <algorithm>
#include <cstring>

namespace s2r {

int64_t Product(const std::vector<int64_t>& v) {
  int64_t n = 1;
  for (int64_t x : v) n *= x;
  return n;
}

bool NextIndex(std::vector<int64_t>* idx, const std::vector<int64_t>& extent) {
  for (size_t d = idx->size(); d-- > 0;) {
    if (++(*idx)[d] < extent[d]) return true;
    (*idx)[d] = 0;
  }
  return false;
}

void CopyBox(const uint8_t* src, const std::vector<int64_t>& src_shape, const std::vector<int64_t>& src_start,
             uint8_t* dst, const std::vector<int64_t>& dst_shape, const std::vector<int64_t>& dst_start,
             const std::vector<int64_t>& count, size_t elem) {
  const size_t rank = count.size();
  if (rank == 0) {
    std::memcpy(dst, src, elem);
    return;
  }
  if (Product(count) == 0) return;
  // Element strides of both buffers.
  std::vector<int64_t> src_stride(rank), dst_stride(rank);
  int64_t s = 1, t = 1;
  for (size_t d = rank; d-- > 0;) {
    src_stride[d] = s;
    dst_stride[d] = t;
    s *= src_shape[d];
    t *= dst_shape[d];
  }
  const size_t row_bytes = static_cast<size_t>(count[rank - 1]) * elem;
  std::vector<int64_t> outer(count.begin(), count.end() - 1);
  std::vector<int64_t> idx(rank - 1, 0);
  do {
    int64_t so = src_start[rank - 1], dof = dst_start[rank - 1];
    for (size_t d = 0; d + 1 < rank; ++d) {
      so += (src_start[d] + idx[d]) * src_stride[d];
      dof += (dst_start[d] + idx[d]) * dst_stride[d];
    }
    std::memcpy(dst + dof * elem, src + so * elem, row_bytes);
  } while (NextIndex(&idx, outer));
}

void FillElements(uint8_t* dst, int64_t count, const FillValue& fill) {
  const size_t elem = fill.size();
  if (count <= 0) return;
  // Byte-uniform fill values (zero, 0xFF...) are one memset; others double the filled prefix.
  bool uniform = true;
  for (uint8_t b : fill) uniform = uniform && b == fill[0];
  const size_t total = static_cast<size_t>(count) * elem;
  if (uniform) {
    std::memset(dst, fill[0], total);
    return;
  }
  std::memcpy(dst, fill.data(), elem);
  size_t done = elem;
  while (done < total) {
    size_t n = std::min(done, total - done);
    std::memcpy(dst + done, dst, n);
    done += n;
  }
}

bool AllEqualFill(const uint8_t* data, int64_t count, const FillValue& fill) {
  const size_t elem = fill.size();
  for (int64_t i = 0; i < count; ++i) {
    if (std::memcmp(data + i * elem, fill.data(), elem) != 0) return false;
  }
  return true;
}

}  // namespace s2r
