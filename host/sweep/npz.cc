#include "host/sweep/npz.h"

#include <zlib.h>

#include <cstring>
#include <limits>

namespace s2r {

namespace {

// Little-endian reads; the caller has checked the range (Fits).
uint16_t U16(const std::string& b, uint64_t at) {
  return static_cast<uint16_t>(uint8_t(b[size_t(at)]) | uint8_t(b[size_t(at) + 1]) << 8);
}
uint32_t U32(const std::string& b, uint64_t at) { return uint32_t(U16(b, at)) | uint32_t(U16(b, at + 2)) << 16; }
uint64_t U64(const std::string& b, uint64_t at) { return uint64_t(U32(b, at)) | uint64_t(U32(b, at + 4)) << 32; }

// [at, at + n) lies within `size` bytes (no overflow)
bool Fits(uint64_t size, uint64_t at, uint64_t n) { return at <= size && n <= size - at; }

// the value of 'key' in a .npy header's dict literal, as written (a quoted string, True/False, a tuple)
std::string HeaderValue(const std::string& header, const std::string& key, const std::string& where) {
  const size_t k = header.find("'" + key + "'");
  if (k == std::string::npos) throw NpzError(where + ": the .npy header has no '" + key + "'");
  size_t p = header.find(':', k);
  if (p == std::string::npos) throw NpzError(where + ": bad .npy header");
  ++p;
  while (p < header.size() && header[p] == ' ') ++p;
  if (p >= header.size()) throw NpzError(where + ": bad .npy header");
  size_t end;
  if (header[p] == '\'' || header[p] == '"') {
    end = header.find(header[p], p + 1);
    if (end == std::string::npos) throw NpzError(where + ": bad .npy header");
    return header.substr(p + 1, end - p - 1);
  }
  if (header[p] == '(') {
    end = header.find(')', p);
    if (end == std::string::npos) throw NpzError(where + ": bad .npy header");
    return header.substr(p, end - p + 1);
  }
  end = header.find_first_of(",}", p);
  if (end == std::string::npos) throw NpzError(where + ": bad .npy header");
  return header.substr(p, end - p);
}

// "(3, 4)", "(5,)", "()" -> dims
std::vector<int64_t> ParseShape(const std::string& text, const std::string& where) {
  if (text.size() < 2 || text.front() != '(' || text.back() != ')') {
    throw NpzError(where + ": bad .npy shape '" + text + "'");
  }
  std::vector<int64_t> shape;
  size_t p = 1;
  const size_t end = text.size() - 1;
  while (p < end) {
    while (p < end && (text[p] == ' ' || text[p] == ',')) ++p;
    if (p >= end) break;
    int64_t v = 0;
    size_t digits = 0;
    while (p < end && text[p] >= '0' && text[p] <= '9') {
      if (v > (std::numeric_limits<int64_t>::max() - 9) / 10) throw NpzError(where + ": bad .npy shape '" + text + "'");
      v = v * 10 + (text[p] - '0');
      ++p;
      ++digits;
    }
    if (p < end && text[p] == 'L') ++p;  // Python 2's long
    if (digits == 0 || (p < end && text[p] != ',' && text[p] != ' ')) {
      throw NpzError(where + ": bad .npy shape '" + text + "'");
    }
    shape.push_back(v);
  }
  return shape;
}

NpyArray ParseNpy(const std::string& b, const std::string& where) {
  if (b.size() < 10 || b.compare(0, 6, "\x93NUMPY") != 0) throw NpzError(where + ": not a .npy array");
  const int major = uint8_t(b[6]);
  uint64_t header_len, start;
  if (major == 1) {
    header_len = U16(b, 8);
    start = 10;
  } else if (major == 2 || major == 3) {
    if (b.size() < 12) throw NpzError(where + ": truncated .npy array");
    header_len = U32(b, 8);
    start = 12;
  } else {
    throw NpzError(where + ": .npy format version " + std::to_string(major) + " is not supported");
  }
  if (!Fits(b.size(), start, header_len)) throw NpzError(where + ": truncated .npy header");
  const std::string header = b.substr(size_t(start), size_t(header_len));
  const std::string descr = HeaderValue(header, "descr", where);
  const std::string fortran = HeaderValue(header, "fortran_order", where);
  NpyArray a;
  a.shape = ParseShape(HeaderValue(header, "shape", where), where);
  if (descr.size() < 3 || (descr[0] != '<' && descr[0] != '|' && descr[0] != '=')) {
    throw NpzError(where + ": dtype '" + descr + "' is not supported (little-endian floats, integers or strings)");
  }
  const char kind = descr[1];
  uint64_t width = 0;
  for (size_t i = 2; i < descr.size(); ++i) {
    if (descr[i] < '0' || descr[i] > '9' || width > 1000000) throw NpzError(where + ": dtype '" + descr + "' is not supported");
    width = width * 10 + uint64_t(descr[i] - '0');
  }
  if (width == 0) throw NpzError(where + ": dtype '" + descr + "' is not supported");
  // the element count and bytes, checked against what the member holds before anything is allocated
  const uint64_t item = kind == 'U' ? width * 4 : width;
  const uint64_t have = b.size() - start - header_len;
  uint64_t n = 1;
  for (int64_t d : a.shape) {
    if (d != 0 && n > have / uint64_t(d)) {
      n = std::numeric_limits<uint64_t>::max();
      break;
    }
    n *= uint64_t(d);
  }
  if (n != 0 && (n == std::numeric_limits<uint64_t>::max() || n > have / item)) {
    throw NpzError(where + ": holds " + std::to_string(have) + " bytes of data, fewer than shape " +
                   NpyShapeText(a.shape) + " of '" + descr + "' needs");
  }
  const char* data = b.data() + start + header_len;
  // C order index of element i when the file is in Fortran order
  const bool f_order = fortran.find("True") != std::string::npos;
  std::vector<int64_t> idx(a.shape.size());
  auto source_index = [&](uint64_t i) -> uint64_t {
    if (!f_order || a.shape.size() < 2) return i;
    uint64_t src = 0, stride = 1;
    for (size_t d = a.shape.size(); d-- > 0;) {
      idx[d] = int64_t(i % uint64_t(a.shape[d]));
      i /= uint64_t(a.shape[d]);
    }
    for (size_t d = 0; d < a.shape.size(); ++d) {
      src += uint64_t(idx[d]) * stride;
      stride *= uint64_t(a.shape[d]);
    }
    return src;
  };
  if (kind == 'U') {
    a.is_string = true;
    for (uint64_t i = 0; i < n; ++i) {
      const char* at = data + source_index(i) * item;
      std::string s;
      for (uint64_t c = 0; c < width; ++c) {
        uint32_t cp;
        std::memcpy(&cp, at + 4 * c, 4);
        if (cp == 0) break;
        if (cp > 127) throw NpzError(where + ": a string with a character that is not ASCII");
        s.push_back(static_cast<char>(cp));
      }
      a.strings.push_back(s);
    }
    return a;
  }
  const bool known = (kind == 'f' && (width == 4 || width == 8)) ||
                     ((kind == 'i' || kind == 'u') && (width == 1 || width == 2 || width == 4 || width == 8)) ||
                     (kind == 'b' && width == 1);
  if (!known) throw NpzError(where + ": dtype '" + descr + "' is not supported (float32/64, integers, bool, strings)");
  a.values.resize(size_t(n));
  for (uint64_t i = 0; i < n; ++i) {
    const char* at = data + source_index(i) * item;
    double v;
    if (kind == 'f' && width == 4) {
      float f;
      std::memcpy(&f, at, 4);
      v = f;
    } else if (kind == 'f') {
      std::memcpy(&v, at, 8);
    } else if (kind == 'b') {
      v = at[0] ? 1.0 : 0.0;
    } else {
      uint64_t u = 0;
      std::memcpy(&u, at, size_t(width));
      if (kind == 'i' && width < 8 && (u >> (8 * width - 1)) & 1) u |= ~uint64_t(0) << (8 * width);
      v = kind == 'i' ? double(static_cast<int64_t>(u)) : double(u);
    }
    a.values[size_t(i)] = static_cast<float>(v);
  }
  return a;
}

std::string Inflate(const char* data, uint64_t n, uint64_t out_size, const std::string& where) {
  std::string out(size_t(out_size), '\0');
  z_stream z{};
  if (inflateInit2(&z, -MAX_WBITS) != Z_OK) throw NpzError(where + ": zlib failed to start");
  // in pieces of at most 1 GiB (zlib counts in 32 bits)
  uint64_t in_left = n, out_done = 0;
  int rc = Z_OK;
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data));
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  while (rc == Z_OK) {
    const uInt in_chunk = static_cast<uInt>(std::min<uint64_t>(in_left, uint64_t(1) << 30));
    const uInt out_chunk = static_cast<uInt>(std::min<uint64_t>(out_size - out_done, uint64_t(1) << 30));
    z.avail_in = in_chunk;
    z.avail_out = out_chunk;
    rc = inflate(&z, Z_NO_FLUSH);
    in_left -= in_chunk - z.avail_in;
    out_done += out_chunk - z.avail_out;
    if (rc == Z_OK && z.avail_in == in_chunk && z.avail_out == out_chunk) break;  // no progress
    if (rc == Z_BUF_ERROR) break;
  }
  inflateEnd(&z);
  if (rc != Z_STREAM_END || out_done != out_size) throw NpzError(where + ": its deflated data is corrupt");
  return out;
}

}  // namespace

std::string NpyShapeText(const std::vector<int64_t>& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

std::map<std::string, NpyArray> ReadNpz(const std::string& b, const std::string& source) {
  const uint64_t size = b.size();
  // the end of central directory record: in the last 22 + 65535 bytes
  if (size < 22) throw NpzError(source + ": not an .npz file (too short for a zip archive)");
  uint64_t eocd = size;
  const uint64_t lowest = size > 22 + 65535 ? size - 22 - 65535 : 0;
  for (uint64_t p = size - 22 + 1; p-- > lowest;) {
    if (U32(b, p) == 0x06054b50u) {
      eocd = p;
      break;
    }
  }
  if (eocd == size) throw NpzError(source + ": not an .npz file (no zip directory)");
  uint64_t entries = U16(b, eocd + 10), cd_size = U32(b, eocd + 12), cd_offset = U32(b, eocd + 16);
  if (eocd >= 20 && U32(b, eocd - 20) == 0x07064b50u) {  // zip64
    const uint64_t z = U64(b, eocd - 20 + 8);
    if (!Fits(size, z, 56) || U32(b, z) != 0x06064b50u) throw NpzError(source + ": bad zip64 directory");
    entries = U64(b, z + 32);
    cd_size = U64(b, z + 40);
    cd_offset = U64(b, z + 48);
  }
  if (!Fits(size, cd_offset, cd_size)) throw NpzError(source + ": truncated zip directory");
  std::map<std::string, NpyArray> out;
  uint64_t p = cd_offset;
  for (uint64_t e = 0; e < entries; ++e) {
    if (!Fits(size, p, 46) || U32(b, p) != 0x02014b50u) throw NpzError(source + ": bad zip directory entry");
    const int method = U16(b, p + 10);
    const uint32_t crc = U32(b, p + 16);
    uint64_t comp = U32(b, p + 20), full = U32(b, p + 24);
    const uint64_t name_len = U16(b, p + 28), extra_len = U16(b, p + 30), comment_len = U16(b, p + 32);
    uint64_t local = U32(b, p + 42);
    if (!Fits(size, p + 46, name_len + extra_len + comment_len)) throw NpzError(source + ": bad zip directory entry");
    std::string name = b.substr(size_t(p + 46), size_t(name_len));
    const std::string where = source + ": " + name;
    // zip64 sizes and offset, in the extra field's block 1, in this order where they are 0xffffffff
    const uint64_t extra_end = p + 46 + name_len + extra_len;
    for (uint64_t x = p + 46 + name_len; x + 4 <= extra_end;) {
      const uint64_t id = U16(b, x), len = U16(b, x + 2);
      if (x + 4 + len > extra_end) break;
      if (id == 1) {
        uint64_t q = x + 4;
        const uint64_t block_end = x + 4 + len;
        auto next = [&](uint64_t* v) {
          if (*v != 0xffffffffu) return;
          if (q + 8 > block_end) throw NpzError(where + ": bad zip64 extra field");
          *v = U64(b, q);
          q += 8;
        };
        next(&full);
        next(&comp);
        next(&local);
      }
      x += 4 + len;
    }
    p = extra_end + comment_len;
    if (!Fits(size, local, 30) || U32(b, local) != 0x04034b50u) throw NpzError(where + ": bad zip entry");
    const uint64_t data = local + 30 + U16(b, local + 26) + U16(b, local + 28);
    if (!Fits(size, data, comp)) throw NpzError(where + ": truncated");
    if (full > kNpzMaxMemberBytes) {
      throw NpzError(where + ": " + std::to_string(full) + " bytes uncompressed; at most " +
                     std::to_string(kNpzMaxMemberBytes) + " per array");
    }
    std::string bytes;
    if (method == 0) {
      if (comp != full) throw NpzError(where + ": bad zip entry sizes");
      bytes = b.substr(size_t(data), size_t(comp));
    } else if (method == 8) {
      bytes = Inflate(b.data() + data, comp, full, where);
    } else {
      throw NpzError(where + ": zip compression method " + std::to_string(method) +
                     " is not supported (np.savez or np.savez_compressed write 0 or 8)");
    }
    uLong sum = crc32(0L, Z_NULL, 0);
    for (size_t done = 0; done < bytes.size();) {
      const size_t chunk = std::min<size_t>(bytes.size() - done, size_t(1) << 30);
      sum = crc32(sum, reinterpret_cast<const Bytef*>(bytes.data() + done), static_cast<uInt>(chunk));
      done += chunk;
    }
    if (sum != crc) throw NpzError(where + ": CRC mismatch (the file is corrupt)");
    if (name.size() > 4 && name.compare(name.size() - 4, 4, ".npy") == 0) name.resize(name.size() - 4);
    out[name] = ParseNpy(bytes, source + ": " + name);
  }
  return out;
}

}  // namespace s2r
