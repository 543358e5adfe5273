"""Write throughput of zarr-python 3 and tensorstore on the data s2r_store_bench writes.

    store_write_bench.py --data FILE --dir DIR [--repeats 3] [--config a,b,c]
                         [--writer zarr_python,zarr_python_tuned,tensorstore,tensorstore_shards] [--keep]
                         [--tuned-from SWEEP.jsonl]
    store_write_bench.py --sweep --data FILE --dir DIR [--config a,b,c]
    store_write_bench.py --verify STORE... --data FILE     (decode each store with zarr-python, compare)
    store_write_bench.py --versions
    store_write_bench.py --fsync-probe DIR   (latency of small durable writes on DIR's disk, now)

FILE is `s2r_store_bench --dump-data FILE`: rows x 26 float32, little-endian, C order. It is read
into memory before any timing. The arrays and codecs are those of bench/store_write_bench.cc:

    a  sharding_indexed [65536, 26] of inner [4096, 26]: bytes + blosc(lz4, 5, shuffle, 4) + crc32c
    b  sharding_indexed [65536, 26] of inner [4096, 26]: bytes + zstd(3) + crc32c
    c  chunks [65536, 26]: bytes + blosc(lz4, 5, shuffle, 4)

(shard index: bytes little-endian + crc32c, at the end; fill 0). Writers:

    zarr_python         zarr.create_array + arr[...] = data, zarr's default config
    zarr_python_tuned   the same with the fastest (async.concurrency, threading.max_workers) of a
                        small sweep (--sweep: one write per setting and config, JSON lines;
                        --tuned-from reads them back; without it the sweep runs first, here)
    tensorstore         ts.open(zarr3 spec, create) + one write of the whole array, default context
    tensorstore_shards  the same, the array written as concurrent shard-sized writes inside one
                        transaction, committed at the end

Timing: create + write + durable. tensorstore's file kvstore fsyncs every file it writes
(context file_io_sync, default true); zarr-python's LocalStore does not fsync, so its time
includes an fsync pass over every file and directory of the store after the write (the time
without it is reported as seconds_nosync). Each run writes into a fresh directory; one JSON line
per (writer, config) with the median and best of the repeats, fields as s2r_store_bench's.
"""

import argparse
import asyncio
import importlib.metadata
import json
import os
import shutil
import statistics
import sys
import tempfile
import time

import numpy as np

COLS = 26
SHARD_ROWS = 65536
INNER_ROWS = 4096
MB = 1e6
CONFIG_NAMES = {"a": "a_shard_blosc_lz4", "b": "b_shard_zstd3", "c": "c_chunk_blosc_lz4"}


# --- codecs, as JSON (tensorstore) and as zarr-python objects ---------------------------------------

def blosc_json():
    return {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5, "shuffle": "shuffle",
                                                "typesize": 4, "blocksize": 0}}


def bytes_json():
    return {"name": "bytes", "configuration": {"endian": "little"}}


def codecs_json(key):
    if key == "c":
        return [bytes_json(), blosc_json()]
    inner = blosc_json() if key == "a" else {"name": "zstd", "configuration": {"level": 3, "checksum": False}}
    return [{"name": "sharding_indexed", "configuration": {
        "chunk_shape": [INNER_ROWS, COLS],
        "codecs": [bytes_json(), inner, {"name": "crc32c"}],
        "index_codecs": [bytes_json(), {"name": "crc32c"}],
        "index_location": "end"}}]


def zarr_create(path, key, rows):
    import zarr
    from zarr.codecs import BloscCodec, BytesCodec, Crc32cCodec, ZstdCodec
    from zarr.storage import LocalStore

    blosc = BloscCodec(cname="lz4", clevel=5, shuffle="shuffle", typesize=4)
    if key == "c":
        kw = dict(chunks=(SHARD_ROWS, COLS), compressors=[blosc])
    else:
        inner = blosc if key == "a" else ZstdCodec(level=3, checksum=False)
        kw = dict(chunks=(INNER_ROWS, COLS), shards=(SHARD_ROWS, COLS), compressors=[inner, Crc32cCodec()])
    return zarr.create_array(store=LocalStore(path), shape=(rows, COLS), dtype="float32", fill_value=0,
                             serializer=BytesCodec(endian="little"), **kw)


def ts_spec(path, key, rows):
    return {
        "driver": "zarr3",
        "kvstore": {"driver": "file", "path": path},
        "metadata": {
            "shape": [rows, COLS],
            "data_type": "float32",
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [SHARD_ROWS, COLS]}},
            "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
            "fill_value": 0,
            "codecs": codecs_json(key),
        },
        "create": True,
        "delete_existing": True,
    }


# --- measuring ------------------------------------------------------------------------------------

def fsync_tree(root):
    """fsync every file, then every directory (deepest first), of the store."""
    dirs = []
    for d, _, files in os.walk(root):
        dirs.append(d)
        for f in files:
            fd = os.open(os.path.join(d, f), os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
    for d in reversed(dirs):
        fd = os.open(d, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def disk_use(root):
    size = blocks = files = 0
    for d, _, names in os.walk(root):
        blocks += os.lstat(d).st_blocks * 512
        for f in names:
            st = os.lstat(os.path.join(d, f))
            size += st.st_size
            blocks += st.st_blocks * 512
            files += 1
    return size, blocks, files


def write_zarr(path, key, data, settings):
    import zarr
    with zarr.config.set(settings):
        t0 = time.perf_counter()
        arr = zarr_create(path, key, data.shape[0])
        arr[...] = data
        t1 = time.perf_counter()
        fsync_tree(path)
        t2 = time.perf_counter()
    return t2 - t0, t1 - t0


def write_tensorstore(path, key, data, shard_writes):
    import tensorstore as ts
    t0 = time.perf_counter()
    arr = ts.open(ts_spec(path, key, data.shape[0])).result()
    if not shard_writes:
        arr.write(data).result()
    else:
        txn = ts.Transaction()
        tx = arr.with_transaction(txn)
        rows = data.shape[0]
        futures = [tx[k:min(k + SHARD_ROWS, rows)].write(data[k:k + SHARD_ROWS]) for k in range(0, rows, SHARD_ROWS)]
        for f in futures:
            f.result()
        txn.commit_async().result()
    t1 = time.perf_counter()
    return t1 - t0, None


def dataset_arrays(store):
    """Every array of a store as (path, zarr.json metadata, decoded contents)."""
    import zarr
    out = []
    for dirpath, _, files in sorted(os.walk(store)):
        if "zarr.json" not in files:
            continue
        meta = json.load(open(os.path.join(dirpath, "zarr.json")))
        if meta.get("node_type") != "array":
            continue
        rel = os.path.relpath(dirpath, store)
        out.append((rel, meta, zarr.open_array(store=dirpath, mode="r")[...]))
    return out


def write_tensorstore_arrays(base, arrays):
    """tensorstore writes every array with the same metadata and contents, all at once."""
    import tensorstore as ts
    keys = ("shape", "data_type", "chunk_grid", "chunk_key_encoding", "fill_value", "codecs", "dimension_names")
    t0 = time.perf_counter()
    futures = []
    for rel, meta, data in arrays:
        spec = {"driver": "zarr3", "kvstore": {"driver": "file", "path": os.path.join(base, rel)},
                "metadata": {k: meta[k] for k in keys if k in meta}, "create": True, "delete_existing": True}
        arr = ts.open(spec).result()
        futures.append(arr.write(data))
    for f in futures:
        f.result()
    return time.perf_counter() - t0


def run_same_arrays(store, config, base, repeats):
    """The DatasetWriter's whole output (every array, same codecs) rewritten by tensorstore."""
    arrays = dataset_arrays(store)
    if not arrays:
        sys.exit(f"{store}: no arrays found")
    raw = sum(d.nbytes for _, _, d in arrays) / 1e6
    times = []
    for _ in range(repeats):
        path = tempfile.mkdtemp(prefix="ts-same-", dir=base)
        times.append(write_tensorstore_arrays(path, arrays))
        shutil.rmtree(path)
    med = statistics.median(times)
    return {"writer": "tensorstore_same_arrays", "config": config, "arrays": len(arrays), "raw_mb": raw,
            "run_seconds": times, "seconds": med, "mb_per_s": raw / med}


# zarr-python settings tried by zarr_python_tuned (the first is zarr's default).
ZARR_SWEEP = [
    {"async.concurrency": 10, "threading.max_workers": None},
    {"async.concurrency": 2, "threading.max_workers": None},
    {"async.concurrency": 4, "threading.max_workers": None},
    {"async.concurrency": 64, "threading.max_workers": None},
    {"async.concurrency": 10, "threading.max_workers": 2},
    {"async.concurrency": 10, "threading.max_workers": 4},
]


def settings_text(s):
    return ", ".join(f"{k}={v}" for k, v in s.items())


def sweep_zarr(key, data, base):
    """One write per ZARR_SWEEP setting: [{"config", "settings", "seconds"}]."""
    path = os.path.join(base, f"zarr_python_sweep-{CONFIG_NAMES[key]}")
    out = []
    for s in ZARR_SWEEP:
        shutil.rmtree(path, ignore_errors=True)
        out.append({"writer": "zarr_python_sweep", "config": CONFIG_NAMES[key], "settings": s,
                    "seconds": write_zarr(path, key, data, s)[0]})
        shutil.rmtree(path, ignore_errors=True)
    return out


def run_writer(writer, key, data, base, repeats, keep, log, sweep=None):
    name = CONFIG_NAMES[key]
    path = os.path.join(base, f"{writer}-{name}")
    extra = {}
    if writer in ("zarr_python", "zarr_python_tuned"):
        settings = dict(ZARR_SWEEP[0])
        if writer == "zarr_python_tuned":
            mine = [r for r in (sweep or []) if r["config"] == name] or sweep_zarr(key, data, base)
            settings = min(mine, key=lambda r: r["seconds"])["settings"]
        fn = lambda: write_zarr(path, key, data, settings)  # noqa: E731
        extra["settings"] = settings_text(settings)
        workers = settings["threading.max_workers"] or min(32, (os.cpu_count() or 1) + 4)
        threads = workers
    else:
        shard_writes = writer == "tensorstore_shards"
        fn = lambda: write_tensorstore(path, key, data, shard_writes)  # noqa: E731
        extra["settings"] = "default context (data_copy_concurrency = cores, file_io_sync = true)"
        threads = os.cpu_count() or 1
    times, nosync = [], []
    for r in range(repeats):
        shutil.rmtree(path, ignore_errors=True)
        t, t_nosync = fn()
        times.append(t)
        if t_nosync is not None:
            nosync.append(t_nosync)
        size, blocks, files = disk_use(path)
        if not (keep and r + 1 == repeats):
            shutil.rmtree(path, ignore_errors=True)
        print(f"  {writer} {name} run {r}: {t:.3f} s", file=log)
    raw = data.nbytes
    med, best = statistics.median(times), min(times)
    out = {"writer": writer, "config": name, "threads": threads, "rows": int(data.shape[0]),
           "raw_mb": raw / MB, "seconds": med, "mb_per_s": raw / MB / med, "best_seconds": best,
           "best_mb_per_s": raw / MB / best, "run_seconds": times, "stored_mb": size / MB,
           "disk_mb": blocks / MB, "files": files, "ratio": raw / size}
    if nosync:
        out["seconds_nosync"] = statistics.median(nosync)
        out["mb_per_s_nosync"] = raw / MB / statistics.median(nosync)
    out.update(extra)
    if keep:
        out["store"] = path
    return out


# --- verification ---------------------------------------------------------------------------------

def verify(stores, data):
    """Reads each array with zarr-python and compares it to the source, bit for bit."""
    import zarr
    out = []
    for s in stores:
        arr = zarr.open_array(s, mode="r")
        got = arr[...]
        same = got.dtype == data.dtype and got.shape == data.shape and np.array_equal(
            got.view(np.uint32), data.view(np.uint32))
        out.append({"store": s, "reader": "zarr_python", "shape": list(got.shape), "equal": bool(same)})
    return out


def fsync_probe(base, n=20):
    """Times n durable replacements of a 4 KB file (write, fsync, rename, directory fsync), as a
    store does for each file: on a disk shared with other work its latency varies by 10x and more
    (ext4 data=ordered: an fsync also waits for everyone else's dirty data in the transaction)."""
    d = os.path.join(base, "fsync-probe")
    os.makedirs(d, exist_ok=True)
    t = []
    for i in range(n):
        t0 = time.perf_counter()
        path = os.path.join(d, f"f{i % 4}")
        fd = os.open(path + ".tmp", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.write(fd, b"x" * 4096)
        os.fsync(fd)
        os.close(fd)
        os.rename(path + ".tmp", path)
        dfd = os.open(d, os.O_RDONLY | os.O_DIRECTORY)
        os.fsync(dfd)
        os.close(dfd)
        t.append(time.perf_counter() - t0)
    shutil.rmtree(d, ignore_errors=True)
    t.sort()
    return {"probe": "durable_4k_replace", "n": n, "median_ms": 1e3 * statistics.median(t),
            "p90_ms": 1e3 * t[int(0.9 * (n - 1))], "max_ms": 1e3 * t[-1]}


def versions():
    import numcodecs
    import numcodecs.blosc
    import zarr
    return {"python": sys.version.split()[0], "numpy": np.__version__, "zarr": zarr.__version__,
            "tensorstore": importlib.metadata.version("tensorstore"), "numcodecs": numcodecs.__version__,
            "numcodecs_c_blosc": numcodecs.blosc.VERSION_STRING}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", help="raw float32 rows x 26 from s2r_store_bench --dump-data")
    p.add_argument("--dir", help="directory for the stores (on the disk under test)")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--config", default="a,b,c")
    p.add_argument("--writer", default="zarr_python,zarr_python_tuned,tensorstore,tensorstore_shards")
    p.add_argument("--keep", action="store_true", help="keep the last repeat's store of each writer and config")
    p.add_argument("--verify", nargs="+", metavar="STORE", help="read STOREs with zarr-python, compare to --data")
    p.add_argument("--sweep", action="store_true", help="time each zarr-python setting once per config")
    p.add_argument("--tuned-from", metavar="FILE", help="--sweep output: zarr_python_tuned takes the fastest")
    p.add_argument("--versions", action="store_true")
    p.add_argument("--fsync-probe", metavar="DIR", help="latency of durable small-file writes in DIR")
    p.add_argument("--same-arrays", metavar="STORE",
                   help="time tensorstore writing every array of STORE (a DatasetWriter output) again, in --dir")
    a = p.parse_args()
    if a.versions:
        print(json.dumps(versions()))
        return
    if a.fsync_probe:
        print(json.dumps(fsync_probe(a.fsync_probe)))
        return
    if a.same_arrays:
        print(json.dumps(run_same_arrays(a.same_arrays, a.config, a.dir, a.repeats)))
        return
    data = np.fromfile(a.data, dtype="<f4")
    if data.size % COLS:
        sys.exit(f"{a.data}: {data.size} floats is not a whole number of {COLS}-column rows")
    data = data.reshape(-1, COLS)
    if a.verify:
        for line in verify(a.verify, data):
            print(json.dumps(line))
        return
    os.makedirs(a.dir, exist_ok=True)
    if a.sweep:
        for key in a.config.split(","):
            for line in sweep_zarr(key, data, a.dir):
                print(json.dumps(line), flush=True)
        return
    sweep = None
    if a.tuned_from:
        sweep = [json.loads(line) for line in open(a.tuned_from) if line.strip()]
        sweep = [r for r in sweep if r.get("writer") == "zarr_python_sweep"]
    for writer in a.writer.split(","):
        for key in a.config.split(","):
            print(json.dumps(run_writer(writer, key, data, a.dir, a.repeats, a.keep, sys.stderr, sweep)), flush=True)


if __name__ == "__main__":
    main()
