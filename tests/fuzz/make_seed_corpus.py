#!/usr/bin/env python3
"""Seed inputs for the store fuzzers, written by zarr-python (the reference implementation).

    .venv/bin/python tests/fuzz/make_seed_corpus.py OUT_DIR

writes OUT_DIR/metadata/* (zarr.json documents zarr-python writes for arrays and groups over the
data types and codecs s2r reads, some it refuses, and hand-made malformed ones) and OUT_DIR/chunk/*
(shards and chunks zarr-python writes for the configurations of fuzz_chunk.cc, each prefixed by
the configuration's index byte). The configurations are read out of fuzz_chunk.cc itself, so the
two cannot drift apart. run_fuzz.sh --update-corpus runs this, adds the seeds s2r's own encoder
writes (replay --write-seeds), fuzzes, and merges everything into tests/fuzz/corpus/.
"""
import json
import os
import re
import shutil
import sys
import tempfile

import numpy as np
import zarr
from zarr.codecs import (BloscCodec, BytesCodec, Crc32cCodec, GzipCodec, ShardingCodec,
                         ZstdCodec)

HERE = os.path.dirname(os.path.abspath(__file__))


def chunk_configs():
    """(name, partial zarr.json) in fuzz_chunk.cc's kConfigs order."""
    src = open(os.path.join(HERE, "fuzz_chunk.cc")).read()
    table = src[src.index("kConfigs[][2] = {"):src.index("kNumConfigs")]
    return [(name, json.loads(doc)) for name, doc in re.findall(r'\{"(\w+)",\s*R"\((.*?)\)"\}', table, re.S)]


def full_doc(partial):
    doc = dict(partial)
    doc.update(zarr_format=3, node_type="array",
               chunk_grid={"name": "regular", "configuration": {"chunk_shape": partial["shape"]}},
               chunk_key_encoding={"name": "default"})
    return doc


def chunk_values(dtype, shape, kind, fill):
    """Distinct values ("values") or the first half replaced by the fill value ("half")."""
    n = int(np.prod(shape, dtype=np.int64))
    k = np.arange(n)
    if np.dtype(dtype).kind == "f":
        v = (np.sin(k * 0.7) * 100.0).astype(dtype)
    else:
        v = ((k * 53 + 5) % 120).astype(dtype)
    if kind == "half":
        v[: n // 2] = fill
    return v.reshape(shape)


def write_chunks(out, tmp):
    n = 0
    for index, (name, partial) in enumerate(chunk_configs()):
        doc = full_doc(partial)
        path = os.path.join(tmp, "chunk", name)
        os.makedirs(path)
        with open(os.path.join(path, "zarr.json"), "w") as f:
            json.dump(doc, f)
        try:
            arr = zarr.open_array(path, mode="r+")
            for kind in ("values", "half"):
                data = chunk_values(arr.dtype, arr.shape, kind, arr.fill_value)
                arr[...] = data
                key = "c" + "".join("/0" for _ in arr.shape)
                with open(os.path.join(path, key), "rb") as f:
                    encoded = f.read()
                with open(os.path.join(out, f"zarr-python-{name}-{kind}"), "wb") as f:
                    f.write(bytes([index]) + encoded)
                n += 1
        except Exception as e:  # zarr-python may not write every configuration
            print(f"make_seed_corpus: zarr-python cannot write {name}: {type(e).__name__}: {e}")
    return n


def zarr_python_metadata(tmp):
    """zarr.json documents zarr-python writes."""
    root = os.path.join(tmp, "meta")
    g = zarr.open_group(root, mode="w", attributes={"experiment": "fuzz", "n": [1, 2.5, None]})
    blosc = BloscCodec(cname="zstd", clevel=5, shuffle="bitshuffle", typesize=8)
    made = [
        g.create_array("f32", shape=(100, 6), chunks=(10, 6), dtype="float32", fill_value=np.nan,
                       dimension_names=("step", None), attributes={"unit": "m/s"}),
        g.create_array("f64_inf", shape=(7,), chunks=(3,), dtype="float64", fill_value=-np.inf,
                       compressors=GzipCodec(level=5), serializer=BytesCodec(endian="big")),
        g.create_array("i16_zstd", shape=(4, 5, 6), chunks=(2, 5, 3), dtype="int16", fill_value=-7,
                       compressors=[ZstdCodec(level=3, checksum=True), Crc32cCodec()]),
        g.create_array("u64_blosc", shape=(0,), chunks=(4,), dtype="uint64", fill_value=2**64 - 1,
                       compressors=blosc),
        g.create_array("bool_scalar", shape=(), dtype="bool", fill_value=True, compressors=None),
        g.create_array("u8_sharded", shape=(1000, 3), chunks=(10, 3), shards=(100, 3), dtype="uint8",
                       fill_value=255),
        g.create_array("i32_nested", shape=(9, 9), chunks=(9, 9), dtype="int32", fill_value=-2**31,
                       serializer=ShardingCodec(chunk_shape=(3, 9), codecs=[
                           ShardingCodec(chunk_shape=(1, 9), codecs=[BytesCodec(endian="big")])]),
                       compressors=None),
        g.create_array("f32_index_start", shape=(64, 4, 4), chunks=(16, 4, 4), dtype="float32",
                       fill_value=0.1, serializer=ShardingCodec(chunk_shape=(4, 2, 4), codecs=[
                           BytesCodec(), ZstdCodec(level=1)], index_location="start"),
                       compressors=[Crc32cCodec()]),
        g.create_array("f64_dot_keys", shape=(5, 5), chunks=(2, 2), dtype="float64", fill_value=1e300,
                       chunk_key_encoding={"name": "default", "separator": "."}),
        # refused by s2r: order F (transpose codec), strings, float16, complex
        g.create_array("f32_order_f", shape=(4, 4), chunks=(2, 2), dtype="float32", order="F",
                       config={"order": "F"}),
        g.create_array("strings", shape=(3,), chunks=(3,), dtype=str),
        g.create_array("f16", shape=(3,), chunks=(3,), dtype="float16"),
        g.create_array("c64", shape=(3,), chunks=(3,), dtype="complex64"),
    ]
    g.create_group("sub", attributes={"note": "nested group"})
    zarr.consolidate_metadata(root)
    docs = {"group_consolidated.json": open(os.path.join(root, "zarr.json")).read(),
            "group_sub.json": open(os.path.join(root, "sub", "zarr.json")).read()}
    for arr in made:
        name = arr.path.split("/")[-1]
        docs[f"array_{name}.json"] = open(os.path.join(root, name, "zarr.json")).read()
    return docs


def malformed_metadata():
    """Hand-made documents at the edges of what the parser must refuse (or accept)."""
    base = {"zarr_format": 3, "node_type": "array", "shape": [4, 4], "data_type": "float32",
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2, 2]}},
            "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
            "fill_value": 0, "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]}

    def variant(**changes):
        d = json.loads(json.dumps(base))
        for k, v in changes.items():
            if v is None:
                d.pop(k, None)
            else:
                d[k] = v
        return json.dumps(d)

    sharding = {"name": "sharding_indexed", "configuration": {
        "chunk_shape": [1, 1], "codecs": [{"name": "bytes"}], "index_codecs": [{"name": "bytes"}]}}
    big = 2**62
    return {
        "bad_truncated.json": variant()[:-7],
        "bad_not_object.json": "[3, \"array\"]",
        "bad_zarr_format_2.json": variant(zarr_format=2),
        "bad_zarr_format_string.json": variant(zarr_format="3"),
        "bad_node_type.json": variant(node_type="dataset"),
        "bad_unknown_key.json": variant(extra=1),
        "ok_extension_key.json": variant(extra={"must_understand": False, "x": 1}),
        "bad_negative_shape.json": variant(shape=[-1, 4]),
        "bad_zero_chunk.json": variant(chunk_grid={"name": "regular", "configuration": {"chunk_shape": [0, 2]}}),
        "bad_rank_mismatch.json": variant(shape=[4]),
        "bad_huge_chunk.json": variant(shape=[big, big],
                                       chunk_grid={"name": "regular", "configuration": {"chunk_shape": [big, big]}}),
        "bad_uint64_shape.json": variant(shape=[2**64 - 1, 1]),
        "bad_float_shape.json": variant(shape=[4.0, 4]),
        "bad_dtype.json": variant(data_type="float16"),
        "bad_dtype_object.json": variant(data_type={"name": "numpy.datetime64", "configuration": {"unit": "s"}}),
        "bad_fill_range.json": variant(data_type="uint8", fill_value=256),
        "bad_fill_hex.json": variant(fill_value="0x7fc000000"),
        "ok_fill_hex_nan.json": variant(fill_value="0x7fc00001"),
        "bad_fill_string.json": variant(fill_value="nan"),
        "bad_no_codecs.json": variant(codecs=[]),
        "bad_codec_order.json": variant(codecs=[{"name": "zstd"}, {"name": "bytes"}]),
        "bad_two_array_bytes.json": variant(codecs=[{"name": "bytes"}, sharding]),
        "bad_blosc_cname.json": variant(codecs=[{"name": "bytes"}, {"name": "blosc", "configuration": {
            "cname": "snappyx", "clevel": 5, "shuffle": "shuffle", "typesize": 4}}]),
        "bad_blosc_typesize.json": variant(codecs=[{"name": "bytes"}, {"name": "blosc", "configuration": {
            "cname": "lz4", "clevel": 5, "shuffle": "shuffle"}}]),
        "bad_gzip_level.json": variant(codecs=[{"name": "bytes"}, {"name": "gzip", "configuration": {"level": 10}}]),
        "bad_shard_divide.json": variant(codecs=[{"name": "sharding_indexed", "configuration": {
            "chunk_shape": [3, 2], "codecs": [{"name": "bytes"}]}}]),
        "bad_shard_index_zstd.json": variant(codecs=[{"name": "sharding_indexed", "configuration": {
            "chunk_shape": [1, 2], "index_codecs": [{"name": "bytes"}, {"name": "zstd"}]}}]),
        "ok_shard_minimal.json": variant(codecs=[sharding, {"name": "crc32c"}]),
        "bad_separator.json": variant(chunk_key_encoding={"name": "default", "configuration": {"separator": "|"}}),
        "bad_v2_keys.json": variant(chunk_key_encoding={"name": "v2"}),
        "bad_dimension_names.json": variant(dimension_names=["a"]),
        "bad_storage_transformers.json": variant(storage_transformers=[{"name": "x"}]),
        "bad_number_overflow.json": variant()[:-1] + ', "attributes": {"x": 1e400}}',
        "bad_utf8.json": variant()[:-1].encode() + b', "attributes": {"x": "\xff\xfe"}}',
        "ok_blosc_noshuffle.json": variant(data_type="int8", fill_value=-128, codecs=[
            {"name": "bytes"}, {"name": "blosc", "configuration": {
                "cname": "blosclz", "clevel": 1, "shuffle": "noshuffle", "blocksize": 0}}]),
        "ok_int64_fill.json": variant(data_type="int64", fill_value=-2**63),
        "bad_bool_fill.json": variant(data_type="bool", fill_value=0),
        "bad_float_fill_bool.json": variant(fill_value=True),
        "ok_float32_fill_overflow.json": variant(fill_value=1e300),
        "bad_dimension_name_number.json": variant(dimension_names=["a", 1]),
        "bad_group_attributes.json": json.dumps({"zarr_format": 3, "node_type": "group", "attributes": [1]}),
        "ok_group_minimal.json": json.dumps({"zarr_format": 3, "node_type": "group"}),
    }


def write_npz(out):
    """NumPy's own .npz files for the policy network reader (host/sweep/npz.h): np.savez and
    np.savez_compressed, float32/float64/int/bool/unicode arrays, C and Fortran order, 0-d arrays."""
    import io
    rng = np.random.default_rng(1)
    arrays = {"layer0.weight": rng.normal(size=(3, 4)).astype(np.float32),
              "layer0.bias": np.arange(3, dtype=np.float64),
              "f": np.asfortranarray(rng.normal(size=(2, 3))),
              "i": np.array([-1, 2, 3], np.int16),
              "u": np.array([7], np.uint8),
              "b": np.array([True, False]),
              "activation": np.array("tanh"),
              "inputs": np.array(["obs", "joints"]),
              "clip": np.float32(3)}
    n = 0
    for name, save in (("savez", np.savez), ("savez_compressed", np.savez_compressed)):
        buf = io.BytesIO()
        save(buf, **arrays)
        with open(os.path.join(out, f"numpy-{name}.npz"), "wb") as f:
            f.write(buf.getvalue())
        buf = io.BytesIO()
        save(buf, x=np.zeros((0, 5), np.float32))
        with open(os.path.join(out, f"numpy-{name}-empty.npz"), "wb") as f:
            f.write(buf.getvalue())
        n += 2
    return n


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    meta_dir, chunk_dir = os.path.join(out, "metadata"), os.path.join(out, "chunk")
    os.makedirs(meta_dir, exist_ok=True)
    os.makedirs(chunk_dir, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="s2r_seeds_")
    try:
        docs = {"zarr-python-" + k: v for k, v in zarr_python_metadata(tmp).items()}
        docs.update(malformed_metadata())
        for name, text in docs.items():
            with open(os.path.join(meta_dir, name), "wb") as f:
                f.write(text if isinstance(text, bytes) else text.encode())
        n_chunks = write_chunks(chunk_dir, tmp)
        npz_dir = os.path.join(out, "npz")
        os.makedirs(npz_dir, exist_ok=True)
        n_npz = write_npz(npz_dir)
    finally:
        shutil.rmtree(tmp)
    print(f"make_seed_corpus: {len(docs)} metadata documents, {n_chunks} chunks, {n_npz} .npz files under {out}")


if __name__ == "__main__":
    main()
