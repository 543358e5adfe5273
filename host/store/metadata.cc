// Parsing and writing zarr.json. Parsing is strict: the spec requires implementations to refuse
// metadata they do not understand, and a silently ignored codec would mean silently wrong data.
#include "host/store/metadata.h"

#include <set>

#include "host/store/codecs.h"
#include "host/store/store_error.h"

namespace s2r {

using json = nlohmann::json;

// A codec list at `key` of the document at `path` (top level or nested in sharding).
std::vector<CodecConfig> ParseCodecList(const json& list, const std::string& path, const std::string& key);

namespace {

// Error helper: "PATH: key \"a.b\": message".
[[noreturn]] void Fail(const std::string& path, const std::string& key, const std::string& message) {
  throw StoreError(path, key.empty() ? message : "key \"" + key + "\": " + message);
}

const json& Require(const json& obj, const char* name, const std::string& path, const std::string& prefix) {
  auto it = obj.find(name);
  if (it == obj.end()) Fail(path, prefix + name, "missing");
  return *it;
}

// Keys outside `known` are allowed only as {"must_understand": false, ...} extension objects.
void RejectUnknownKeys(const json& obj, const std::set<std::string>& known, const std::string& path,
                       const std::string& prefix) {
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    if (known.count(it.key())) continue;
    const json& v = it.value();
    if (v.is_object() && v.contains("must_understand") && v["must_understand"] == false) continue;
    Fail(path, prefix + it.key(), "unknown metadata key (not supported by s2r)");
  }
}

std::vector<int64_t> ParseShape(const json& v, const std::string& path, const std::string& key, bool positive) {
  if (!v.is_array()) Fail(path, key, "must be an array of integers, not " + v.dump());
  std::vector<int64_t> out;
  for (const json& e : v) {
    if (!e.is_number_integer()) Fail(path, key, "must be an array of integers, not " + v.dump());
    if (e.is_number_unsigned() && e.get<uint64_t>() > uint64_t(INT64_MAX)) Fail(path, key, "value too large");
    int64_t x = e.get<int64_t>();
    if (x < 0 || (positive && x == 0)) {
      Fail(path, key, std::string("entries must be ") + (positive ? "positive" : "non-negative") + ", got " + v.dump());
    }
    out.push_back(x);
  }
  return out;
}

int GetInt(const json& config, const char* name, const std::string& path, const std::string& prefix, int64_t lo,
           int64_t hi, std::optional<int64_t> fallback) {
  auto it = config.find(name);
  if (it == config.end()) {
    if (fallback) return static_cast<int>(*fallback);
    Fail(path, prefix + name, "missing");
  }
  if (!it->is_number_integer()) Fail(path, prefix + name, "must be an integer, not " + it->dump());
  int64_t x = it->get<int64_t>();
  if (x < lo || x > hi) {
    Fail(path, prefix + name,
         "must be in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got " + std::to_string(x));
  }
  return static_cast<int>(x);
}

CodecConfig ParseCodec(const json& entry, const std::string& path, const std::string& key) {
  if (!entry.is_object()) Fail(path, key, "a codec must be an object, not " + entry.dump());
  RejectUnknownKeys(entry, {"name", "configuration"}, path, key + ".");
  const json& name_json = Require(entry, "name", path, key + ".");
  if (!name_json.is_string()) Fail(path, key + ".name", "must be a string");
  const std::string name = name_json.get<std::string>();
  json config = json::object();
  if (entry.contains("configuration")) {
    config = entry["configuration"];
    if (!config.is_object()) Fail(path, key + ".configuration", "must be an object");
  }
  const std::string cfg = key + ".configuration.";
  CodecConfig c;
  if (name == "transpose") {
    c.kind = CodecKind::kTranspose;
    RejectUnknownKeys(config, {"order"}, path, cfg);
    const json& order = Require(config, "order", path, cfg);
    if (!order.is_array() || order.empty()) {
      Fail(path, cfg + "order", "must be a non-empty array of dimension indices, not " + order.dump());
    }
    for (const json& e : order) {
      if (!e.is_number_integer()) Fail(path, cfg + "order", "must be an array of dimension indices, not " + order.dump());
      c.order.push_back(e.get<int64_t>());
    }
    std::vector<bool> seen(c.order.size(), false);
    for (int64_t d : c.order) {
      if (d < 0 || d >= int64_t(c.order.size()) || seen[size_t(d)]) {
        Fail(path, cfg + "order", order.dump() + " is not a permutation of 0.." + std::to_string(c.order.size() - 1));
      }
      seen[size_t(d)] = true;
    }
  } else if (name == "bytes") {
    c.kind = CodecKind::kBytes;
    RejectUnknownKeys(config, {"endian"}, path, cfg);
    if (config.contains("endian")) {
      const json& e = config["endian"];
      if (e != "little" && e != "big") Fail(path, cfg + "endian", "must be \"little\" or \"big\", not " + e.dump());
      c.big_endian = e == "big";
    }
  } else if (name == "blosc") {
    c.kind = CodecKind::kBlosc;
    RejectUnknownKeys(config, {"cname", "clevel", "shuffle", "typesize", "blocksize"}, path, cfg);
    const json& cname = Require(config, "cname", path, cfg);
    if (!cname.is_string()) Fail(path, cfg + "cname", "must be a string");
    c.cname = cname.get<std::string>();
    if (!BloscHasCompressor(c.cname)) {
      Fail(path, cfg + "cname", "blosc compressor \"" + c.cname + "\" is not available in this c-blosc build");
    }
    c.clevel = GetInt(config, "clevel", path, cfg, 0, 9, std::nullopt);
    const json& shuffle = Require(config, "shuffle", path, cfg);
    if (shuffle == "noshuffle") {
      c.shuffle = 0;
    } else if (shuffle == "shuffle") {
      c.shuffle = 1;
    } else if (shuffle == "bitshuffle") {
      c.shuffle = 2;
    } else {
      Fail(path, cfg + "shuffle", "must be \"noshuffle\", \"shuffle\" or \"bitshuffle\", not " + shuffle.dump());
    }
    c.typesize = GetInt(config, "typesize", path, cfg, 1, 255, int64_t{0});
    if (c.shuffle != 0 && c.typesize == 0) Fail(path, cfg + "typesize", "required unless shuffle is \"noshuffle\"");
    c.blocksize = GetInt(config, "blocksize", path, cfg, 0, INT32_MAX, int64_t{0});
  } else if (name == "zstd") {
    c.kind = CodecKind::kZstd;
    RejectUnknownKeys(config, {"level", "checksum"}, path, cfg);
    c.level = GetInt(config, "level", path, cfg, -131072, 22, int64_t{0});
    if (config.contains("checksum")) {
      if (!config["checksum"].is_boolean()) Fail(path, cfg + "checksum", "must be true or false");
      c.checksum = config["checksum"].get<bool>();
    }
  } else if (name == "gzip") {
    c.kind = CodecKind::kGzip;
    RejectUnknownKeys(config, {"level"}, path, cfg);
    c.level = GetInt(config, "level", path, cfg, 0, 9, std::nullopt);
  } else if (name == "crc32c") {
    c.kind = CodecKind::kCrc32c;
    RejectUnknownKeys(config, {}, path, cfg);
  } else if (name == "sharding_indexed") {
    c.kind = CodecKind::kShardingIndexed;
    RejectUnknownKeys(config, {"chunk_shape", "codecs", "index_codecs", "index_location"}, path, cfg);
    c.chunk_shape = ParseShape(Require(config, "chunk_shape", path, cfg), path, cfg + "chunk_shape", true);
    c.codecs = config.contains("codecs") ? ParseCodecList(config["codecs"], path, cfg + "codecs")
                                         : std::vector<CodecConfig>{BytesCodec()};
    c.index_codecs = config.contains("index_codecs")
                         ? ParseCodecList(config["index_codecs"], path, cfg + "index_codecs")
                         : std::vector<CodecConfig>{BytesCodec(), Crc32cCodec()};
    // The index must have a fixed encoded size: bytes, optionally followed by crc32c.
    bool fixed = !c.index_codecs.empty() && c.index_codecs[0].kind == CodecKind::kBytes;
    for (size_t i = 1; i < c.index_codecs.size(); ++i) fixed = fixed && c.index_codecs[i].kind == CodecKind::kCrc32c;
    if (!fixed) Fail(path, cfg + "index_codecs", "only [bytes] or [bytes, crc32c] index codecs are supported");
    if (config.contains("index_location")) {
      const json& loc = config["index_location"];
      if (loc != "start" && loc != "end") Fail(path, cfg + "index_location", "must be \"start\" or \"end\"");
      c.index_at_end = loc == "end";
    }
  } else {
    Fail(path, key + ".name",
         "unsupported codec \"" + name + "\" (s2r reads transpose, bytes, blosc, zstd, gzip, crc32c, sharding_indexed)");
  }
  return c;
}

json CodecToJson(const CodecConfig& c, DataType type) {
  json out;
  out["name"] = c.Name();
  switch (c.kind) {
    case CodecKind::kTranspose:
      out["configuration"] = {{"order", c.order}};
      break;
    case CodecKind::kBytes:
      if (DataTypeSize(type) > 1) out["configuration"] = {{"endian", c.big_endian ? "big" : "little"}};
      break;
    case CodecKind::kBlosc: {
      static const char* kShuffle[] = {"noshuffle", "shuffle", "bitshuffle"};
      json cfg = {
          {"cname", c.cname}, {"clevel", c.clevel}, {"shuffle", kShuffle[c.shuffle]}, {"blocksize", c.blocksize}};
      if (c.typesize > 0) cfg["typesize"] = c.typesize;
      out["configuration"] = cfg;
      break;
    }
    case CodecKind::kZstd:
      out["configuration"] = {{"level", c.level}, {"checksum", c.checksum}};
      break;
    case CodecKind::kGzip:
      out["configuration"] = {{"level", c.level}};
      break;
    case CodecKind::kCrc32c:
      break;
    case CodecKind::kShardingIndexed:
      out["configuration"] = {{"chunk_shape", c.chunk_shape},
                              {"codecs", CodecsToJson(c.codecs, type)},
                              {"index_codecs", CodecsToJson(c.index_codecs, DataType::kUint64)},
                              {"index_location", c.index_at_end ? "end" : "start"}};
      break;
  }
  return out;
}

// Order: array->array codecs (transpose), one array->bytes codec, then bytes->bytes.
void CheckCodecOrder(const std::vector<CodecConfig>& codecs, const std::string& path, const std::string& key) {
  size_t first = 0;
  while (first < codecs.size() && codecs[first].kind == CodecKind::kTranspose) ++first;
  if (first == codecs.size()) Fail(path, key, "must contain an array->bytes codec (bytes or sharding_indexed)");
  if (!codecs[first].IsArrayToBytes()) {
    Fail(path, key + "[" + std::to_string(first) + "]",
         "\"" + codecs[first].Name() + "\" comes where the array->bytes codec (bytes or sharding_indexed) must be");
  }
  if (first > 0 && codecs[first].kind == CodecKind::kShardingIndexed) {
    Fail(path, key + "[0]",
         "s2r supports transpose before bytes (inside a shard or in an unsharded array), not before sharding_indexed");
  }
  for (size_t i = first + 1; i < codecs.size(); ++i) {
    if (codecs[i].IsArrayToBytes()) {
      Fail(path, key + "[" + std::to_string(i) + "]", "\"" + codecs[i].Name() + "\" must be the only array->bytes codec");
    }
  }
}

// Checks one codec chain for an array (or inner chunk) of `chunk_shape`.
void ValidateCodecs(const std::vector<CodecConfig>& codecs, const std::vector<int64_t>& chunk_shape,
                    const std::string& path, const std::string& key) {
  for (size_t i = 0; i < codecs.size(); ++i) {
    const CodecConfig& c = codecs[i];
    if (c.kind == CodecKind::kTranspose && c.order.size() != chunk_shape.size()) {
      Fail(path, key + "[" + std::to_string(i) + "].configuration.order",
           "permutes " + std::to_string(c.order.size()) + " dimensions, the chunk has " +
               std::to_string(chunk_shape.size()));
    }
    if (c.kind != CodecKind::kShardingIndexed) continue;
    const std::string k = key + "[" + std::to_string(i) + "].configuration.chunk_shape";
    if (c.chunk_shape.size() != chunk_shape.size()) {
      Fail(path, k,
           "has " + std::to_string(c.chunk_shape.size()) + " dimensions, the shard has " +
               std::to_string(chunk_shape.size()));
    }
    for (size_t d = 0; d < chunk_shape.size(); ++d) {
      if (c.chunk_shape[d] <= 0 || chunk_shape[d] % c.chunk_shape[d] != 0) {
        Fail(path, k,
             "inner chunk shape " + json(c.chunk_shape).dump() + " must divide the shard shape " +
                 json(chunk_shape).dump());
      }
    }
    const std::string inner_key = key + "[" + std::to_string(i) + "].configuration.codecs";
    CheckCodecOrder(c.codecs, path, inner_key);
    ValidateCodecs(c.codecs, c.chunk_shape, path, inner_key);
  }
}

}  // namespace

std::string CodecConfig::Name() const {
  switch (kind) {
    case CodecKind::kTranspose:
      return "transpose";
    case CodecKind::kBytes:
      return "bytes";
    case CodecKind::kShardingIndexed:
      return "sharding_indexed";
    case CodecKind::kBlosc:
      return "blosc";
    case CodecKind::kZstd:
      return "zstd";
    case CodecKind::kGzip:
      return "gzip";
    case CodecKind::kCrc32c:
      return "crc32c";
  }
  return "?";
}

CodecConfig TransposeCodec(std::vector<int64_t> order) {
  CodecConfig c;
  c.kind = CodecKind::kTranspose;
  c.order = std::move(order);
  return c;
}

CodecConfig BytesCodec(bool big_endian) {
  CodecConfig c;
  c.kind = CodecKind::kBytes;
  c.big_endian = big_endian;
  return c;
}

CodecConfig BloscCodec(const std::string& cname, int clevel, const std::string& shuffle, int typesize,
                       int64_t blocksize) {
  CodecConfig c;
  c.kind = CodecKind::kBlosc;
  c.cname = cname;
  c.clevel = clevel;
  c.shuffle = shuffle == "noshuffle" ? 0 : shuffle == "bitshuffle" ? 2 : 1;
  if (shuffle != "noshuffle" && shuffle != "shuffle" && shuffle != "bitshuffle") {
    throw StoreError("blosc", "unknown shuffle \"" + shuffle + "\"");
  }
  c.typesize = typesize;
  c.blocksize = blocksize;
  return c;
}

CodecConfig ZstdCodec(int level, bool checksum) {
  CodecConfig c;
  c.kind = CodecKind::kZstd;
  c.level = level;
  c.checksum = checksum;
  return c;
}

CodecConfig GzipCodec(int level) {
  CodecConfig c;
  c.kind = CodecKind::kGzip;
  c.level = level;
  return c;
}

CodecConfig Crc32cCodec() {
  CodecConfig c;
  c.kind = CodecKind::kCrc32c;
  return c;
}

CodecConfig ShardingCodec(std::vector<int64_t> inner_chunk_shape, std::vector<CodecConfig> inner_codecs) {
  CodecConfig c;
  c.kind = CodecKind::kShardingIndexed;
  c.chunk_shape = std::move(inner_chunk_shape);
  c.codecs = std::move(inner_codecs);
  c.index_codecs = {BytesCodec(), Crc32cCodec()};
  c.index_at_end = true;
  return c;
}

std::vector<CodecConfig> ParseCodecs(const json& list, const std::string& path) {
  return ParseCodecList(list, path, "codecs");
}

std::vector<CodecConfig> ParseCodecList(const json& list, const std::string& path, const std::string& key) {
  if (!list.is_array()) Fail(path, key, "must be an array of codec objects");
  std::vector<CodecConfig> out;
  for (size_t i = 0; i < list.size(); ++i) {
    out.push_back(ParseCodec(list[i], path, key + "[" + std::to_string(i) + "]"));
  }
  CheckCodecOrder(out, path, key);
  return out;
}

json CodecsToJson(const std::vector<CodecConfig>& codecs, DataType type) {
  json out = json::array();
  for (const CodecConfig& c : codecs) out.push_back(CodecToJson(c, type));
  return out;
}

int64_t ArrayMetadata::ChunkElements() const {
  int64_t n = 1;
  for (int64_t c : chunk_shape) n *= c;
  return n;
}

std::vector<int64_t> ArrayMetadata::GridShape() const {
  std::vector<int64_t> g(shape.size());
  for (size_t d = 0; d < shape.size(); ++d) g[d] = (shape[d] + chunk_shape[d] - 1) / chunk_shape[d];
  return g;
}

std::string ArrayMetadata::ChunkKey(const std::vector<int64_t>& idx) const {
  std::string key = "c";
  for (int64_t i : idx) {
    key.push_back(separator);
    key += std::to_string(i);
  }
  return key;
}

void ArrayMetadata::Validate(const std::string& path) {
  if (chunk_shape.size() != shape.size()) {
    Fail(path, "chunk_grid.configuration.chunk_shape",
         "has " + std::to_string(chunk_shape.size()) + " dimensions, shape has " + std::to_string(shape.size()));
  }
  for (int64_t s : shape) {
    if (s < 0) Fail(path, "shape", "entries must be non-negative");
  }
  for (int64_t c : chunk_shape) {
    if (c <= 0) Fail(path, "chunk_grid.configuration.chunk_shape", "entries must be positive");
  }
  // Sizes s2r can index and hold: every extent, element and byte count fits in int64 with room
  // for the grid arithmetic, and one stored chunk decodes to at most 16 GiB.
  constexpr int64_t kMaxExtent = int64_t(1) << 62;
  constexpr int64_t kMaxChunkBytes = int64_t(1) << 34;
  const int64_t elem = int64_t(DataTypeSize(data_type));
  int64_t elements = 1, chunk_elements = 1;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] > kMaxExtent) Fail(path, "shape", "extent " + std::to_string(shape[d]) + " is too large");
    if (chunk_shape[d] > kMaxExtent) {
      Fail(path, "chunk_grid.configuration.chunk_shape", "extent " + std::to_string(chunk_shape[d]) + " is too large");
    }
    int64_t bytes = 0;
    if (__builtin_mul_overflow(elements, shape[d], &elements) || __builtin_mul_overflow(elements, elem, &bytes)) {
      Fail(path, "shape", "the array's size in bytes overflows 64 bits");
    }
    if (__builtin_mul_overflow(chunk_elements, chunk_shape[d], &chunk_elements) ||
        chunk_elements > kMaxChunkBytes / elem) {
      Fail(path, "chunk_grid.configuration.chunk_shape",
           "a chunk of more than " + std::to_string(kMaxChunkBytes) + " bytes is not supported");
    }
  }
  if (separator != '/' && separator != '.')
    Fail(path, "chunk_key_encoding.configuration.separator", "must be \"/\" or \".\"");
  if (fill_value.empty()) fill_value.assign(DataTypeSize(data_type), 0);
  if (fill_value.size() != DataTypeSize(data_type)) {
    Fail(path, "fill_value",
         "has " + std::to_string(fill_value.size()) + " bytes, " + DataTypeName(data_type) + " needs " +
             std::to_string(DataTypeSize(data_type)));
  }
  if (codecs.empty()) codecs.push_back(BytesCodec());
  CheckCodecOrder(codecs, path, "codecs");
  ValidateCodecs(codecs, chunk_shape, path, "codecs");
  if (dimension_names && dimension_names->size() != shape.size()) {
    Fail(path, "dimension_names",
         "has " + std::to_string(dimension_names->size()) + " entries, shape has " + std::to_string(shape.size()));
  }
  if (!attributes.is_object()) Fail(path, "attributes", "must be an object");
}

ArrayMetadata MakeArrayMetadata(DataType type, std::vector<int64_t> shape, std::vector<int64_t> chunk_shape,
                                std::vector<CodecConfig> codecs, FillValue fill) {
  ArrayMetadata m;
  m.data_type = type;
  m.shape = std::move(shape);
  m.chunk_shape = std::move(chunk_shape);
  m.codecs = std::move(codecs);
  m.fill_value = std::move(fill);
  return m;
}

ArrayMetadata ParseArrayMetadata(const json& doc, const std::string& path) {
  if (!doc.is_object()) Fail(path, "", "zarr.json must hold a JSON object");
  if (NodeTypeOf(doc, path) != "array") Fail(path, "node_type", "expected \"array\"");
  RejectUnknownKeys(doc,
                    {"zarr_format", "node_type", "shape", "data_type", "chunk_grid", "chunk_key_encoding", "fill_value",
                     "codecs", "attributes", "dimension_names", "storage_transformers"},
                    path, "");
  ArrayMetadata m;
  m.shape = ParseShape(Require(doc, "shape", path, ""), path, "shape", false);

  const json& dt = Require(doc, "data_type", path, "");
  if (!dt.is_string())
    Fail(path, "data_type", "unsupported data type " + dt.dump() + " (extension data types are not supported)");
  if (!ParseDataType(dt.get<std::string>(), &m.data_type)) {
    Fail(path, "data_type",
         "unsupported data type " + dt.dump() + " (s2r supports bool, int8..int64, uint8..uint64, float32, float64)");
  }

  const json& grid = Require(doc, "chunk_grid", path, "");
  if (!grid.is_object()) Fail(path, "chunk_grid", "must be an object");
  if (grid.value("name", json()) != "regular")
    Fail(path, "chunk_grid.name", "only the \"regular\" chunk grid is supported");
  const json& grid_cfg = Require(grid, "configuration", path, "chunk_grid.");
  m.chunk_shape = ParseShape(Require(grid_cfg, "chunk_shape", path, "chunk_grid.configuration."), path,
                             "chunk_grid.configuration.chunk_shape", true);

  const json& cke = Require(doc, "chunk_key_encoding", path, "");
  if (!cke.is_object()) Fail(path, "chunk_key_encoding", "must be an object");
  if (cke.value("name", json()) != "default") {
    Fail(path, "chunk_key_encoding.name", "only the \"default\" chunk key encoding is supported");
  }
  m.separator = '/';
  if (cke.contains("configuration") && cke["configuration"].contains("separator")) {
    const json& sep = cke["configuration"]["separator"];
    if (sep != "/" && sep != ".") Fail(path, "chunk_key_encoding.configuration.separator", "must be \"/\" or \".\"");
    m.separator = sep.get<std::string>()[0];
  }

  try {
    m.fill_value = ParseFillValue(Require(doc, "fill_value", path, ""), m.data_type, path);
  } catch (const StoreError& e) {
    if (e.path() != path) throw;
    Fail(path, "fill_value", e.message());
  }
  m.codecs = ParseCodecs(Require(doc, "codecs", path, ""), path);

  if (doc.contains("dimension_names") && !doc["dimension_names"].is_null()) {
    const json& names = doc["dimension_names"];
    if (!names.is_array()) Fail(path, "dimension_names", "must be an array of strings or nulls");
    std::vector<std::optional<std::string>> out;
    for (const json& n : names) {
      if (n.is_null()) {
        out.emplace_back();
      } else if (n.is_string()) {
        out.emplace_back(n.get<std::string>());
      } else {
        Fail(path, "dimension_names", "must be an array of strings or nulls");
      }
    }
    m.dimension_names = std::move(out);
  }
  if (doc.contains("attributes")) m.attributes = doc["attributes"];
  if (doc.contains("storage_transformers")) {
    const json& st = doc["storage_transformers"];
    if (!st.is_array() || !st.empty()) Fail(path, "storage_transformers", "storage transformers are not supported");
  }
  m.Validate(path);
  return m;
}

json ArrayMetadataToJson(const ArrayMetadata& m) {
  json doc;
  doc["zarr_format"] = 3;
  doc["node_type"] = "array";
  doc["shape"] = m.shape;
  doc["data_type"] = DataTypeName(m.data_type);
  doc["chunk_grid"] = {{"name", "regular"}, {"configuration", {{"chunk_shape", m.chunk_shape}}}};
  doc["chunk_key_encoding"] = {{"name", "default"}, {"configuration", {{"separator", std::string(1, m.separator)}}}};
  doc["fill_value"] = FillValueToJson(m.fill_value, m.data_type);
  doc["codecs"] = CodecsToJson(m.codecs, m.data_type);
  doc["attributes"] = m.attributes;
  if (m.dimension_names) {
    json names = json::array();
    for (const auto& n : *m.dimension_names) names.push_back(n ? json(*n) : json(nullptr));
    doc["dimension_names"] = names;
  }
  return doc;
}

std::string NodeTypeOf(const json& doc, const std::string& path) {
  if (!doc.is_object()) Fail(path, "", "zarr.json must hold a JSON object");
  const json& format = Require(doc, "zarr_format", path, "");
  if (format != 3) Fail(path, "zarr_format", "must be 3, got " + format.dump());
  const json& type = Require(doc, "node_type", path, "");
  if (type != "array" && type != "group") Fail(path, "node_type", "must be \"array\" or \"group\", got " + type.dump());
  return type.get<std::string>();
}

GroupMetadata ParseGroupMetadata(const json& doc, const std::string& path) {
  if (NodeTypeOf(doc, path) != "group") Fail(path, "node_type", "expected \"group\"");
  // consolidated_metadata is zarr-python's (unversioned) extension: a cache we never rely on.
  RejectUnknownKeys(doc, {"zarr_format", "node_type", "attributes", "consolidated_metadata"}, path, "");
  GroupMetadata g;
  if (doc.contains("attributes")) {
    if (!doc["attributes"].is_object()) Fail(path, "attributes", "must be an object");
    g.attributes = doc["attributes"];
  }
  return g;
}

json GroupMetadataToJson(const GroupMetadata& g) {
  return {{"zarr_format", 3}, {"node_type", "group"}, {"attributes", g.attributes}};
}

}  // namespace s2r
