// Zarr v3 arrays and groups in a directory store. One process writes a given array (single
// writer); any number may read. Chunks (or whole shards) are written as complete files through
// temp + fsync + rename, metadata likewise, so a crash never leaves a torn file behind.
//
// Layout follows the spec: PATH/zarr.json holds the metadata, PATH/c/i/j/... the chunks (with the
// default "/" key separator). With sharding_indexed, each stored chunk is a shard and the unit of
// writing is the whole shard.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <type_traits>
#include <vector>

#include "host/store/metadata.h"
#include "host/store/store_error.h"

namespace s2r {

class ZarrArray {
 public:
  // Creates the array directory (and missing parents) and writes zarr.json atomically. Fills the
  // metadata defaults and validates it; refuses to replace an existing node.
  static ZarrArray Create(const std::string& path, ArrayMetadata meta);
  // Reads and validates PATH/zarr.json.
  static ZarrArray Open(const std::string& path);

  const std::string& path() const { return path_; }
  const ArrayMetadata& metadata() const { return meta_; }
  size_t element_size() const { return DataTypeSize(meta_.data_type); }
  // Bytes of one stored chunk (shard) in decoded form.
  size_t chunk_bytes() const { return size_t(meta_.ChunkElements()) * element_size(); }
  // The file of the chunk at grid index `idx`.
  std::string ChunkPath(const std::vector<int64_t>& idx) const;

  // Encodes and writes one whole stored chunk (a whole shard when sharded): `nbytes` ==
  // chunk_bytes(), C order, native element representation; edge chunks are passed at full chunk
  // shape (the part outside the array is ignored by readers). The index may lie past the current
  // shape: such chunks stay invisible until Resize grows the array over them, which is how data
  // is appended crash-safely (data first, metadata after).
  void WriteChunkBytes(const std::vector<int64_t>& idx, const void* data, size_t nbytes);
  // Reads one stored chunk at full chunk shape; a missing chunk reads as the fill value.
  void ReadChunkBytes(const std::vector<int64_t>& idx, void* out, size_t nbytes) const;

  // Reads the box [start, start + count) into `out` (C order, Product(count) elements). Sharded
  // arrays read only the shard indexes and the inner chunks the box touches.
  void ReadRegionBytes(const std::vector<int64_t>& start, const std::vector<int64_t>& count, void* out,
                       size_t nbytes) const;
  // Writes the whole array from `data` (C order, all elements): every chunk is written, except
  // chunks that are entirely the fill value, whose files are removed instead.
  void WriteAllBytes(const void* data, size_t nbytes);
  std::vector<uint8_t> ReadAllBytes() const;

  // Typed forms: the element type must match the array's data type (bool arrays: bool*).
  template <typename T>
  void WriteChunk(const std::vector<int64_t>& idx, const T* data, size_t count) {
    CheckType(DataTypeOf<T>());
    WriteChunkBytes(idx, data, count * sizeof(T));
  }
  template <typename T>
  void ReadChunk(const std::vector<int64_t>& idx, T* out, size_t count) const {
    CheckType(DataTypeOf<T>());
    ReadChunkBytes(idx, out, count * sizeof(T));
  }
  template <typename T>
  void ReadRegion(const std::vector<int64_t>& start, const std::vector<int64_t>& count, T* out, size_t n) const {
    CheckType(DataTypeOf<T>());
    ReadRegionBytes(start, count, out, n * sizeof(T));
  }
  template <typename T>
  void WriteAll(const std::vector<T>& data) {
    static_assert(!std::is_same_v<T, bool>, "std::vector<bool> is packed: use WriteAllBytes");
    CheckType(DataTypeOf<T>());
    WriteAllBytes(data.data(), data.size() * sizeof(T));
  }
  template <typename T>
  std::vector<T> ReadAll() const {
    static_assert(!std::is_same_v<T, bool>, "std::vector<bool> is packed: use ReadAllBytes()");
    CheckType(DataTypeOf<T>());
    std::vector<T> out(static_cast<size_t>(NumElements()));
    ReadRegionBytes(std::vector<int64_t>(meta_.shape.size(), 0), meta_.shape, out.data(), out.size() * sizeof(T));
    return out;
  }

  // Changes the shape (rank fixed) by rewriting zarr.json atomically. Growing never touches
  // chunks (chunks written past the old shape become visible); shrinking then removes the chunks
  // that lie wholly outside the new shape, so re-growing exposes fill, not stale data.
  void Resize(const std::vector<int64_t>& new_shape);
  // Removes chunk files whose grid index lies outside the current shape, and leftover temporary
  // files of interrupted chunk writes. Returns how many files were removed.
  int64_t RemoveChunksOutsideShape();

  int64_t NumElements() const;

 private:
  ZarrArray(std::string path, ArrayMetadata meta) : path_(std::move(path)), meta_(std::move(meta)) {}
  void CheckType(DataType t) const;
  void ReadShardedRegion(const std::vector<int64_t>& start, const std::vector<int64_t>& count, uint8_t* out) const;
  void WriteMetadata() const;

  std::string path_;
  ArrayMetadata meta_;
};

class ZarrGroup {
 public:
  // Creates the group directory (and missing parents) and writes its zarr.json atomically.
  static ZarrGroup Create(const std::string& path, const nlohmann::json& attributes = nlohmann::json::object());
  static ZarrGroup Open(const std::string& path);

  const std::string& path() const { return path_; }
  const GroupMetadata& metadata() const { return meta_; }

  // Names of the direct children that are nodes (sub-directories with a zarr.json), sorted.
  std::vector<std::string> ListChildren() const;

  ZarrGroup CreateGroup(const std::string& name, const nlohmann::json& attributes = nlohmann::json::object()) const;
  ZarrArray CreateArray(const std::string& name, ArrayMetadata meta) const;
  ZarrGroup OpenGroup(const std::string& name) const;
  ZarrArray OpenArray(const std::string& name) const;

 private:
  ZarrGroup(std::string path, GroupMetadata meta) : path_(std::move(path)), meta_(std::move(meta)) {}

  std::string path_;
  GroupMetadata meta_;
};

// A node found by ListNodes: its path relative to the root ("" for the root), and its kind.
struct ZarrNode {
  std::string path;
  bool is_array = false;
};

// Every explicit node (array or group with a zarr.json) at or under `root`, depth first in name
// order. Directories without zarr.json are searched through (implicit groups); arrays are not
// descended into. Throws StoreError for a zarr.json that is not valid v3.
std::vector<ZarrNode> ListNodes(const std::string& root);

// Reads PATH/zarr.json as JSON (StoreError naming the file when missing or malformed).
nlohmann::json ReadZarrJson(const std::string& node_path);
// The JSON text of a zarr.json; every failure is a StoreError naming `file`.
nlohmann::json ParseZarrJsonText(const uint8_t* data, size_t n, const std::string& file);

// Checks a node name against the spec's rules (non-empty, no '/', not only periods, no "__" prefix).
void CheckNodeName(const std::string& name, const std::string& parent);

}  // namespace s2r
