"""Zarr v3 interop: s2r's C++ store against zarr-python 3 and tensorstore, bit for bit.

Two directions:
  (a) C++ writes, Python reads. `s2r_store_fixture DIR` (built with the test suite; path from
      $S2R_STORE_FIXTURE, default <repo>/build/s2r_store_fixture) writes sharded and unsharded
      arrays over every codec s2r supports. zarr-python and tensorstore each read every array, and
      the values must equal, byte for byte, the numpy arrays recomputed here from the same
      formulas (FIXTURE below mirrors tests/host/store_fixture.cc).
  (b) Python writes, C++ reads. zarr-python (and tensorstore, once) write stores with each codec,
      sharded and not, partly written so that missing chunks and missing inner chunks occur;
      `s2r inspect STORE --arrays --json` must report the SHA-256 that hashlib computes over the
      numpy array as C-order little-endian bytes.
The module skips when numpy, zarr (>= 3) or tensorstore is missing, or a binary is not built.
"""
import hashlib
import json
import os
import subprocess

import pytest

np = pytest.importorskip("numpy")
zarr = pytest.importorskip("zarr", exc_type=ImportError)
ts = pytest.importorskip("tensorstore", exc_type=ImportError)
if int(zarr.__version__.split(".")[0]) < 3:
    pytest.skip(f"zarr {zarr.__version__} is not zarr-python 3", allow_module_level=True)
from zarr.codecs import (BloscCodec, BytesCodec, Crc32cCodec, GzipCodec,  # noqa: E402
                         ShardingCodec, TransposeCodec, ZstdCodec)

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
S2R_BIN = os.environ.get("S2R_BIN", os.path.join(REPO, "build", "s2r"))
FIXTURE_BIN = os.environ.get("S2R_STORE_FIXTURE", os.path.join(REPO, "build", "s2r_store_fixture"))


def executable(path):
    return os.path.isfile(path) and os.access(path, os.X_OK)


def le_bytes(arr):
    """The array as C-order little-endian bytes (what `s2r inspect` hashes)."""
    arr = np.asarray(arr)
    return np.ascontiguousarray(arr.astype(arr.dtype.newbyteorder("<"), copy=False)).tobytes()


def sha256(arr):
    return hashlib.sha256(le_bytes(arr)).hexdigest()


def inspect_json(store):
    out = subprocess.run([S2R_BIN, "inspect", str(store), "--arrays", "--json"], capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr + out.stdout
    return {a["path"]: a for a in json.loads(out.stdout)["arrays"]}


# --- (a) C++ writes, zarr-python and tensorstore read ---------------------------------------------

def made(dtype, shape, values, mask=None, fill=None):
    """values(k) over the flat C-order index k, with `fill` where mask(i0, i1, ...) holds."""
    k = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
    out = np.asarray(values(k)).astype(dtype)
    if mask is not None:
        out[mask(*np.indices(shape))] = fill
    return out


F32 = np.float32
# name -> (expected array, fill value); keep in step with tests/host/store_fixture.cc.
FIXTURE = {
    "f32_zstd": (made(F32, (13, 17), lambda k: k.astype(F32) * F32(0.25) - F32(7.0),
                      lambda i, j: (i < 5) & (j < 6), np.nan), np.nan),
    "i64_blosc_lz4_shuffle": (made(np.int64, (100,), lambda k: k * k * 1000003 - 5000000000), -1),
    "u8_blosc_zstd_bitshuffle": (made(np.uint8, (7, 9, 11), lambda k: (k * 7) % 256), 0),
    "bool_gzip": (made(np.bool_, (33,), lambda k: k % 3 == 0), False),
    "f64_crc32c_bigendian": (made(np.float64, (6, 5), lambda k: k / 7.0 - 2.5), -np.inf),
    "f32_transpose_zstd": (made(F32, (6, 7, 5), lambda k: (k % 5).astype(F32) - k.astype(F32) * F32(0.125)), 0.0),
    "scalar_i32": (np.array(42, dtype=np.int32), 0),
    "sharded/f32_blosc_lz4": (made(F32, (20, 35), lambda k: k.astype(F32) * F32(0.5),
                                   lambda i, j: (i < 5) & (j < 8), np.nan), np.nan),
    "sharded/u16_gzip_crc32c": (made(np.uint16, (9, 9), lambda k: (k * 37) % 1000), 7),
    "sharded/f32_transpose_blosc_lz4": (made(F32, (25, 3, 13),
                                             lambda k: np.where(k % 13 < 4, F32(1.0), k.astype(F32) * F32(0.25)),
                                             lambda i, j, l: (i >= 10) & (i < 15), np.nan), np.nan),
    "sharded/bool_zstd": (made(np.bool_, (40,), lambda k: k % 5 == 1), False),
    "sharded/i64_blosc_zstd_bitshuffle": (made(np.int64, (50,), lambda k: -k * 123456789,
                                               lambda i: (i >= 20) & (i < 25), 0), 0),
    "misc/int8": (made(np.int8, (10,), lambda k: k - 5), 0),
    "misc/int16": (made(np.int16, (10,), lambda k: k * 1000 - 5000), 0),
    "misc/int32": (made(np.int32, (10,), lambda k: k * 100000 - 500000), 0),
    "misc/uint32": (made(np.uint32, (10,), lambda k: k * 400000000), 0),
    "misc/uint64": (made(np.uint64, (10,), lambda k: k.astype(np.uint64) * np.uint64(1 << 60)
                         + k.astype(np.uint64)), 0),
}


@pytest.fixture(scope="module")
def cxx_store(tmp_path_factory):
    if not executable(FIXTURE_BIN):
        pytest.skip(f"s2r_store_fixture not found at {FIXTURE_BIN} (build the tests, or set "
                    "S2R_STORE_FIXTURE)")
    root = tmp_path_factory.mktemp("cxx") / "store"
    subprocess.run([FIXTURE_BIN, str(root)], check=True, timeout=120)
    return root


def assert_bit_equal(actual, expected, what):
    actual = np.asarray(actual)
    assert actual.dtype == expected.dtype, f"{what}: dtype {actual.dtype} != {expected.dtype}"
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != {expected.shape}"
    if actual.tobytes() != expected.tobytes():
        diff = np.flatnonzero(actual.reshape(-1).view(np.uint8) != expected.reshape(-1).view(np.uint8))
        raise AssertionError(f"{what}: {diff.size} bytes differ, first at byte {diff[0]}")


@pytest.mark.parametrize("name", sorted(FIXTURE))
def test_cxx_store_reads_in_zarr_python(cxx_store, name):
    expected, fill = FIXTURE[name]
    arr = zarr.open_array(store=str(cxx_store / name), mode="r")
    assert_bit_equal(arr[...], expected, f"zarr-python {name}")
    got_fill = np.asarray(arr.fill_value, dtype=expected.dtype)
    assert got_fill.tobytes() == np.asarray(fill, dtype=expected.dtype).tobytes()


@pytest.mark.parametrize("name", sorted(FIXTURE))
def test_cxx_store_reads_in_tensorstore(cxx_store, name):
    expected, _ = FIXTURE[name]
    spec = {"driver": "zarr3", "kvstore": {"driver": "file", "path": str(cxx_store / name)}}
    arr = ts.open(spec, read=True).result()
    assert_bit_equal(arr.read().result(), expected, f"tensorstore {name}")


def test_cxx_store_metadata_in_zarr_python(cxx_store):
    root = zarr.open_group(store=str(cxx_store), mode="r")
    assert root.attrs["s2r_fixture"] == 1
    assert sorted(root.group_keys()) == ["misc", "sharded"]
    arr = root["f32_zstd"]
    assert arr.metadata.dimension_names == ("row", "col")
    assert arr.attrs["units"] == "m"
    assert arr.shards is None and root["sharded/f32_blosc_lz4"].shards == (10, 16)
    assert root["sharded/f32_blosc_lz4"].chunks == (5, 8)


def test_cxx_store_hashes_match_s2r_inspect(cxx_store):
    if not executable(S2R_BIN):
        pytest.skip(f"s2r binary not found at {S2R_BIN}")
    report = inspect_json(cxx_store)
    assert sorted(report) == sorted(FIXTURE)
    for name, (expected, _) in FIXTURE.items():
        assert report[name]["sha256"] == sha256(expected), name
        assert report[name]["dtype"] == expected.dtype.name
        assert tuple(report[name]["shape"]) == expected.shape


# --- (b) zarr-python writes, s2r inspect reads ---------------------------------------------------

def blosc(cname, shuffle, typesize=None):
    return BloscCodec(cname=cname, clevel=5, shuffle=shuffle, typesize=typesize)


# name -> (dtype, shape, chunks, shards, create_array keyword arguments, fill value)
PYTHON_CASES = {
    "default_f32_nan": ("float32", (11, 13), (4, 5), None, {}, np.nan),
    "zstd_checksum_f64": ("float64", (9, 7), (4, 4), None,
                          {"compressors": [ZstdCodec(level=5, checksum=True)]}, "Infinity"),
    "blosc_lz4_shuffle_i64": ("int64", (100,), (16,), None,
                              {"compressors": [blosc("lz4", "shuffle", 8)]}, -7),
    "blosc_zstd_bitshuffle_u8": ("uint8", (5, 6, 7), (2, 3, 4), None,
                                 {"compressors": [blosc("zstd", "bitshuffle", 1)]}, 0),
    "blosc_blosclz_noshuffle_i32": ("int32", (50,), (8,), None,
                                    {"compressors": [blosc("blosclz", "noshuffle")]}, 5),
    "blosc_lz4hc_shuffle_u16": ("uint16", (30, 3), (7, 3), None,
                                {"compressors": [blosc("lz4hc", "shuffle", 2)]}, 0),
    "gzip_i16": ("int16", (40,), (6,), None, {"compressors": [GzipCodec(level=7)]}, 0),
    "crc32c_only_u32": ("uint32", (20,), (6,), None, {"compressors": [Crc32cCodec()]}, 0),
    "bigendian_f64": ("float64", (10, 10), (3, 4), None,
                      {"serializer": BytesCodec(endian="big"), "compressors": None}, 0.5),
    "bool_zstd": ("bool", (37,), (8,), None, {}, True),
    "int8_uncompressed": ("int8", (17,), (5,), None, {"compressors": None}, -3),
    "uint64_gzip": ("uint64", (12,), (5,), None, {"compressors": [GzipCodec(level=1)]}, 0),
    "scalar_f64": ("float64", (), (), None, {}, 1.5),
    "sharded_f32": ("float32", (20, 30), (5, 4), (10, 8), {}, np.nan),
    "sharded_blosc_i64": ("int64", (64,), (4,), (16,),
                          {"compressors": [blosc("lz4", "shuffle", 8)]}, 0),
    "sharded_gzip_crc32c_u8": ("uint8", (9, 10, 11), (3, 5, 2), (3, 10, 4),
                               {"compressors": [GzipCodec(level=3), Crc32cCodec()]}, 9),
    "sharded_bool": ("bool", (50,), (5,), (25,), {}, False),
    "transpose_f32": ("float32", (9, 4, 6), (4, 4, 3), None,
                      {"filters": [TransposeCodec(order=(2, 0, 1))], "compressors": [ZstdCodec(level=3)]}, 0.0),
    "sharded_transpose_i16": ("int16", (12, 5), (3, 5), (6, 5),
                              {"filters": [TransposeCodec(order=(1, 0))], "compressors": [blosc("lz4", "shuffle", 2)]}, 0),
    "sharded_index_start_i32": ("int32", (10, 12), (5, 6), None,
                                {"serializer": ShardingCodec(chunk_shape=(5, 3), codecs=[
                                    BytesCodec(), ZstdCodec(level=1)], index_location="start"),
                                 "compressors": None}, 3),
}


def python_data(dtype, shape, seed):
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.random(shape) < 0.3
    if dtype.startswith("float"):
        data = rng.normal(size=shape).astype(dtype)
        if data.size:
            data.reshape(-1)[::7] = np.inf  # a few non-finite values as data, not fill
        return data
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)


def write_python_store(root):
    """Writes every PYTHON_CASES array, leaving some regions unwritten; returns the contents."""
    expected = {}
    for seed, (name, (dtype, shape, chunks, shards, kwargs, fill)) in enumerate(sorted(PYTHON_CASES.items())):
        arr = zarr.create_array(store=str(root), name=name, shape=shape, dtype=dtype, chunks=chunks,
                                shards=shards, fill_value=fill, **kwargs)
        data = python_data(dtype, shape, seed)
        if len(shape) == 0:
            arr[()] = data
            full = data
        else:
            # Write only the leading half along the first axis: the rest stays fill (chunk files
            # and inner chunks missing).
            half = max(1, shape[0] // 2 + 1)
            arr[:half] = data[:half]
            full = np.full(shape, np.asarray(arr.fill_value, dtype=dtype), dtype=dtype)
            full[:half] = data[:half]
        assert_bit_equal(arr[...], np.asarray(full, dtype=dtype), f"zarr-python self-check {name}")
        expected[name] = np.asarray(full, dtype=dtype)
    return expected


@pytest.fixture(scope="module")
def python_store(tmp_path_factory):
    if not executable(S2R_BIN):
        pytest.skip(f"s2r binary not found at {S2R_BIN} (build it, or set S2R_BIN)")
    root = tmp_path_factory.mktemp("py") / "store"
    zarr.open_group(store=str(root), mode="w", attributes={"writer": "zarr-python"})
    return root, write_python_store(root)


@pytest.fixture(scope="module")
def python_report(python_store):
    return inspect_json(python_store[0])


@pytest.mark.parametrize("name", sorted(PYTHON_CASES))
def test_zarr_python_store_hashes_in_s2r(python_store, python_report, name):
    expected = python_store[1][name]
    entry = python_report[name]
    assert "error" not in entry, entry.get("error")
    assert entry["dtype"] == expected.dtype.name
    assert tuple(entry["shape"]) == expected.shape
    assert entry["sha256"] == sha256(expected)
    dtype, shape, chunks, shards, kwargs, _ = PYTHON_CASES[name]
    if shards is not None or "serializer" in kwargs and isinstance(kwargs["serializer"], ShardingCodec):
        assert entry["codecs"][0].startswith("sharding_indexed(")


def test_tensorstore_sharded_store_hashes_in_s2r(tmp_path):
    if not executable(S2R_BIN):
        pytest.skip(f"s2r binary not found at {S2R_BIN}")
    data = python_data("float32", (24, 10), 99)
    spec = {
        "driver": "zarr3",
        "kvstore": {"driver": "file", "path": str(tmp_path / "ts" / "a")},
        "metadata": {
            "shape": [24, 10], "data_type": "float32", "fill_value": "NaN",
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [8, 10]}},
            "codecs": [{"name": "sharding_indexed", "configuration": {
                "chunk_shape": [4, 5],
                "codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                           {"name": "blosc", "configuration": {"cname": "zstd", "clevel": 3,
                                                               "shuffle": "bitshuffle", "typesize": 4}}],
                "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                                 {"name": "crc32c"}]}}],
        },
        "create": True,
    }
    arr = ts.open(spec).result()
    arr[:12].write(data[:12]).result()
    full = np.full(data.shape, np.nan, dtype=np.float32)
    full[:12] = data[:12]
    report = inspect_json(tmp_path / "ts")
    assert report["a"]["sha256"] == sha256(full)


def test_inspect_reports_corrupt_chunk_with_its_path(tmp_path):
    if not executable(S2R_BIN):
        pytest.skip(f"s2r binary not found at {S2R_BIN}")
    arr = zarr.create_array(store=str(tmp_path / "s"), name="x", shape=(8,), chunks=(4,), dtype="int32",
                            compressors=[Crc32cCodec()])
    arr[:] = np.arange(8, dtype=np.int32)
    chunk = tmp_path / "s" / "x" / "c" / "1"
    raw = bytearray(chunk.read_bytes())
    raw[0] ^= 0xFF
    chunk.write_bytes(bytes(raw))
    out = subprocess.run([S2R_BIN, "inspect", str(tmp_path / "s"), "--arrays", "--json"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 1
    entry = {a["path"]: a for a in json.loads(out.stdout)["arrays"]}["x"]
    assert str(chunk) in entry["error"] and "crc32c" in entry["error"]
