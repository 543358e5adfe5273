// Zarr v3 core data types and their fill values. In memory an element is kept in the host's
// native representation (little-endian on every machine s2r supports); the `bytes` codec decides
// the byte order on disk.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <type_traits>
#include <vector>

namespace s2r {

enum class DataType {
  kBool,
  kInt8,
  kInt16,
  kInt32,
  kInt64,
  kUint8,
  kUint16,
  kUint32,
  kUint64,
  kFloat32,
  kFloat64,
};

// The Zarr name ("float32", ...).
const char* DataTypeName(DataType type);
// Parses a Zarr name; false for anything outside the supported set.
bool ParseDataType(const std::string& name, DataType* type);
// Bytes per element.
size_t DataTypeSize(DataType type);
bool IsFloatType(DataType type);

// The DataType of a C++ element type, for typed reads and writes.
template <typename T>
constexpr DataType DataTypeOf() {
  if constexpr (std::is_same_v<T, bool>)
    return DataType::kBool;
  else if constexpr (std::is_same_v<T, int8_t>)
    return DataType::kInt8;
  else if constexpr (std::is_same_v<T, int16_t>)
    return DataType::kInt16;
  else if constexpr (std::is_same_v<T, int32_t>)
    return DataType::kInt32;
  else if constexpr (std::is_same_v<T, int64_t>)
    return DataType::kInt64;
  else if constexpr (std::is_same_v<T, uint8_t>)
    return DataType::kUint8;
  else if constexpr (std::is_same_v<T, uint16_t>)
    return DataType::kUint16;
  else if constexpr (std::is_same_v<T, uint32_t>)
    return DataType::kUint32;
  else if constexpr (std::is_same_v<T, uint64_t>)
    return DataType::kUint64;
  else if constexpr (std::is_same_v<T, float>)
    return DataType::kFloat32;
  else if constexpr (std::is_same_v<T, double>)
    return DataType::kFloat64;
  else
    static_assert(!sizeof(T*), "no Zarr data type for this C++ type");
}

// A fill value: exactly DataTypeSize(type) bytes in native representation.
using FillValue = std::vector<uint8_t>;

// Parses the JSON `fill_value` for `type` per the v3 core spec: booleans for bool, integers in
// range for integer types, and for floats a number, "NaN", "Infinity", "-Infinity" or "0x..." (the
// IEEE bit pattern as an unsigned integer, sign bit first). Throws StoreError naming `path`.
FillValue ParseFillValue(const nlohmann::json& value, DataType type, const std::string& path);

// The JSON form written for a fill value: the canonical NaN as "NaN", other NaNs in hex,
// infinities by name, finite floats as numbers that round-trip exactly.
nlohmann::json FillValueToJson(const FillValue& fill, DataType type);

// A fill value from a C++ value of the array's type (e.g. FillValueOf<float>(NAN)).
template <typename T>
FillValue FillValueOf(T value) {
  FillValue out(sizeof(T));
  if constexpr (std::is_same_v<T, bool>) {
    out[0] = value ? 1 : 0;
  } else {
    std::memcpy(out.data(), &value, sizeof(T));
  }
  return out;
}

}  // namespace s2r
