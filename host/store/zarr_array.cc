// Arrays and groups on top of the codec chain and the atomic file primitives.
#include "host/store/zarr_array.h"

#include <algorithm>
#include <filesystem>
#include <optional>
#include <system_error>

#include "host/store/codecs.h"
#include "host/store/file_io.h"
#include "host/store/nd_box.h"

namespace s2r {
namespace {

using json = nlohmann::json;

std::string MetadataPath(const std::string& node) { return JoinPath(node, "zarr.json"); }

void WriteJsonAtomic(const std::string& file, const json& doc) {
  const std::string text = doc.dump(2) + "\n";
  WriteFileAtomic(file, text.data(), text.size());
}

std::string ShapeText(const std::vector<int64_t>& v) { return json(v).dump(); }

void CheckIndex(const std::vector<int64_t>& idx, const ArrayMetadata& meta, const std::string& path) {
  if (idx.size() != meta.shape.size()) {
    throw StoreError(path, "chunk index " + ShapeText(idx) + " has the wrong rank for shape " + ShapeText(meta.shape));
  }
  for (int64_t i : idx) {
    if (i < 0) throw StoreError(path, "chunk index " + ShapeText(idx) + " is negative");
  }
}

}  // namespace

// --- ZarrArray -----------------------------------------------------------------------------------

ZarrArray ZarrArray::Create(const std::string& path, ArrayMetadata meta) {
  const std::string file = MetadataPath(path);
  if (FileExists(file)) throw StoreError(file, "a Zarr node already exists here");
  meta.Validate(file);
  MakeDirs(path);
  ZarrArray array(path, std::move(meta));
  array.WriteMetadata();
  return array;
}

ZarrArray ZarrArray::Open(const std::string& path) {
  json doc = ReadZarrJson(path);
  return ZarrArray(path, ParseArrayMetadata(doc, MetadataPath(path)));
}

void ZarrArray::WriteMetadata() const { WriteJsonAtomic(MetadataPath(path_), ArrayMetadataToJson(meta_)); }

void ZarrArray::CheckType(DataType t) const {
  if (t != meta_.data_type) {
    throw StoreError(path_, std::string("array holds ") + DataTypeName(meta_.data_type) + ", not " + DataTypeName(t));
  }
}

int64_t ZarrArray::NumElements() const { return Product(meta_.shape); }

std::string ZarrArray::ChunkPath(const std::vector<int64_t>& idx) const { return JoinPath(path_, meta_.ChunkKey(idx)); }

void ZarrArray::WriteChunkBytes(const std::vector<int64_t>& idx, const void* data, size_t nbytes) {
  CheckIndex(idx, meta_, path_);
  if (nbytes != chunk_bytes()) {
    throw StoreError(path_, "WriteChunkBytes: got " + std::to_string(nbytes) + " bytes, a chunk of " +
                                ShapeText(meta_.chunk_shape) + " x " + DataTypeName(meta_.data_type) + " has " +
                                std::to_string(chunk_bytes()));
  }
  const std::string file = ChunkPath(idx);
  std::vector<uint8_t> encoded = EncodeChunk(meta_.codecs, meta_.data_type, meta_.chunk_shape, meta_.fill_value,
                                             static_cast<const uint8_t*>(data), file);
  MakeDirs(file.substr(0, file.find_last_of('/')));
  WriteFileAtomic(file, encoded.data(), encoded.size());
}

void ZarrArray::ReadChunkBytes(const std::vector<int64_t>& idx, void* out, size_t nbytes) const {
  CheckIndex(idx, meta_, path_);
  if (nbytes != chunk_bytes()) {
    throw StoreError(path_, "ReadChunkBytes: buffer of " + std::to_string(nbytes) + " bytes, a chunk has " +
                                std::to_string(chunk_bytes()));
  }
  const std::string file = ChunkPath(idx);
  auto bytes = ReadFileIfExists(file);
  auto* dst = static_cast<uint8_t*>(out);
  if (!bytes) {
    FillElements(dst, meta_.ChunkElements(), meta_.fill_value);
    return;
  }
  DecodeChunk(meta_.codecs, meta_.data_type, meta_.chunk_shape, meta_.fill_value, bytes->data(), bytes->size(), dst,
              file);
}

void ZarrArray::ReadRegionBytes(const std::vector<int64_t>& start, const std::vector<int64_t>& count, void* out,
                                size_t nbytes) const {
  const size_t rank = meta_.shape.size();
  if (start.size() != rank || count.size() != rank)
    throw StoreError(path_, "ReadRegionBytes: start/count rank mismatch");
  for (size_t d = 0; d < rank; ++d) {
    if (start[d] < 0 || count[d] < 0 || start[d] + count[d] > meta_.shape[d]) {
      throw StoreError(path_, "ReadRegionBytes: box at " + ShapeText(start) + " of size " + ShapeText(count) +
                                  " is outside the shape " + ShapeText(meta_.shape));
    }
  }
  const size_t elem = element_size();
  if (nbytes != size_t(Product(count)) * elem) {
    throw StoreError(path_, "ReadRegionBytes: buffer of " + std::to_string(nbytes) + " bytes, the box needs " +
                                std::to_string(size_t(Product(count)) * elem));
  }
  if (Product(count) == 0) return;
  if (meta_.IsSharded() && meta_.codecs.size() == 1) {
    ReadShardedRegion(start, count, static_cast<uint8_t*>(out));
    return;
  }
  // Visit every chunk the box touches; copy the overlap of each into place.
  std::vector<int64_t> first(rank), extent(rank);
  for (size_t d = 0; d < rank; ++d) {
    first[d] = start[d] / meta_.chunk_shape[d];
    extent[d] = (start[d] + count[d] - 1) / meta_.chunk_shape[d] - first[d] + 1;
  }
  std::vector<uint8_t> chunk(chunk_bytes());
  std::vector<int64_t> rel(rank, 0), idx(rank), in_chunk(rank), in_out(rank), overlap(rank);
  do {
    for (size_t d = 0; d < rank; ++d) {
      idx[d] = first[d] + rel[d];
      int64_t lo = std::max(start[d], idx[d] * meta_.chunk_shape[d]);
      int64_t hi = std::min(start[d] + count[d], (idx[d] + 1) * meta_.chunk_shape[d]);
      in_chunk[d] = lo - idx[d] * meta_.chunk_shape[d];
      in_out[d] = lo - start[d];
      overlap[d] = hi - lo;
    }
    ReadChunkBytes(idx, chunk.data(), chunk.size());
    CopyBox(chunk.data(), meta_.chunk_shape, in_chunk, static_cast<uint8_t*>(out), count, in_out, overlap, elem);
  } while (NextIndex(&rel, extent));
}

// Sharded arrays without bytes->bytes codecs after the sharding codec: read each touched shard's
// index, then only the inner chunks the box touches (a few hundred bytes of a large shard for one
// episode's rows), each with its own checksum.
void ZarrArray::ReadShardedRegion(const std::vector<int64_t>& start, const std::vector<int64_t>& count,
                                  uint8_t* out) const {
  const size_t rank = meta_.shape.size();
  const size_t elem = element_size();
  const CodecConfig& sh = meta_.codecs[0];
  const std::vector<int64_t>& inner = sh.chunk_shape;
  const size_t index_size = ShardIndexSize(sh, meta_.chunk_shape);
  std::vector<int64_t> cps(rank);
  for (size_t d = 0; d < rank; ++d) cps[d] = meta_.chunk_shape[d] / inner[d];
  std::vector<uint8_t> chunk(size_t(Product(inner)) * elem), fill_chunk, index_bytes(index_size), encoded;
  std::vector<int64_t> first(rank), extent(rank), rel(rank, 0), shard(rank);
  for (size_t d = 0; d < rank; ++d) {
    first[d] = start[d] / meta_.chunk_shape[d];
    extent[d] = (start[d] + count[d] - 1) / meta_.chunk_shape[d] - first[d] + 1;
  }
  std::vector<int64_t> ifirst(rank), iextent(rank), irel(rank), iidx(rank), in_chunk(rank), in_out(rank),
      overlap(rank);
  do {
    for (size_t d = 0; d < rank; ++d) shard[d] = first[d] + rel[d];
    const std::string file = ChunkPath(shard);
    std::optional<RandomAccessFile> f = RandomAccessFile::Open(file);
    std::vector<uint64_t> index;
    if (f) {
      if (f->size() < index_size) {
        throw StoreError(file, "shard is truncated: " + std::to_string(f->size()) + " bytes, its index alone needs " +
                                   std::to_string(index_size));
      }
      f->ReadAt(sh.index_at_end ? f->size() - index_size : 0, index_size, index_bytes.data());
      index = DecodeShardIndex(sh, meta_.chunk_shape, index_bytes.data(), index_size, file);
    }
    // Inner chunks of this shard that the box touches (absolute inner-grid coordinates).
    for (size_t d = 0; d < rank; ++d) {
      const int64_t lo = std::max(start[d], shard[d] * meta_.chunk_shape[d]);
      const int64_t hi = std::min(start[d] + count[d], (shard[d] + 1) * meta_.chunk_shape[d]);
      ifirst[d] = lo / inner[d];
      iextent[d] = (hi - 1) / inner[d] - ifirst[d] + 1;
      irel[d] = 0;
    }
    do {
      int64_t k = 0;
      for (size_t d = 0; d < rank; ++d) {
        iidx[d] = ifirst[d] + irel[d];
        k = k * cps[d] + (iidx[d] - shard[d] * cps[d]);
        const int64_t lo = std::max(start[d], iidx[d] * inner[d]);
        const int64_t hi = std::min(start[d] + count[d], (iidx[d] + 1) * inner[d]);
        in_chunk[d] = lo - iidx[d] * inner[d];
        in_out[d] = lo - start[d];
        overlap[d] = hi - lo;
      }
      const uint8_t* src = nullptr;
      const uint64_t kMissingEntry = ~uint64_t(0);
      if (!f || (index[size_t(2 * k)] == kMissingEntry && index[size_t(2 * k + 1)] == kMissingEntry)) {
        if (fill_chunk.empty()) {
          fill_chunk.resize(chunk.size());
          FillElements(fill_chunk.data(), Product(inner), meta_.fill_value);
        }
        src = fill_chunk.data();
      } else {
        const uint64_t offset = index[size_t(2 * k)], nbytes = index[size_t(2 * k + 1)];
        if (offset > f->size() || nbytes > f->size() - offset) {
          throw StoreError(file, "shard inner chunk " + std::to_string(k) + " (bytes " + std::to_string(offset) + "+" +
                                     std::to_string(nbytes) + ") lies outside the shard of " +
                                     std::to_string(f->size()) + " bytes (truncated or corrupt shard)");
        }
        encoded.resize(size_t(nbytes));
        f->ReadAt(offset, size_t(nbytes), encoded.data());
        DecodeChunk(sh.codecs, meta_.data_type, inner, meta_.fill_value, encoded.data(), encoded.size(), chunk.data(),
                    file);
        src = chunk.data();
      }
      CopyBox(src, inner, in_chunk, out, count, in_out, overlap, elem);
    } while (NextIndex(&irel, iextent));
  } while (NextIndex(&rel, extent));
}

void ZarrArray::WriteAllBytes(const void* data, size_t nbytes) {
  const size_t rank = meta_.shape.size();
  const size_t elem = element_size();
  if (nbytes != size_t(NumElements()) * elem) {
    throw StoreError(path_, "WriteAllBytes: got " + std::to_string(nbytes) + " bytes, the array of " +
                                ShapeText(meta_.shape) + " needs " + std::to_string(size_t(NumElements()) * elem));
  }
  if (NumElements() == 0) return;
  const std::vector<int64_t> grid = meta_.GridShape();
  std::vector<uint8_t> chunk(chunk_bytes());
  std::vector<int64_t> idx(rank, 0), origin(rank), zeros(rank, 0), overlap(rank);
  do {
    // The chunk at full shape: the array's values where it overlaps, the fill value elsewhere.
    FillElements(chunk.data(), meta_.ChunkElements(), meta_.fill_value);
    for (size_t d = 0; d < rank; ++d) {
      origin[d] = idx[d] * meta_.chunk_shape[d];
      overlap[d] = std::min(meta_.chunk_shape[d], meta_.shape[d] - origin[d]);
    }
    CopyBox(static_cast<const uint8_t*>(data), meta_.shape, origin, chunk.data(), meta_.chunk_shape, zeros, overlap,
            elem);
    if (AllEqualFill(chunk.data(), meta_.ChunkElements(), meta_.fill_value)) {
      RemoveFileIfExists(ChunkPath(idx));
    } else {
      WriteChunkBytes(idx, chunk.data(), chunk.size());
    }
  } while (NextIndex(&idx, grid));
}

std::vector<uint8_t> ZarrArray::ReadAllBytes() const {
  std::vector<uint8_t> out(size_t(NumElements()) * element_size());
  ReadRegionBytes(std::vector<int64_t>(meta_.shape.size(), 0), meta_.shape, out.data(), out.size());
  return out;
}

void ZarrArray::Resize(const std::vector<int64_t>& new_shape) {
  if (new_shape.size() != meta_.shape.size()) {
    throw StoreError(
        path_, "Resize: new shape " + ShapeText(new_shape) + " must keep rank " + std::to_string(meta_.shape.size()));
  }
  for (int64_t s : new_shape) {
    if (s < 0) throw StoreError(path_, "Resize: negative extent in " + ShapeText(new_shape));
  }
  bool shrinks = false;
  for (size_t d = 0; d < new_shape.size(); ++d) shrinks |= new_shape[d] < meta_.shape[d];
  ArrayMetadata next = meta_;
  next.shape = new_shape;
  ZarrArray resized(path_, std::move(next));
  resized.WriteMetadata();
  meta_ = std::move(resized.meta_);
  // Metadata first: a crash between the two steps leaves unreachable chunks, never missing ones.
  if (shrinks) RemoveChunksOutsideShape();
}

int64_t ZarrArray::RemoveChunksOutsideShape() {
  namespace fs = std::filesystem;
  const std::vector<int64_t> grid = meta_.GridShape();
  const size_t rank = grid.size();
  int64_t removed = 0;
  // Chunk keys are c<sep>i<sep>j...; parse each file's key back into a grid index.
  const fs::path root(path_);
  const std::string prefix = rank == 0 ? "c" : std::string("c") + meta_.separator;
  std::vector<std::string> doomed;
  std::error_code ec;
  if (meta_.separator == '/') {
    if (!fs::is_directory(root / "c", ec)) return 0;
    for (auto it = fs::recursive_directory_iterator(root / "c", ec); !ec && it != fs::recursive_directory_iterator();
         it.increment(ec)) {
      if (!it->is_regular_file(ec)) continue;
      std::string rel = fs::relative(it->path(), root, ec).generic_string();
      if (rel.size() > 4 && rel.compare(rel.size() - 4, 4, ".tmp") == 0) {
        doomed.push_back(it->path().string());  // a write that never completed
        continue;
      }
      std::vector<int64_t> idx;
      size_t pos = 2;
      bool ok = rel.size() > 2;
      while (ok && pos <= rel.size()) {
        size_t next = rel.find('/', pos);
        if (next == std::string::npos) next = rel.size();
        const std::string part = rel.substr(pos, next - pos);
        ok = !part.empty() && part.size() < 19 && part.find_first_not_of("0123456789") == std::string::npos;
        if (ok) idx.push_back(std::stoll(part));
        pos = next + 1;
      }
      if (!ok || idx.size() != rank) continue;  // not a chunk of this array: leave it alone
      for (size_t d = 0; d < rank; ++d) {
        if (idx[d] >= grid[d]) {
          doomed.push_back(it->path().string());
          break;
        }
      }
    }
  } else {
    for (auto it = fs::directory_iterator(root, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
      if (!it->is_regular_file(ec)) continue;
      const std::string name = it->path().filename().string();
      if (name.size() > 4 && name.compare(name.size() - 4, 4, ".tmp") == 0 && name.rfind(prefix, 0) == 0) {
        doomed.push_back(it->path().string());
        continue;
      }
      if (name.rfind(prefix, 0) != 0 || rank == 0) continue;
      std::vector<int64_t> idx;
      size_t pos = prefix.size();
      bool ok = true;
      while (ok && pos <= name.size()) {
        size_t next = name.find(meta_.separator, pos);
        if (next == std::string::npos) next = name.size();
        const std::string part = name.substr(pos, next - pos);
        ok = !part.empty() && part.size() < 19 && part.find_first_not_of("0123456789") == std::string::npos;
        if (ok) idx.push_back(std::stoll(part));
        pos = next + 1;
      }
      if (!ok || idx.size() != rank) continue;
      for (size_t d = 0; d < rank; ++d) {
        if (idx[d] >= grid[d]) {
          doomed.push_back(it->path().string());
          break;
        }
      }
    }
  }
  if (ec) throw StoreError(path_, "cannot list chunks: " + ec.message());
  for (const std::string& f : doomed) {
    RemoveFileIfExists(f);
    ++removed;
  }
  return removed;
}

// --- ZarrGroup -----------------------------------------------------------------------------------

ZarrGroup ZarrGroup::Create(const std::string& path, const json& attributes) {
  const std::string file = MetadataPath(path);
  if (FileExists(file)) throw StoreError(file, "a Zarr node already exists here");
  if (!attributes.is_object()) throw StoreError(file, "group attributes must be a JSON object");
  GroupMetadata meta;
  meta.attributes = attributes;
  MakeDirs(path);
  WriteJsonAtomic(file, GroupMetadataToJson(meta));
  return ZarrGroup(path, std::move(meta));
}

ZarrGroup ZarrGroup::Open(const std::string& path) {
  json doc = ReadZarrJson(path);
  return ZarrGroup(path, ParseGroupMetadata(doc, MetadataPath(path)));
}

std::vector<std::string> ZarrGroup::ListChildren() const {
  std::vector<std::string> out;
  for (const std::string& name : ListSubdirectories(path_)) {
    if (FileExists(MetadataPath(JoinPath(path_, name)))) out.push_back(name);
  }
  return out;
}

ZarrGroup ZarrGroup::CreateGroup(const std::string& name, const json& attributes) const {
  CheckNodeName(name, path_);
  return Create(JoinPath(path_, name), attributes);
}

ZarrArray ZarrGroup::CreateArray(const std::string& name, ArrayMetadata meta) const {
  CheckNodeName(name, path_);
  return ZarrArray::Create(JoinPath(path_, name), std::move(meta));
}

ZarrGroup ZarrGroup::OpenGroup(const std::string& name) const { return Open(JoinPath(path_, name)); }

ZarrArray ZarrGroup::OpenArray(const std::string& name) const { return ZarrArray::Open(JoinPath(path_, name)); }

// --- hierarchy -----------------------------------------------------------------------------------

json ReadZarrJson(const std::string& node_path) {
  const std::string file = MetadataPath(node_path);
  auto bytes = ReadFileIfExists(file);
  if (!bytes) {
    if (FileExists(JoinPath(node_path, ".zarray")) || FileExists(JoinPath(node_path, ".zgroup"))) {
      throw StoreError(file, "missing: this is a Zarr v2 node, s2r reads Zarr v3 only");
    }
    throw StoreError(file, "missing: not a Zarr v3 node");
  }
  return ParseZarrJsonText(bytes->data(), bytes->size(), file);
}

json ParseZarrJsonText(const uint8_t* data, size_t n, const std::string& file) {
  try {
    return json::parse(data, data + n);
  } catch (const json::exception& e) {  // parse errors, and numbers out of range (1e400)
    throw StoreError(file, std::string("malformed JSON: ") + e.what());
  }
}

void CheckNodeName(const std::string& name, const std::string& parent) {
  bool only_periods = !name.empty() && name.find_first_not_of('.') == std::string::npos;
  if (name.empty() || name.find('/') != std::string::npos || only_periods || name.rfind("__", 0) == 0) {
    throw StoreError(JoinPath(parent, name), "invalid node name \"" + name +
                                                 "\" (must be non-empty, without '/', not only periods, "
                                                 "not starting with \"__\")");
  }
}

namespace {

void Walk(const std::string& root, const std::string& rel, std::vector<ZarrNode>* out) {
  const std::string dir = rel.empty() ? root : JoinPath(root, rel);
  if (FileExists(MetadataPath(dir))) {
    json doc = ReadZarrJson(dir);
    bool is_array = NodeTypeOf(doc, MetadataPath(dir)) == "array";
    out->push_back({rel, is_array});
    if (is_array) return;
  }
  for (const std::string& sub : ListSubdirectories(dir)) Walk(root, rel.empty() ? sub : rel + "/" + sub, out);
}

}  // namespace

std::vector<ZarrNode> ListNodes(const std::string& root) {
  if (!IsDirectory(root)) throw StoreError(root, "not a directory");
  std::vector<ZarrNode> out;
  Walk(root, "", &out);
  return out;
}

}  // namespace s2r
