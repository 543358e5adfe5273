// Data type names, sizes and the JSON fill-value rules of the Zarr v3 core spec.
#include "host/store/dtype.h"

#include <cmath>
#include <cstdio>
#include <limits>

#include "host/store/store_error.h"

namespace s2r {
namespace {

struct TypeInfo {
  DataType type;
  const char* name;
  size_t size;
};

constexpr TypeInfo kTypes[] = {
    {DataType::kBool, "bool", 1},       {DataType::kInt8, "int8", 1},       {DataType::kInt16, "int16", 2},
    {DataType::kInt32, "int32", 4},     {DataType::kInt64, "int64", 8},     {DataType::kUint8, "uint8", 1},
    {DataType::kUint16, "uint16", 2},   {DataType::kUint32, "uint32", 4},   {DataType::kUint64, "uint64", 8},
    {DataType::kFloat32, "float32", 4}, {DataType::kFloat64, "float64", 8},
};

const TypeInfo& Info(DataType type) { return kTypes[static_cast<int>(type)]; }

// The bit patterns of the spec's "NaN": sign 0, mantissa MSB 1, other mantissa bits 0.
constexpr uint32_t kNan32 = 0x7fc00000u;
constexpr uint64_t kNan64 = 0x7ff8000000000000ull;

// Stores the low `size` bytes of `bits` in native (little-endian) order.
FillValue FromBits(uint64_t bits, size_t size) {
  FillValue out(size);
  if (size == 4) {
    uint32_t b = static_cast<uint32_t>(bits);
    std::memcpy(out.data(), &b, 4);
  } else {
    std::memcpy(out.data(), &bits, 8);
  }
  return out;
}

FillValue ParseFloatFill(const nlohmann::json& value, DataType type, const std::string& where) {
  size_t size = DataTypeSize(type);
  double d;
  if (value.is_number()) {
    d = value.get<double>();
  } else if (value.is_string()) {
    const std::string s = value.get<std::string>();
    if (s == "NaN") return FromBits(size == 4 ? kNan32 : kNan64, size);
    if (s == "Infinity" || s == "-Infinity") {
      d = (s[0] == '-' ? -1.0 : 1.0) * std::numeric_limits<double>::infinity();
    } else if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
      // The IEEE bit pattern written as one unsigned hexadecimal integer.
      if (s.size() - 2 > 2 * size) {
        throw StoreError(where, "fill_value \"" + s + "\" has more hex digits than a " + DataTypeName(type) + " holds");
      }
      uint64_t bits = 0;
      for (size_t i = 2; i < s.size(); ++i) {
        char c = s[i];
        int digit = (c >= '0' && c <= '9')   ? c - '0'
                    : (c >= 'a' && c <= 'f') ? c - 'a' + 10
                    : (c >= 'A' && c <= 'F') ? c - 'A' + 10
                                             : -1;
        if (digit < 0) throw StoreError(where, "fill_value \"" + s + "\" is not a hex number");
        bits = bits << 4 | uint64_t(digit);
      }
      return FromBits(bits, size);
    } else {
      throw StoreError(where,
                       "fill_value \"" + s + "\" is not a number, \"NaN\", \"Infinity\", \"-Infinity\" or \"0x...\"");
    }
  } else {
    throw StoreError(where, std::string("fill_value for ") + DataTypeName(type) +
                                " must be a number or a string, not " + value.dump());
  }
  if (type == DataType::kFloat32) return FillValueOf(static_cast<float>(d));
  return FillValueOf(d);
}

template <typename T>
FillValue ParseIntFill(const nlohmann::json& value, DataType type, const std::string& where) {
  // JSON integers only (no fraction, no exponent), inside the type's range.
  bool in_range = false;
  T out{};
  if (value.is_number_unsigned()) {
    uint64_t u = value.get<uint64_t>();
    in_range = u <= static_cast<uint64_t>(std::numeric_limits<T>::max());
    out = static_cast<T>(u);
  } else if (value.is_number_integer()) {
    int64_t i = value.get<int64_t>();
    if constexpr (std::is_signed_v<T>) {
      in_range = i >= std::numeric_limits<T>::min() && i <= std::numeric_limits<T>::max();
    } else {
      in_range = i >= 0 && static_cast<uint64_t>(i) <= std::numeric_limits<T>::max();
    }
    out = static_cast<T>(i);
  } else {
    throw StoreError(where,
                     std::string("fill_value for ") + DataTypeName(type) + " must be an integer, not " + value.dump());
  }
  if (!in_range) {
    throw StoreError(where, "fill_value " + value.dump() + " is out of range for " + DataTypeName(type));
  }
  return FillValueOf(out);
}

std::string Hex(uint64_t bits, int digits) {
  char buf[24];
  std::snprintf(buf, sizeof(buf), "0x%0*llx", digits, static_cast<unsigned long long>(bits));
  return buf;
}

}  // namespace

const char* DataTypeName(DataType type) { return Info(type).name; }

bool ParseDataType(const std::string& name, DataType* type) {
  for (const TypeInfo& info : kTypes) {
    if (name == info.name) {
      *type = info.type;
      return true;
    }
  }
  return false;
}

size_t DataTypeSize(DataType type) { return Info(type).size; }

bool IsFloatType(DataType type) { return type == DataType::kFloat32 || type == DataType::kFloat64; }

FillValue ParseFillValue(const nlohmann::json& value, DataType type, const std::string& path) {
  const std::string where = path;
  switch (type) {
    case DataType::kBool:
      if (!value.is_boolean()) {
        throw StoreError(where, "fill_value for bool must be true or false, not " + value.dump());
      }
      return FillValueOf(value.get<bool>());
    case DataType::kInt8:
      return ParseIntFill<int8_t>(value, type, where);
    case DataType::kInt16:
      return ParseIntFill<int16_t>(value, type, where);
    case DataType::kInt32:
      return ParseIntFill<int32_t>(value, type, where);
    case DataType::kInt64:
      return ParseIntFill<int64_t>(value, type, where);
    case DataType::kUint8:
      return ParseIntFill<uint8_t>(value, type, where);
    case DataType::kUint16:
      return ParseIntFill<uint16_t>(value, type, where);
    case DataType::kUint32:
      return ParseIntFill<uint32_t>(value, type, where);
    case DataType::kUint64:
      return ParseIntFill<uint64_t>(value, type, where);
    case DataType::kFloat32:
    case DataType::kFloat64:
      return ParseFloatFill(value, type, where);
  }
  throw StoreError(where, "unknown data type");
}

nlohmann::json FillValueToJson(const FillValue& fill, DataType type) {
  auto get = [&](auto zero) {
    decltype(zero) v;
    std::memcpy(&v, fill.data(), sizeof(v));
    return v;
  };
  switch (type) {
    case DataType::kBool:
      return fill[0] != 0;
    case DataType::kInt8:
      return get(int8_t{});
    case DataType::kInt16:
      return get(int16_t{});
    case DataType::kInt32:
      return get(int32_t{});
    case DataType::kInt64:
      return get(int64_t{});
    case DataType::kUint8:
      return get(uint8_t{});
    case DataType::kUint16:
      return get(uint16_t{});
    case DataType::kUint32:
      return get(uint32_t{});
    case DataType::kUint64:
      return get(uint64_t{});
    case DataType::kFloat32: {
      float f = get(float{});
      uint32_t bits = get(uint32_t{});
      if (std::isnan(f)) return bits == kNan32 ? nlohmann::json("NaN") : nlohmann::json(Hex(bits, 8));
      if (std::isinf(f)) return f > 0 ? "Infinity" : "-Infinity";
      return static_cast<double>(f);
    }
    case DataType::kFloat64: {
      double d = get(double{});
      uint64_t bits = get(uint64_t{});
      if (std::isnan(d)) return bits == kNan64 ? nlohmann::json("NaN") : nlohmann::json(Hex(bits, 16));
      if (std::isinf(d)) return d > 0 ? "Infinity" : "-Infinity";
      return d;
    }
  }
  return nullptr;
}

}  // namespace s2r
