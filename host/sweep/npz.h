// NumPy's .npz files (np.savez, np.savez_compressed): a zip archive of .npy arrays, read whole from
// memory. Stored and deflated members, zip64 directories, the .npy format versions 1-3; float,
// integer, bool and unicode-string dtypes, little-endian, C or Fortran order (returned in C order).
// Every malformed input is an NpzError naming the source and, where it is known, the member: the
// reader never reads outside the bytes it is given, and never allocates more than a member's
// declared size after checking it against a limit (tests/fuzz/fuzz_npz.cc).
#pragma once

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace s2r {

class NpzError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// the most a member may hold, uncompressed (a policy network's arrays are far smaller)
constexpr uint64_t kNpzMaxMemberBytes = uint64_t(256) << 20;

// One array: float values (converted from the file's float, integer or bool type), or strings (a
// unicode array, ASCII only), in C order.
struct NpyArray {
  std::vector<int64_t> shape;
  std::vector<float> values;
  std::vector<std::string> strings;
  bool is_string = false;
  int64_t size() const { return is_string ? int64_t(strings.size()) : int64_t(values.size()); }
};

// "(3, 4)", "(5,)": a shape as NumPy prints it
std::string NpyShapeText(const std::vector<int64_t>& shape);

// The arrays of an .npz file's bytes, by name (".npy" dropped). `source` names the file in errors.
std::map<std::string, NpyArray> ReadNpz(const std::string& bytes, const std::string& source);

}  // namespace s2r
