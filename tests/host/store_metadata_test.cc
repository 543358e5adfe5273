// zarr.json parsing and writing: the documents zarr-python writes parse, what s2r writes parses
// back identically, fill values follow the spec's JSON forms, and every rejection names the file
// and the key.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "host/store/metadata.h"
#include "host/store/store_error.h"

namespace s2r {
namespace {

using json = nlohmann::json;

// A zarr-python 3 document: sharded uint8 with blosc inside.
json ZarrPythonSharded() {
  return json::parse(R"({
    "shape": [10], "data_type": "uint8",
    "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [4]}},
    "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
    "fill_value": 0,
    "codecs": [{"name": "sharding_indexed", "configuration": {
        "chunk_shape": [2],
        "codecs": [{"name": "bytes"}, {"name": "blosc", "configuration": {"typesize": 1, "cname": "lz4",
                   "clevel": 5, "shuffle": "bitshuffle", "blocksize": 0}}],
        "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}],
        "index_location": "end"}}],
    "attributes": {}, "zarr_format": 3, "node_type": "array", "storage_transformers": []})");
}

json Simple() {
  return json::parse(R"({
    "zarr_format": 3, "node_type": "array", "shape": [5, 7], "data_type": "float32",
    "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2, 3]}},
    "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
    "fill_value": "NaN",
    "codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
               {"name": "zstd", "configuration": {"level": 0, "checksum": false}}],
    "dimension_names": ["x", null], "attributes": {"k": [1, 2]}})");
}

// The message of the StoreError thrown by parsing `doc`, after checking it names the file.
std::string ParseError(const json& doc) {
  try {
    ParseArrayMetadata(doc, "/store/a/zarr.json");
  } catch (const StoreError& e) {
    EXPECT_EQ(e.path(), "/store/a/zarr.json");
    EXPECT_NE(std::string(e.what()).find("/store/a/zarr.json"), std::string::npos);
    return e.message();
  }
  ADD_FAILURE() << "no StoreError for " << doc.dump();
  return "";
}

TEST(StoreMetadata, ParsesZarrPythonDocuments) {
  ArrayMetadata m = ParseArrayMetadata(ZarrPythonSharded(), "z.json");
  EXPECT_EQ(m.shape, std::vector<int64_t>{10});
  EXPECT_EQ(m.data_type, DataType::kUint8);
  EXPECT_TRUE(m.IsSharded());
  const CodecConfig& s = m.codecs[0];
  EXPECT_EQ(s.chunk_shape, std::vector<int64_t>{2});
  ASSERT_EQ(s.codecs.size(), 2u);
  EXPECT_EQ(s.codecs[1].kind, CodecKind::kBlosc);
  EXPECT_EQ(s.codecs[1].shuffle, 2);
  EXPECT_EQ(s.codecs[1].cname, "lz4");
  EXPECT_TRUE(s.index_at_end);
  EXPECT_EQ(m.GridShape(), std::vector<int64_t>{3});
  EXPECT_EQ(m.ChunkKey({2}), "c/2");

  ArrayMetadata f = ParseArrayMetadata(Simple(), "s.json");
  EXPECT_TRUE(std::isnan(*reinterpret_cast<const float*>(f.fill_value.data())));
  ASSERT_TRUE(f.dimension_names.has_value());
  EXPECT_EQ((*f.dimension_names)[0], "x");
  EXPECT_FALSE((*f.dimension_names)[1].has_value());
  EXPECT_EQ(f.attributes["k"], json({1, 2}));
  EXPECT_EQ(f.ChunkKey({1, 2}), "c/1/2");
}

TEST(StoreMetadata, WrittenDocumentsParseBackIdentically) {
  for (const json& doc : {ZarrPythonSharded(), Simple()}) {
    ArrayMetadata m = ParseArrayMetadata(doc, "a.json");
    json written = ArrayMetadataToJson(m);
    ArrayMetadata back = ParseArrayMetadata(written, "b.json");
    EXPECT_EQ(ArrayMetadataToJson(back), written);
    EXPECT_EQ(written["zarr_format"], 3);
    EXPECT_EQ(written["chunk_key_encoding"]["configuration"]["separator"], "/");
  }
  // One-byte types omit the bytes codec's endian, as zarr-python does; wider types state it.
  json sharded = ArrayMetadataToJson(ParseArrayMetadata(ZarrPythonSharded(), "a.json"));
  EXPECT_FALSE(sharded["codecs"][0]["configuration"]["codecs"][0].contains("configuration"));
  EXPECT_EQ(sharded["codecs"][0]["configuration"]["index_codecs"][0]["configuration"]["endian"], "little");
}

TEST(StoreMetadata, ScalarArrayUsesKeyC) {
  ArrayMetadata m;
  m.data_type = DataType::kInt32;
  m.Validate("x");
  EXPECT_EQ(m.ChunkKey({}), "c");
  EXPECT_EQ(m.ChunkElements(), 1);
  EXPECT_EQ(m.codecs.size(), 1u);  // default [bytes]
}

uint32_t Bits32(const FillValue& f) {
  uint32_t b;
  std::memcpy(&b, f.data(), 4);
  return b;
}
uint64_t Bits64(const FillValue& f) {
  uint64_t b;
  std::memcpy(&b, f.data(), 8);
  return b;
}

TEST(StoreMetadata, FloatFillValueForms) {
  EXPECT_EQ(Bits32(ParseFillValue("NaN", DataType::kFloat32, "p")), 0x7fc00000u);
  EXPECT_EQ(Bits64(ParseFillValue("NaN", DataType::kFloat64, "p")), 0x7ff8000000000000ull);
  EXPECT_EQ(Bits32(ParseFillValue("Infinity", DataType::kFloat32, "p")), 0x7f800000u);
  EXPECT_EQ(Bits64(ParseFillValue("-Infinity", DataType::kFloat64, "p")), 0xfff0000000000000ull);
  EXPECT_EQ(Bits32(ParseFillValue("0x7fc00001", DataType::kFloat32, "p")), 0x7fc00001u);
  EXPECT_EQ(Bits64(ParseFillValue("0x3FF0000000000000", DataType::kFloat64, "p")), 0x3ff0000000000000ull);
  EXPECT_EQ(Bits32(ParseFillValue(1.5, DataType::kFloat32, "p")), 0x3fc00000u);
  EXPECT_EQ(Bits64(ParseFillValue(-2, DataType::kFloat64, "p")), 0xc000000000000000ull);

  // Written forms: names for the canonical NaN and infinities, hex for other NaNs, numbers else.
  EXPECT_EQ(FillValueToJson(FillValueOf(std::numeric_limits<float>::quiet_NaN()), DataType::kFloat32), "NaN");
  EXPECT_EQ(FillValueToJson(ParseFillValue("0x7fc00001", DataType::kFloat32, "p"), DataType::kFloat32), "0x7fc00001");
  EXPECT_EQ(FillValueToJson(FillValueOf(-std::numeric_limits<double>::infinity()), DataType::kFloat64), "-Infinity");
  EXPECT_EQ(FillValueToJson(FillValueOf(0.1f), DataType::kFloat32).get<double>(), double(0.1f));
  // A float32 written as a double number parses back to the same bits.
  for (float f : {0.1f, -3.4028235e38f, 1e-45f, -0.0f}) {
    json j = FillValueToJson(FillValueOf(f), DataType::kFloat32);
    EXPECT_EQ(ParseFillValue(json::parse(j.dump()), DataType::kFloat32, "p"), FillValueOf(f)) << j.dump();
  }
}

TEST(StoreMetadata, IntegerAndBoolFillValues) {
  EXPECT_EQ(ParseFillValue(-128, DataType::kInt8, "p"), FillValueOf<int8_t>(-128));
  EXPECT_EQ(ParseFillValue(json(18446744073709551615ull), DataType::kUint64, "p"), FillValueOf(~uint64_t(0)));
  EXPECT_EQ(ParseFillValue(json(INT64_MIN), DataType::kInt64, "p"), FillValueOf<int64_t>(INT64_MIN));
  EXPECT_EQ(ParseFillValue(true, DataType::kBool, "p"), FillValueOf(true));
  EXPECT_EQ(FillValueToJson(FillValueOf(~uint64_t(0)), DataType::kUint64), json(18446744073709551615ull));
  EXPECT_THROW(ParseFillValue(128, DataType::kInt8, "p"), StoreError);
  EXPECT_THROW(ParseFillValue(-1, DataType::kUint16, "p"), StoreError);
  EXPECT_THROW(ParseFillValue(1.5, DataType::kInt32, "p"), StoreError);
  EXPECT_THROW(ParseFillValue("NaN", DataType::kInt32, "p"), StoreError);
  EXPECT_THROW(ParseFillValue(0, DataType::kBool, "p"), StoreError);
  EXPECT_THROW(ParseFillValue("nan", DataType::kFloat32, "p"), StoreError);
  EXPECT_THROW(ParseFillValue("0x123456789", DataType::kFloat32, "p"), StoreError);
  EXPECT_THROW(ParseFillValue("0xZZ", DataType::kFloat64, "p"), StoreError);
}

TEST(StoreMetadata, RejectionsNameTheKey) {
  auto with = [](const char* pointer, json value) {
    json doc = Simple();
    doc[json::json_pointer(pointer)] = value;
    return doc;
  };
  auto without = [](const char* key) {
    json doc = Simple();
    doc.erase(key);
    return doc;
  };
  EXPECT_NE(ParseError(without("shape")).find("\"shape\": missing"), std::string::npos);
  EXPECT_NE(ParseError(without("fill_value")).find("fill_value"), std::string::npos);
  EXPECT_NE(ParseError(with("/data_type", "float16")).find("unsupported data type \"float16\""), std::string::npos);
  EXPECT_NE(ParseError(with("/data_type", "complex64")).find("data_type"), std::string::npos);
  EXPECT_NE(ParseError(with("/zarr_format", 2)).find("zarr_format"), std::string::npos);
  EXPECT_NE(ParseError(with("/codecs/1/name", "bitround")).find("unsupported codec \"bitround\""), std::string::npos);
  EXPECT_NE(ParseError(with("/codecs/1/name", "bitround")).find("codecs[1].name"), std::string::npos);
  EXPECT_NE(ParseError(with("/codecs/1/configuration/level", "high")).find("codecs[1].configuration.level"),
            std::string::npos);
  EXPECT_NE(ParseError(with("/codecs", json::array())).find("array->bytes"), std::string::npos);
  EXPECT_NE(ParseError(with("/chunk_grid/name", "rectilinear")).find("chunk_grid.name"), std::string::npos);
  EXPECT_NE(ParseError(with("/chunk_grid/configuration/chunk_shape", {2, 0})).find("positive"), std::string::npos);
  EXPECT_NE(ParseError(with("/chunk_grid/configuration/chunk_shape", {2})).find("dimensions"), std::string::npos);
  EXPECT_NE(ParseError(with("/chunk_key_encoding/name", "v2")).find("chunk_key_encoding"), std::string::npos);
  EXPECT_NE(ParseError(with("/fill_value", "nope")).find("\"fill_value\""), std::string::npos);
  EXPECT_NE(ParseError(with("/dimension_names", {"x"})).find("dimension_names"), std::string::npos);
  EXPECT_NE(ParseError(with("/extra_key", 1)).find("\"extra_key\": unknown"), std::string::npos);
  EXPECT_NE(ParseError(with("/storage_transformers", {{{"name", "t"}}})).find("storage_transformers"),
            std::string::npos);
  // Extension objects that need not be understood are accepted.
  EXPECT_NO_THROW(ParseArrayMetadata(with("/my_ext", {{"must_understand", false}}), "x"));
}

TEST(StoreMetadata, ShardingAndBloscRules) {
  json doc = ZarrPythonSharded();
  doc["codecs"][0]["configuration"]["chunk_shape"] = {3};  // does not divide the shard of 4
  EXPECT_NE(ParseError(doc).find("must divide the shard shape"), std::string::npos);
  doc = ZarrPythonSharded();
  doc["codecs"][0]["configuration"]["index_codecs"] = json::parse(R"([{"name": "bytes"}, {"name": "zstd"}])");
  EXPECT_NE(ParseError(doc).find("index_codecs"), std::string::npos);
  doc = ZarrPythonSharded();
  doc["codecs"][0]["configuration"]["codecs"][1]["configuration"].erase("typesize");
  EXPECT_NE(ParseError(doc).find("typesize"), std::string::npos);
  doc = ZarrPythonSharded();
  doc["codecs"][0]["configuration"]["codecs"][1]["configuration"]["cname"] = "nosuch";
  EXPECT_NE(ParseError(doc).find("codecs[0].configuration.codecs[1].configuration.cname"), std::string::npos);
  doc = ZarrPythonSharded();
  doc["codecs"][0]["configuration"]["index_location"] = "start";
  EXPECT_FALSE(ParseArrayMetadata(doc, "x").codecs[0].index_at_end);
  doc["codecs"][0]["configuration"]["index_location"] = "middle";
  EXPECT_NE(ParseError(doc).find("index_location"), std::string::npos);
  doc = Simple();
  doc["codecs"] = json::parse(R"([{"name": "zstd"}, {"name": "bytes"}])");
  EXPECT_NE(ParseError(doc).find("codecs[0]\": \"zstd\" comes where the array->bytes codec"), std::string::npos);
}

TEST(StoreMetadata, TransposeRules) {
  json doc = Simple();
  doc["codecs"] = json::parse(R"([{"name": "transpose", "configuration": {"order": [1, 0]}}, {"name": "bytes"}])");
  ArrayMetadata m = ParseArrayMetadata(doc, "x");
  ASSERT_EQ(m.codecs.size(), 2u);
  EXPECT_EQ(m.codecs[0].kind, CodecKind::kTranspose);
  EXPECT_EQ(m.codecs[0].order, (std::vector<int64_t>{1, 0}));
  EXPECT_FALSE(m.IsSharded());
  // written back as the spec spells it
  EXPECT_EQ(ArrayMetadataToJson(m)["codecs"][0], json::parse(R"({"name": "transpose", "configuration": {"order": [1, 0]}})"));
  doc["codecs"][0]["configuration"]["order"] = {1, 1};
  EXPECT_NE(ParseError(doc).find("codecs[0].configuration.order\": [1,1] is not a permutation"), std::string::npos);
  doc["codecs"][0]["configuration"]["order"] = "F";
  EXPECT_NE(ParseError(doc).find("codecs[0].configuration.order"), std::string::npos);
  doc["codecs"][0]["configuration"]["order"] = {2, 0, 1};  // a 2-d chunk
  EXPECT_NE(ParseError(doc).find("permutes 3 dimensions, the chunk has 2"), std::string::npos);
  doc["codecs"] = json::parse(R"([{"name": "transpose", "configuration": {"order": [1, 0]}}])");
  EXPECT_NE(ParseError(doc).find("array->bytes"), std::string::npos);
  doc = ZarrPythonSharded();
  doc["codecs"].insert(doc["codecs"].begin(), json::parse(R"({"name": "transpose", "configuration": {"order": [0]}})"));
  EXPECT_NE(ParseError(doc).find("not before sharding_indexed"), std::string::npos);
}

TEST(StoreMetadata, Groups) {
  GroupMetadata g = ParseGroupMetadata(
      json::parse(R"({"zarr_format": 3, "node_type": "group", "attributes": {"a": 1}, "consolidated_metadata": null})"),
      "g.json");
  EXPECT_EQ(g.attributes["a"], 1);
  EXPECT_EQ(GroupMetadataToJson(g)["node_type"], "group");
  EXPECT_THROW(ParseGroupMetadata(json::parse(R"({"zarr_format": 3, "node_type": "array"})"), "g"), StoreError);
  EXPECT_THROW(ParseGroupMetadata(json::parse(R"({"zarr_format": 3, "node_type": "group", "x": 1})"), "g"), StoreError);
  EXPECT_THROW(NodeTypeOf(json::parse("[1]"), "g"), StoreError);
}

}  // namespace
}  // namespace s2r
