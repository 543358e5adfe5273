// The codec chain. Encoding runs the array->bytes codec then each bytes->bytes codec in order;
// decoding runs them in reverse. Sharding recurses into the same two functions for its inner
// chunks and its index.
#include "host/store/codecs.h"

#include <blosc.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>
#include <type_traits>

#include "host/store/crc32c.h"
#include "host/store/nd_box.h"
#include "host/store/store_error.h"

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "s2r's Zarr store assumes a little-endian host"
#endif

namespace s2r {
namespace {

using Bytes = std::vector<uint8_t>;

// Decoded data larger than this is treated as corrupt rather than allocated.

constexpr uint64_t kMissing = ~uint64_t(0);

std::string Hex32(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "0x%08x", v);
  return buf;
}

// --- bytes->bytes codecs ------------------------------------------------------------------------

// The encoders read `size` bytes at `in` and reserve `spare` more bytes of capacity in their
// output, so that a crc32c that follows appends in place.
Bytes BloscEncode(const CodecConfig& c, const uint8_t* in, size_t size, size_t spare, const std::string& path) {
  if (size > size_t(BLOSC_MAX_BUFFERSIZE)) {
    throw StoreError(path, "blosc: chunk of " + std::to_string(size) + " bytes exceeds c-blosc's 2 GB limit");
  }
  Bytes out;
  out.reserve(size + BLOSC_MAX_OVERHEAD + spare);
  out.resize(size + BLOSC_MAX_OVERHEAD);
  size_t typesize = c.typesize > 0 ? size_t(c.typesize) : 1;
  int n = blosc_compress_ctx(c.clevel, c.shuffle, typesize, size, in, out.data(), out.size(),
                             c.cname.c_str(), size_t(c.blocksize), 1);
  if (n <= 0) throw StoreError(path, "blosc compression failed (code " + std::to_string(n) + ")");
  out.resize(size_t(n));
  return out;
}

Bytes BloscDecode(const Bytes& in, size_t limit, const std::string& path) {
  size_t nbytes = 0, cbytes = 0, blocksize = 0;
  if (in.size() < BLOSC_MIN_HEADER_LENGTH || blosc_cbuffer_validate(in.data(), in.size(), &nbytes) != 0) {
    throw StoreError(path, "blosc: not a valid blosc buffer (" + std::to_string(in.size()) + " bytes)");
  }
  blosc_cbuffer_sizes(in.data(), &nbytes, &cbytes, &blocksize);
  if (cbytes > in.size()) {
    throw StoreError(path, "blosc: header says " + std::to_string(cbytes) + " compressed bytes, only " +
                               std::to_string(in.size()) + " present (truncated)");
  }
  if (nbytes > limit) {
    throw StoreError(path, "blosc: header claims " + std::to_string(nbytes) + " decoded bytes, more than the chunk can hold (" +
                               std::to_string(limit) + ")");
  }
  Bytes out(nbytes);
  if (nbytes == 0) return out;
  int n = blosc_decompress_ctx(in.data(), out.data(), out.size(), 1);
  if (n < 0 || size_t(n) != nbytes) {
    throw StoreError(path, "blosc: decompression failed (corrupt data, code " + std::to_string(n) + ")");
  }
  return out;
}

Bytes ZstdEncode(const CodecConfig& c, const uint8_t* in, size_t size, size_t spare, const std::string& path) {
  // One compression context per thread, reset for each chunk (creating one costs more than
  // compressing a small chunk).
  thread_local std::unique_ptr<ZSTD_CCtx, size_t (*)(ZSTD_CCtx*)> ctx(ZSTD_createCCtx(), ZSTD_freeCCtx);
  if (!ctx) throw StoreError(path, "zstd: out of memory");
  ZSTD_CCtx_reset(ctx.get(), ZSTD_reset_session_and_parameters);
  ZSTD_CCtx_setParameter(ctx.get(), ZSTD_c_compressionLevel, c.level);
  ZSTD_CCtx_setParameter(ctx.get(), ZSTD_c_checksumFlag, c.checksum ? 1 : 0);
  Bytes out;
  out.reserve(ZSTD_compressBound(size) + spare);
  out.resize(ZSTD_compressBound(size));
  size_t n = ZSTD_compress2(ctx.get(), out.data(), out.size(), in, size);
  if (ZSTD_isError(n)) throw StoreError(path, std::string("zstd compression failed: ") + ZSTD_getErrorName(n));
  out.resize(n);
  return out;
}

Bytes ZstdDecode(const Bytes& in, size_t limit, const std::string& path) {
  // Streaming decode: works whether or not the frame records its content size, and for several
  // concatenated frames.
  std::unique_ptr<ZSTD_DCtx, size_t (*)(ZSTD_DCtx*)> ctx(ZSTD_createDCtx(), ZSTD_freeDCtx);
  if (!ctx) throw StoreError(path, "zstd: out of memory");
  // The frame's claimed size is only a hint, never trusted beyond what the chunk can hold.
  unsigned long long hint = ZSTD_getFrameContentSize(in.data(), in.size());
  if (hint != ZSTD_CONTENTSIZE_UNKNOWN && hint != ZSTD_CONTENTSIZE_ERROR && hint > limit) {
    throw StoreError(path, "zstd: frame claims " + std::to_string(hint) + " decoded bytes, more than the chunk can hold (" +
                               std::to_string(limit) + ")");
  }
  size_t capacity = (hint != ZSTD_CONTENTSIZE_UNKNOWN && hint != ZSTD_CONTENTSIZE_ERROR)
                        ? size_t(hint) + 1
                        : std::min<size_t>(std::max<size_t>(ZSTD_DStreamOutSize(), in.size() * 4), limit + 1);
  Bytes out(capacity);
  ZSTD_inBuffer src{in.data(), in.size(), 0};
  ZSTD_outBuffer dst{out.data(), out.size(), 0};
  while (true) {
    if (dst.pos == dst.size) {
      if (out.size() > limit) {
        throw StoreError(path, "zstd: decodes to more than the chunk can hold (" + std::to_string(limit) + " bytes)");
      }
      out.resize(std::min(out.size() * 2, limit + 1));
      dst.dst = out.data();
      dst.size = out.size();
    }
    size_t ret = ZSTD_decompressStream(ctx.get(), &dst, &src);
    if (ZSTD_isError(ret)) throw StoreError(path, std::string("zstd: corrupt data: ") + ZSTD_getErrorName(ret));
    if (ret == 0 && src.pos == src.size) break;
    if (src.pos == src.size && dst.pos < dst.size) {
      throw StoreError(path, "zstd: truncated frame (" + std::to_string(in.size()) + " bytes)");
    }
  }
  out.resize(dst.pos);
  return out;
}

Bytes GzipEncode(const CodecConfig& c, const uint8_t* in, size_t size, size_t spare, const std::string& path) {
  z_stream s{};
  // windowBits 15 + 16: a gzip (RFC 1952) member, as the spec requires.
  if (deflateInit2(&s, c.level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    throw StoreError(path, "gzip: deflateInit2 failed");
  }
  Bytes out;
  out.reserve(deflateBound(&s, size) + 64 + spare);
  out.resize(deflateBound(&s, size) + 64);
  s.next_in = const_cast<Bytef*>(in);
  s.next_out = out.data();
  size_t in_left = size, out_left = out.size();
  int ret;
  do {
    // zlib counts in 32-bit units: feed at most 1 GiB per call.
    s.avail_in = uInt(std::min<size_t>(in_left, 1u << 30));
    s.avail_out = uInt(std::min<size_t>(out_left, 1u << 30));
    uInt in_before = s.avail_in, out_before = s.avail_out;
    ret = deflate(&s, in_left == s.avail_in ? Z_FINISH : Z_NO_FLUSH);
    in_left -= in_before - s.avail_in;
    out_left -= out_before - s.avail_out;
  } while (ret == Z_OK || (ret == Z_BUF_ERROR && out_left > 0));
  deflateEnd(&s);
  if (ret != Z_STREAM_END) throw StoreError(path, "gzip compression failed");
  out.resize(out.size() - out_left);
  return out;
}

Bytes GzipDecode(const Bytes& in, size_t limit, const std::string& path) {
  z_stream s{};
  // windowBits 15 + 32: gzip or zlib header, detected automatically.
  if (inflateInit2(&s, 15 + 32) != Z_OK) throw StoreError(path, "gzip: inflateInit2 failed");
  Bytes out(std::min<size_t>(std::max<size_t>(in.size() * 4, 4096), limit + 1));
  size_t in_pos = 0, out_pos = 0;
  int ret = Z_OK;
  while (true) {
    if (out_pos == out.size()) {
      if (out.size() > limit) {
        inflateEnd(&s);
        throw StoreError(path, "gzip: decodes to more than the chunk can hold (" + std::to_string(limit) + " bytes)");
      }
      out.resize(std::min(out.size() * 2, limit + 1));
    }
    s.next_in = const_cast<Bytef*>(in.data() + in_pos);
    s.avail_in = uInt(std::min<size_t>(in.size() - in_pos, 1u << 30));
    s.next_out = out.data() + out_pos;
    s.avail_out = uInt(std::min<size_t>(out.size() - out_pos, 1u << 30));
    uInt in_before = s.avail_in, out_before = s.avail_out;
    ret = inflate(&s, Z_NO_FLUSH);
    in_pos += in_before - s.avail_in;
    out_pos += out_before - s.avail_out;
    if (ret == Z_STREAM_END) {
      // Concatenated gzip members decode to the concatenation of their contents.
      if (in_pos == in.size()) break;
      inflateReset(&s);
      continue;
    }
    if (ret == Z_BUF_ERROR && in_pos == in.size()) {
      inflateEnd(&s);
      throw StoreError(path, "gzip: truncated stream (" + std::to_string(in.size()) + " bytes)");
    }
    if (ret != Z_OK && ret != Z_BUF_ERROR) {
      std::string msg = s.msg ? s.msg : "error " + std::to_string(ret);
      inflateEnd(&s);
      throw StoreError(path, "gzip: corrupt data: " + msg);
    }
  }
  inflateEnd(&s);
  out.resize(out_pos);
  return out;
}

// Appends the CRC-32C of `*buf` to it, little-endian.
void Crc32cAppend(Bytes* buf) {
  uint32_t crc = Crc32c(buf->data(), buf->size());
  for (int i = 0; i < 4; ++i) buf->push_back(uint8_t(crc >> (8 * i)));
}

Bytes Crc32cEncode(const Bytes& in) {
  Bytes out;
  out.reserve(in.size() + 4);
  out.assign(in.begin(), in.end());
  Crc32cAppend(&out);
  return out;
}

Bytes Crc32cDecode(const Bytes& in, const std::string& path) {
  if (in.size() < 4)
    throw StoreError(path, "crc32c: " + std::to_string(in.size()) + " bytes, too short for a checksum");
  size_t n = in.size() - 4;
  uint32_t stored = uint32_t(in[n]) | uint32_t(in[n + 1]) << 8 | uint32_t(in[n + 2]) << 16 | uint32_t(in[n + 3]) << 24;
  uint32_t actual = Crc32c(in.data(), n);
  if (stored != actual) {
    throw StoreError(path, "crc32c checksum mismatch (stored " + Hex32(stored) + ", computed " + Hex32(actual) +
                               "): the data is corrupt");
  }
  return Bytes(in.begin(), in.begin() + n);
}

// --- array->bytes codecs ------------------------------------------------------------------------

void SwapBytes(uint8_t* data, int64_t count, size_t elem) {
  if (elem == 1) return;
  for (int64_t i = 0; i < count; ++i) std::reverse(data + i * elem, data + (i + 1) * elem);
}

// The encoded size of a shard index of `entries` inner chunks (index codecs are bytes + crc32c*).
size_t IndexEncodedSize(const CodecConfig& sharding, int64_t entries) {
  size_t n = size_t(entries) * 16;
  for (size_t i = 1; i < sharding.index_codecs.size(); ++i) n += 4;
  return n;
}

std::vector<int64_t> ChunksPerShard(const CodecConfig& sharding, const std::vector<int64_t>& shard_shape) {
  std::vector<int64_t> cps(shard_shape.size());
  for (size_t d = 0; d < cps.size(); ++d) cps[d] = shard_shape[d] / sharding.chunk_shape[d];
  return cps;
}

Bytes ShardEncode(const CodecConfig& c, DataType type, const std::vector<int64_t>& shard_shape, const FillValue& fill,
                  const uint8_t* data, const std::string& path) {
  const size_t elem = DataTypeSize(type);
  const std::vector<int64_t> cps = ChunksPerShard(c, shard_shape);
  const int64_t entries = Product(cps);
  std::vector<std::optional<Bytes>> encoded(static_cast<size_t>(entries));
  Bytes inner(size_t(Product(c.chunk_shape)) * elem);
  std::vector<int64_t> idx(cps.size(), 0), start(cps.size()), zeros(cps.size(), 0);
  int64_t k = 0;
  // Inner chunks in C order, each encoded with the inner codecs; all-fill inner chunks are left
  // out (index entry 2^64-1, read back as fill).
  if (entries > 0) {
    do {
      for (size_t d = 0; d < cps.size(); ++d) start[d] = idx[d] * c.chunk_shape[d];
      CopyBox(data, shard_shape, start, inner.data(), c.chunk_shape, zeros, c.chunk_shape, elem);
      if (!AllEqualFill(inner.data(), Product(c.chunk_shape), fill)) {
        encoded[size_t(k)] = EncodeChunk(c.codecs, type, c.chunk_shape, fill, inner.data(), path);
      }
      ++k;
    } while (NextIndex(&idx, cps));
  }
  std::vector<const Bytes*> parts(encoded.size(), nullptr);
  for (size_t i = 0; i < encoded.size(); ++i) parts[i] = encoded[i] ? &*encoded[i] : nullptr;
  return AssembleShard(c, shard_shape, parts, path);
}

void ShardDecode(const CodecConfig& c, DataType type, const std::vector<int64_t>& shard_shape, const FillValue& fill,
                 const uint8_t* enc, size_t n, uint8_t* out, const std::string& path) {
  const size_t elem = DataTypeSize(type);
  const std::vector<int64_t> cps = ChunksPerShard(c, shard_shape);
  const int64_t entries = Product(cps);
  const size_t index_size = IndexEncodedSize(c, entries);
  if (n < index_size) {
    throw StoreError(path, "shard is truncated: " + std::to_string(n) + " bytes, its index alone needs " +
                               std::to_string(index_size));
  }
  const uint8_t* index_bytes = c.index_at_end ? enc + (n - index_size) : enc;
  std::vector<uint64_t> index(size_t(entries) * 2);
  std::vector<int64_t> index_shape = cps;
  index_shape.push_back(2);
  try {
    DecodeChunk(c.index_codecs, DataType::kUint64, index_shape, FillValueOf<uint64_t>(0), index_bytes, index_size,
                reinterpret_cast<uint8_t*>(index.data()), path);
  } catch (const StoreError& e) {
    throw StoreError(path, "shard index: " + e.message() + " (truncated or corrupt shard)");
  }
  Bytes inner(size_t(Product(c.chunk_shape)) * elem);
  std::vector<int64_t> idx(cps.size(), 0), start(cps.size()), zeros(cps.size(), 0);
  int64_t k = 0;
  if (entries == 0) return;
  do {
    for (size_t d = 0; d < cps.size(); ++d) start[d] = idx[d] * c.chunk_shape[d];
    uint64_t offset = index[2 * k], nbytes = index[2 * k + 1];
    if (offset == kMissing && nbytes == kMissing) {
      FillElements(inner.data(), Product(c.chunk_shape), fill);
    } else {
      if (offset > n || nbytes > n - offset) {
        throw StoreError(path, "shard inner chunk " + std::to_string(k) + " (bytes " + std::to_string(offset) + "+" +
                                   std::to_string(nbytes) + ") lies outside the shard of " + std::to_string(n) +
                                   " bytes (truncated or corrupt shard)");
      }
      DecodeChunk(c.codecs, type, c.chunk_shape, fill, enc + offset, size_t(nbytes), inner.data(), path);
    }
    CopyBox(inner.data(), c.chunk_shape, zeros, out, shard_shape, start, c.chunk_shape, elem);
    ++k;
  } while (NextIndex(&idx, cps));
}


// The transpose codec: `out` (shape: in_shape permuted by `order`) gets out[i] = in[j] with
// j[order[d]] = i[d]; `inverse` runs it backwards (out has in_shape, in is the permuted array).
// Walks the permuted array in C order with the source strides permuted alongside.
void Permute(const uint8_t* in, const std::vector<int64_t>& in_shape, const std::vector<int64_t>& order, size_t elem,
             bool inverse, uint8_t* out) {
  const size_t rank = in_shape.size();
  std::vector<int64_t> stride(rank, 1);  // C-order strides of the unpermuted array, in elements
  for (size_t d = rank; d-- > 1;) stride[d - 1] = stride[d] * in_shape[d];
  std::vector<int64_t> shape(rank), step(rank);
  for (size_t d = 0; d < rank; ++d) {
    shape[d] = in_shape[size_t(order[d])];
    step[d] = stride[size_t(order[d])];
  }
  const int64_t count = Product(in_shape);
  if (count == 0) return;
  const int64_t inner = shape[rank - 1], inner_step = step[rank - 1];
  std::vector<int64_t> idx(rank, 0);
  int64_t permuted = 0, plain = 0;  // element offsets in the permuted and the plain array
  auto rows = [&](auto elem_bytes) {
    const size_t e = elem_bytes == 0 ? elem : size_t(elem_bytes);
    for (int64_t k = 0; k < inner; ++k) {
      const size_t a = size_t(permuted + k) * e, b = size_t(plain + k * inner_step) * e;
      if (inverse) std::memcpy(out + b, in + a, e);
      else std::memcpy(out + a, in + b, e);
    }
  };
  while (permuted < count) {
    if (elem == 4) rows(std::integral_constant<int, 4>());  // a fixed-size copy the compiler inlines
    else if (elem == 8) rows(std::integral_constant<int, 8>());
    else rows(std::integral_constant<int, 0>());
    permuted += inner;
    // the next row: advance the outer indices of the permuted array
    for (size_t d = rank - 1; d-- > 0;) {
      plain += step[d];
      if (++idx[d] < shape[d]) break;
      plain -= step[d] * shape[d];
      idx[d] = 0;
    }
  }
}

// The shape a transpose codec makes of `shape`.
std::vector<int64_t> Permuted(const std::vector<int64_t>& shape, const std::vector<int64_t>& order,
                              const std::string& path) {
  if (order.size() != shape.size()) {
    throw StoreError(path, "transpose order has " + std::to_string(order.size()) + " dimensions, the chunk " +
                               std::to_string(shape.size()));
  }
  std::vector<int64_t> out(shape.size());
  for (size_t d = 0; d < shape.size(); ++d) out[d] = shape[size_t(order[d])];
  return out;
}

}  // namespace

size_t ShardIndexSize(const CodecConfig& sharding, const std::vector<int64_t>& shard_shape) {
  return IndexEncodedSize(sharding, Product(ChunksPerShard(sharding, shard_shape)));
}

std::vector<uint64_t> DecodeShardIndex(const CodecConfig& c, const std::vector<int64_t>& shard_shape,
                                       const uint8_t* bytes, size_t n, const std::string& path) {
  const std::vector<int64_t> cps = ChunksPerShard(c, shard_shape);
  const int64_t entries = Product(cps);
  if (n != IndexEncodedSize(c, entries)) {
    throw StoreError(path, "shard index: " + std::to_string(n) + " bytes, expected " +
                               std::to_string(IndexEncodedSize(c, entries)) + " (truncated or corrupt shard)");
  }
  std::vector<uint64_t> index(size_t(entries) * 2);
  std::vector<int64_t> index_shape = cps;
  index_shape.push_back(2);
  try {
    DecodeChunk(c.index_codecs, DataType::kUint64, index_shape, FillValueOf<uint64_t>(0), bytes, n,
                reinterpret_cast<uint8_t*>(index.data()), path);
  } catch (const StoreError& e) {
    throw StoreError(path, "shard index: " + e.message() + " (truncated or corrupt shard)");
  }
  return index;
}

std::vector<uint8_t> EncodeShardIndex(const CodecConfig& c, const std::vector<int64_t>& shard_shape,
                                      const std::vector<const std::vector<uint8_t>*>& inner,
                                      const std::string& path) {
  const std::vector<int64_t> cps = ChunksPerShard(c, shard_shape);
  const int64_t entries = Product(cps);
  if (int64_t(inner.size()) != entries) {
    throw StoreError(path, "shard assembly: " + std::to_string(inner.size()) + " inner chunks given, the shard has " +
                               std::to_string(entries));
  }
  // Inner chunks follow each other in index order, after the index when it comes first.
  uint64_t offset = c.index_at_end ? 0 : IndexEncodedSize(c, entries);
  std::vector<uint64_t> index(size_t(entries) * 2, kMissing);
  for (int64_t k = 0; k < entries; ++k) {
    const Bytes* b = inner[size_t(k)];
    if (!b) continue;
    index[2 * k] = offset;
    index[2 * k + 1] = b->size();
    offset += b->size();
  }
  std::vector<int64_t> index_shape = cps;
  index_shape.push_back(2);
  return EncodeChunk(c.index_codecs, DataType::kUint64, index_shape, FillValueOf<uint64_t>(0),
                     reinterpret_cast<const uint8_t*>(index.data()), path);
}

std::vector<uint8_t> AssembleShard(const CodecConfig& c, const std::vector<int64_t>& shard_shape,
                                   const std::vector<const std::vector<uint8_t>*>& inner, const std::string& path) {
  const Bytes index = EncodeShardIndex(c, shard_shape, inner, path);
  size_t body_size = 0;
  for (const Bytes* b : inner) body_size += b ? b->size() : 0;
  Bytes out;
  out.reserve(body_size + index.size());
  if (!c.index_at_end) out.insert(out.end(), index.begin(), index.end());
  for (const Bytes* b : inner) {
    if (b) out.insert(out.end(), b->begin(), b->end());
  }
  if (c.index_at_end) out.insert(out.end(), index.begin(), index.end());
  return out;
}

bool BloscHasCompressor(const std::string& cname) { return blosc_compname_to_compcode(cname.c_str()) >= 0; }

std::vector<uint8_t> EncodeBytesToBytes(const CodecConfig& codec, const std::vector<uint8_t>& in,
                                        const std::string& path) {
  switch (codec.kind) {
    case CodecKind::kBlosc:
      return BloscEncode(codec, in.data(), in.size(), 0, path);
    case CodecKind::kZstd:
      return ZstdEncode(codec, in.data(), in.size(), 0, path);
    case CodecKind::kGzip:
      return GzipEncode(codec, in.data(), in.size(), 0, path);
    case CodecKind::kCrc32c:
      return Crc32cEncode(in);
    default:
      throw StoreError(path, "\"" + codec.Name() + "\" is not a bytes->bytes codec");
  }
}

std::vector<uint8_t> DecodeBytesToBytes(const CodecConfig& codec, const std::vector<uint8_t>& in,
                                        const std::string& path, size_t limit) {
  switch (codec.kind) {
    case CodecKind::kBlosc:
      return BloscDecode(in, limit, path);
    case CodecKind::kZstd:
      return ZstdDecode(in, limit, path);
    case CodecKind::kGzip:
      return GzipDecode(in, limit, path);
    case CodecKind::kCrc32c:
      return Crc32cDecode(in, path);
    default:
      throw StoreError(path, "\"" + codec.Name() + "\" is not a bytes->bytes codec");
  }
}

std::vector<uint8_t> EncodeChunk(const std::vector<CodecConfig>& codecs, DataType type,
                                 const std::vector<int64_t>& chunk_shape, const FillValue& fill, const uint8_t* data,
                                 const std::string& path) {
  if (!codecs.empty() && codecs[0].kind == CodecKind::kTranspose) {  // array->array: permute, then the rest
    const std::vector<int64_t> shape = Permuted(chunk_shape, codecs[0].order, path);
    Bytes permuted(size_t(Product(chunk_shape)) * DataTypeSize(type));
    Permute(data, chunk_shape, codecs[0].order, DataTypeSize(type), /*inverse=*/false, permuted.data());
    const std::vector<CodecConfig> rest(codecs.begin() + 1, codecs.end());
    return EncodeChunk(rest, type, shape, fill, permuted.data(), path);
  }
  if (codecs.empty() || !codecs[0].IsArrayToBytes()) throw StoreError(path, "codec chain has no array->bytes codec");
  const size_t elem = DataTypeSize(type);
  const int64_t count = Product(chunk_shape);
  // Each stage reads the previous one's output in place: the chunk itself when the bytes codec
  // needs no byte swap, and a crc32c appends to the buffer before it.
  Bytes bytes;
  const uint8_t* p = data;
  size_t n = size_t(count) * elem;
  if (codecs[0].kind == CodecKind::kBytes) {
    if (codecs[0].big_endian && elem > 1) {
      bytes.assign(data, data + n);
      SwapBytes(bytes.data(), count, elem);
      p = bytes.data();
    }
  } else {
    bytes = ShardEncode(codecs[0], type, chunk_shape, fill, data, path);
    p = bytes.data();
    n = bytes.size();
  }
  for (size_t i = 1; i < codecs.size(); ++i) {
    const CodecConfig& c = codecs[i];
    const size_t spare = i + 1 < codecs.size() && codecs[i + 1].kind == CodecKind::kCrc32c ? 4 : 0;
    if (c.kind == CodecKind::kCrc32c) {
      if (p != bytes.data()) bytes.assign(p, p + n);  // still reading the caller's chunk
      Crc32cAppend(&bytes);
    } else if (c.kind == CodecKind::kBlosc) {
      bytes = BloscEncode(c, p, n, spare, path);
    } else if (c.kind == CodecKind::kZstd) {
      bytes = ZstdEncode(c, p, n, spare, path);
    } else if (c.kind == CodecKind::kGzip) {
      bytes = GzipEncode(c, p, n, spare, path);
    } else {
      throw StoreError(path, "\"" + c.Name() + "\" is not a bytes->bytes codec");
    }
    p = bytes.data();
    n = bytes.size();
  }
  if (p != bytes.data()) bytes.assign(p, p + n);  // a bare bytes codec: the chunk as it is
  return bytes;
}

void DecodeChunk(const std::vector<CodecConfig>& codecs, DataType type, const std::vector<int64_t>& chunk_shape,
                 const FillValue& fill, const uint8_t* encoded, size_t n, uint8_t* out, const std::string& path) {
  if (!codecs.empty() && codecs[0].kind == CodecKind::kTranspose) {  // the rest, then permute back
    const std::vector<int64_t> shape = Permuted(chunk_shape, codecs[0].order, path);
    Bytes permuted(size_t(Product(chunk_shape)) * DataTypeSize(type));
    const std::vector<CodecConfig> rest(codecs.begin() + 1, codecs.end());
    DecodeChunk(rest, type, shape, fill, encoded, n, permuted.data(), path);
    Permute(permuted.data(), chunk_shape, codecs[0].order, DataTypeSize(type), /*inverse=*/true, out);
    return;
  }
  if (codecs.empty() || !codecs[0].IsArrayToBytes()) throw StoreError(path, "codec chain has no array->bytes codec");
  const size_t elem = DataTypeSize(type);
  const int64_t count = Product(chunk_shape);
  const size_t expected = size_t(count) * elem;
  // Undo the bytes->bytes codecs last to first; the innermost result is the array->bytes form.
  Bytes bytes;
  const uint8_t* p = encoded;
  size_t size = n;
  if (codecs.size() > 1) {
    bytes.assign(encoded, encoded + n);
    // No stage may decode to more than the chunk can hold: twice its raw size (a shard adds its
    // index and per-chunk overhead) plus 1 MiB. A header claiming more is corrupt or hostile.
    size_t limit = 2 * expected + (size_t(1) << 20);
    if (codecs[0].kind == CodecKind::kShardingIndexed) {
      limit += ShardIndexSize(codecs[0], chunk_shape) * 4;
    }
    for (size_t i = codecs.size(); i-- > 1;) bytes = DecodeBytesToBytes(codecs[i], bytes, path, limit);
    p = bytes.data();
    size = bytes.size();
  }
  if (codecs[0].kind == CodecKind::kBytes) {
    if (size != expected) {
      throw StoreError(path, "decoded chunk has " + std::to_string(size) + " bytes, expected " +
                                 std::to_string(expected) + " (" + std::to_string(count) + " x " + DataTypeName(type) +
                                 ")");
    }
    std::memcpy(out, p, expected);
    if (codecs[0].big_endian) SwapBytes(out, count, elem);
  } else {
    ShardDecode(codecs[0], type, chunk_shape, fill, p, size, out, path);
  }
}

}  // namespace s2r
