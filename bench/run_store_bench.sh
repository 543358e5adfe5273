#!/usr/bin/env bash
# Store write benchmark: s2r (host/store) against zarr-python 3 and tensorstore, side by side, on
# the same trajectory-like float32 data with the same codecs.
#
#   bench/run_store_bench.sh [MACHINE]        (MACHINE: a name for the results folder, default dev-2core)
#
# 1. Builds s2r and s2r_store_bench in BUILD_DIR, and dumps the data (MB of raw float32, rows x 26:
#    two bodies' positions, quaternions and velocities, 200-step episodes; bench/store_write_bench.cc)
#    to STORE_DIR, from which every writer reads it into memory before timing.
# 2. Sweeps zarr-python's concurrency settings once (one write per setting and config) for the
#    zarr_python_tuned writer.
# 3. REPEATS rounds; in each, for each configuration (a: shards of blosc-lz4 + crc32c inner chunks,
#    b: shards of zstd-3 + crc32c, c: unsharded blosc-lz4 chunks), every writer writes the whole
#    array once into a fresh directory in STORE_DIR: s2r zarr_array (ZarrArray::WriteChunkBytes from
#    THREADS threads), s2r dataset_writer (DatasetWriter, a and b), zarr_python (defaults),
#    zarr_python_tuned, tensorstore (one write) and tensorstore_shards (shard-sized writes in a
#    transaction). Rounds interleave the writers so that load from other processes hits all of them
#    alike. A time is create + write + durable on disk (fsyncs included); the table reports the
#    median of the rounds (and the best).
# 4. Verifies the last round's stores: `s2r inspect --arrays --json` (SHA-256 of the decoded array)
#    and zarr-python (bit-exact comparison) must both match the source data, for every writer.
# 5. With PROFILE=1 (default), `s2r_store_bench --profile`: the s2r write path split into stages,
#    the bare codecs, and a lean encoder prototype (see store_write_bench.cc).
# Writes bench/results/MACHINE/store_bench.jsonl (one JSON object per run, sweep point, check or
# profile line) and bench/results/MACHINE/store_bench.md. About 4 minutes on the 2-core dev machine.
#
# Environment: BUILD_DIR (default build), PYTHON (default .venv/bin/python, needs zarr>=3,
# tensorstore, numcodecs, numpy), MB (raw data size, default 256), REPEATS (rounds, default 3),
# THREADS (s2r writer threads, default nproc), STORE_DIR (a directory on the disk under test, not a
# tmpfs, default /var/tmp: the run works in a new sub-directory and removes it), PROFILE (1 or 0).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
MACHINE="${1:-dev-2core}"
BUILD_DIR="${BUILD_DIR:-build}"
PYTHON="${PYTHON:-.venv/bin/python}"
MB="${MB:-256}"
REPEATS="${REPEATS:-3}"
THREADS="${THREADS:-$(nproc)}"
PROFILE="${PROFILE:-1}"
OUT_DIR="bench/results/$MACHINE"
JSONL="$OUT_DIR/store_bench.jsonl"
MD="$OUT_DIR/store_bench.md"

[[ -f "$BUILD_DIR/CMakeCache.txt" ]] || { echo "run_store_bench.sh: $BUILD_DIR is not a configured CMake build (cmake -S . -B $BUILD_DIR)" >&2; exit 1; }
"$PYTHON" -c "import zarr, tensorstore, numcodecs, numpy; assert int(zarr.__version__.split('.')[0]) >= 3" 2>/dev/null || {
  echo "run_store_bench.sh: $PYTHON needs zarr>=3, tensorstore, numcodecs and numpy" >&2; exit 1; }
echo "== building s2r and s2r_store_bench in $BUILD_DIR" >&2
cmake --build "$BUILD_DIR" --target s2r s2r_store_bench -j "$(nproc)" >&2

mkdir -p "$OUT_DIR"
WORK="$(mktemp -d)"
# a directory of our own (removed at the end) inside STORE_DIR, or /var/tmp
mkdir -p "${STORE_DIR:-/var/tmp}"
STORE_DIR="$(mktemp -d "${STORE_DIR:-/var/tmp}/s2r-store-bench.XXXXXX")"
trap 'rm -rf "$WORK" "$STORE_DIR"' EXIT
FSTYPE="$(findmnt -n -o FSTYPE -T "$STORE_DIR")"
FSSRC="$(findmnt -n -o SOURCE -T "$STORE_DIR")"
if [[ "$FSTYPE" == tmpfs || "$FSTYPE" == ramfs ]]; then
  echo "run_store_bench.sh: $STORE_DIR is on $FSTYPE; set STORE_DIR to a directory on a real disk" >&2
  exit 1
fi
# private copies, so a rebuild during the run cannot mix two versions in one table
cp "$BUILD_DIR/s2r" "$BUILD_DIR/s2r_store_bench" "$WORK/"
BENCH="$WORK/s2r_store_bench"
S2R="$WORK/s2r"
S2R_SHA="$(sha256sum "$BENCH" | cut -c1-16)"
S2R_REV="$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)"
[[ -n "$(git status --porcelain host/store 2>/dev/null)" ]] && S2R_REV="$S2R_REV + uncommitted changes in host/store"
TMP="$WORK/results.jsonl"
DATA="$STORE_DIR/data.bin"

# tag MODE [ROUND]: adds machine, mode (and round) to JSON lines
tag() { "$PYTHON" -c '
import json, sys
for line in sys.stdin:
    line = line.strip()
    if not line:
        continue
    d = json.loads(line)
    d["machine"] = sys.argv[1]
    d["mode"] = sys.argv[2]
    if len(sys.argv) > 3:
        d["round"] = int(sys.argv[3])
    print(json.dumps(d))' "$MACHINE" "$@"; }

LOAD_BEFORE="$(cut -d' ' -f1-3 /proc/loadavg)"
START=$(date +%s)
busy_ticks() { awk '/^cpu /{print $2+$3+$4+$7+$8+$9}' /proc/stat; }
BUSY_BEFORE="$(busy_ticks)"

# --- 1. data ----------------------------------------------------------------------------------------
echo "== data: $MB MB into $DATA ($FSTYPE on $FSSRC)" >&2
"$BENCH" --mb "$MB" --dump-data "$DATA" | tag data >> "$TMP"
SRC_SHA="$("$PYTHON" -c 'import json, sys; print(json.loads(open(sys.argv[1]).readline())["sha256"])' "$TMP")"
{ "$BENCH" --versions; "$PYTHON" bench/store_write_bench.py --versions; } | tag versions >> "$TMP"

# --- 2. zarr-python sweep ---------------------------------------------------------------------------
echo "== zarr-python settings sweep" >&2
"$PYTHON" bench/store_write_bench.py --sweep --data "$DATA" --dir "$STORE_DIR" | tag sweep > "$WORK/sweep.jsonl"
cat "$WORK/sweep.jsonl" >> "$TMP"

# --- 3. rounds --------------------------------------------------------------------------------------
PY_WRITERS=zarr_python,zarr_python_tuned,tensorstore,tensorstore_shards
for (( r = 1; r <= REPEATS; ++r )); do
  keep=()
  (( r == REPEATS )) && keep=(--keep)
  for cfg in a b c; do
    echo "== round $r/$REPEATS config $cfg" >&2
    "$PYTHON" bench/store_write_bench.py --fsync-probe "$STORE_DIR" | tag probe "$r" | "$PYTHON" -c '
import json, sys
for line in sys.stdin:
    d = json.loads(line)
    d["config"] = sys.argv[1]
    print(json.dumps(d))' "$cfg" >> "$TMP"
    s2r_writers=zarr_array,dataset_writer
    [[ $cfg == c ]] && s2r_writers=zarr_array
    "$BENCH" --data "$DATA" --dir "$STORE_DIR" --config "$cfg" --writer "$s2r_writers" --threads "$THREADS" \
      --repeats 1 "${keep[@]}" | tag run "$r" >> "$TMP"
    "$PYTHON" bench/store_write_bench.py --data "$DATA" --dir "$STORE_DIR" --config "$cfg" --writer "$PY_WRITERS" \
      --repeats 1 --tuned-from "$WORK/sweep.jsonl" "${keep[@]}" 2>/dev/null | tag run "$r" >> "$TMP"
  done
done

# --- 4. verification --------------------------------------------------------------------------------
echo "== verifying the last round's stores" >&2
mapfile -t STORES < <("$PYTHON" -c '
import json, sys
for line in open(sys.argv[1]):
    d = json.loads(line)
    if d.get("mode") == "run" and "store" in d:
        s = d["store"]
        print(s + "/steps/state" if d["writer"] == "s2r_dataset_writer" else s)' "$TMP")
for s in "${STORES[@]}"; do
  "$S2R" inspect "$s" --arrays --json | "$PYTHON" -c '
import json, sys
rep = json.load(sys.stdin)
a = rep["arrays"][0]
print(json.dumps({"store": sys.argv[1], "reader": "s2r_inspect", "shape": a["shape"], "sha256": a.get("sha256"),
                  "equal": a.get("sha256") == sys.argv[2]}))' "$s" "$SRC_SHA" | tag verify >> "$TMP"
done
"$PYTHON" bench/store_write_bench.py --data "$DATA" --verify "${STORES[@]}" | tag verify >> "$TMP"
# --- 4b. the DatasetWriter's whole output, head to head with tensorstore writing the same arrays ---
# (every array of the kept DatasetWriter store, same metadata and contents; the two alternate)
for s in "${STORES[@]}"; do
  [[ $s == */steps/state ]] || continue
  cfg="$("$PYTHON" -c 'import sys; print(sys.argv[1].rsplit("-", 1)[-1])' "${s%/steps/state}")"
  ds="$STORE_DIR/same-arrays-$cfg"  # a copy: the fresh DatasetWriter runs below reuse the kept path
  rm -rf "$ds" && cp -r "${s%/steps/state}" "$ds"
  for (( r = 1; r <= REPEATS; ++r )); do
    echo "== same arrays, $cfg, round $r/$REPEATS" >&2
    "$BENCH" --data "$DATA" --dir "$STORE_DIR" --config "${cfg%%_*}" --writer dataset_writer --threads "$THREADS" \
      --repeats 1 | tag same "$r" >> "$TMP"
    "$PYTHON" bench/store_write_bench.py --same-arrays "$ds" --config "$cfg" --dir "$STORE_DIR" --repeats 1 \
      | tag same "$r" >> "$TMP"
  done
  rm -rf "$ds"
done
for s in "${STORES[@]}"; do rm -rf "${s%/steps/state}"; done

# --- 5. profile -------------------------------------------------------------------------------------
if [[ "$PROFILE" == 1 ]]; then
  echo "== profile of the s2r write path" >&2
  "$PYTHON" bench/store_write_bench.py --fsync-probe "$STORE_DIR" | tag profile >> "$TMP"
  "$BENCH" --data "$DATA" --dir "$STORE_DIR" --threads "$THREADS" --profile | tag profile >> "$TMP"
fi

LOAD_AFTER="$(cut -d' ' -f1-3 /proc/loadavg)"
ELAPSED=$(( $(date +%s) - START ))
BUSY_AFTER="$(busy_ticks)"
times > "$WORK/times"
OWN_CPU="$(tail -1 "$WORK/times" | awk '{ t = 0; for (i = 1; i <= 2; ++i) { split($i, a, "m"); t += a[1] * 60 + a[2] } print t }')"
FOREIGN="$(awk -v b0="$BUSY_BEFORE" -v b1="$BUSY_AFTER" -v own="$OWN_CPU" -v hz="$(getconf CLK_TCK)" \
  -v wall="$ELAPSED" -v n="$(nproc)" 'BEGIN { f = ((b1 - b0) / hz - own) / (wall * n); if (f < 0) f = 0; printf "%.0f", 100 * f }')"
cat "$TMP" > "$JSONL"

# --- summary ----------------------------------------------------------------------------------------
"$PYTHON" - "$JSONL" "$MD" "$MACHINE" "$(nproc)" "$LOAD_BEFORE" "$LOAD_AFTER" "$ELAPSED" "$FOREIGN" \
  "$S2R_SHA" "$STORE_DIR" "$FSTYPE" "$FSSRC" "$THREADS" "$REPEATS" "$S2R_REV" <<'EOF'
import datetime
import json
import statistics
import sys

(jsonl, md, machine, ncpu, load_before, load_after, elapsed, foreign, bench_sha, store_dir, fstype, fssrc,
 threads, repeats, s2r_rev) = sys.argv[1:]
rows = [json.loads(l) for l in open(jsonl)]
runs = [r for r in rows if r["mode"] == "run"]
data = next(r for r in rows if r["mode"] == "data")
ver = {}
for r in rows:
    if r["mode"] == "versions":
        ver.update({k: v for k, v in r.items() if k not in ("machine", "mode")})
cpu = "unknown"
for line in open("/proc/cpuinfo"):
    if line.startswith("model name"):
        cpu = line.split(":", 1)[1].strip()
        break

WRITERS = ["s2r_zarr_array", "s2r_dataset_writer", "zarr_python", "zarr_python_tuned", "tensorstore",
           "tensorstore_shards"]
CONFIGS = {"a_shard_blosc_lz4": "a: shards [65536,26] of [4096,26], bytes + blosc(lz4, 5, shuffle, 4) + crc32c",
           "b_shard_zstd3": "b: shards [65536,26] of [4096,26], bytes + zstd(3) + crc32c",
           "c_chunk_blosc_lz4": "c: chunks [65536,26], bytes + blosc(lz4, 5, shuffle, 4), no sharding"}
agg = {}
for r in runs:
    agg.setdefault((r["config"], r["writer"]), []).append(r)


def summary(rs):
    t = [r["seconds"] for r in rs]
    med = statistics.median(t)
    return {"mb_s": rs[0]["raw_mb"] / med, "best": rs[0]["raw_mb"] / min(t), "spread": (max(t) - min(t)) / med,
            "n": len(t), "last": rs[-1]}


verify = {}
for r in rows:
    if r["mode"] == "verify":
        verify.setdefault(r["store"].removesuffix("/steps/state"), []).append(r)

out = [f"# Store write benchmark: s2r vs zarr-python and tensorstore ({machine})\n",
       f"Generated by `bench/run_store_bench.sh {machine}` on {datetime.date.today()}, {elapsed} s in all. "
       "Raw results: `store_bench.jsonl` (one JSON object per run, sweep point, check or profile line).\n",
       f"- Machine: {cpu}, {ncpu} cores; load average before {load_before}, after {load_after}; other "
       f"processes used ~{foreign}% of the machine's CPU time during the run (the same for every writer: "
       "the rounds interleave them).",
       f"- Disk: stores written to `{store_dir}` ({fstype} on {fssrc}, the real disk, not a tmpfs); each run "
       "into a fresh directory, removed afterwards.",
       f"- Data: {data['rows']:,} rows x 26 float32 = {data['raw_mb']:.1f} MB raw (two free bodies: position, "
       "quaternion wxyz, linear and angular velocity; damped random-walk velocities integrated at 50 Hz, "
       "quaternions renormalized, 200-step episodes), sha256 " + data["sha256"][:16] + "...; generated by "
       "`s2r_store_bench --dump-data` and read into memory by every writer before timing.",
       f"- Versions: s2r {s2r_rev}, s2r_store_bench sha256 {bench_sha}..., system c-blosc {ver.get('c_blosc')} and zstd "
       f"{ver.get('zstd')} (linked by s2r); zarr {ver.get('zarr')}, numcodecs {ver.get('numcodecs')} (bundled "
       f"c-blosc {ver.get('numcodecs_c_blosc')}), tensorstore {ver.get('tensorstore')} (bundled codecs), numpy "
       f"{ver.get('numpy')}, Python {ver.get('python')}.",
       "- Time = create + write + durable: s2r fsyncs every file and directory it writes (temp + fsync + "
       "rename); tensorstore's file kvstore fsyncs each file (file_io_sync, default true); zarr-python's "
       "LocalStore does not fsync, so an fsync pass over the store's files and directories is timed after "
       "its write (`mb_per_s_nosync` in the jsonl is without it).",
       f"- MB/s = raw MB in (1 MB = 1e6 bytes) / s, **median of {repeats} rounds** (best in brackets); ratio = raw bytes / stored bytes (sum of file sizes). spread = "
       "(slowest - fastest) / median.",
       f"- Threads: s2r writers {threads} (zarr_array: shards split over that many threads; dataset_writer: "
       "compression threads, plus 4 I/O threads (its default)); zarr-python: its thread pool (default min(32, cores + 4)) "
       "under its async concurrency limit; tensorstore: default context (data_copy_concurrency = cores). "
       "s2r_dataset_writer's MB/s counts the feature bytes only, although it also writes its built-in step "
       "and episode arrays (their totals follow its table).",
       "- verified: the last round's store decodes to exactly the source data, checked with both "
       "`s2r inspect --arrays --json` (SHA-256 of the decoded array) and zarr-python (bit-exact).\n"]
probes = {}
for r in rows:
    if r["mode"] == "probe":
        probes[(r["config"], r["round"])] = r
rounds = sorted({r["round"] for r in runs})
out.append("Each configuration's table gives every round's MB/s (the rounds interleave the writers), the "
           "median, and above them the latency of a durable 4 KB file replacement (write, fsync, rename, "
           "directory fsync; median of 20) probed just before that round's runs: on this shared virtual "
           "disk it swings between ~0.5 ms and ~12 ms with other tenants' writes (ext4 data=ordered makes "
           "an fsync wait for all dirty data in the journal transaction), and the writers that issue "
           "fsyncs one at a time suffer most when it is high.\n")
for cfg, title in CONFIGS.items():
    out.append(f"## {title}\n")
    head = " | ".join(f"round {i}" for i in rounds)
    out.append(f"| writer | settings | {head} | median MB/s (best) | stored MB | ratio | verified |")
    out.append("|---|---|" + "---:|" * len(rounds) + "---:|---:|---:|---|")
    pr = [probes.get((cfg[0], i)) for i in rounds]
    out.append("| *fsync probe, ms* | | " + " | ".join(f"*{p['median_ms']:.1f}*" if p else "-" for p in pr) +
               " | | | | |")
    got, by_round = {}, {}
    for w in WRITERS:
        rs = agg.get((cfg, w))
        if not rs:
            continue
        s = summary(rs)
        got[w] = s
        last = s["last"]
        per = {r["round"]: r["mb_per_s"] for r in rs}
        by_round[w] = per
        settings = last.get("settings", f"threads={last['threads']}")
        v = verify.get(last.get("store", ""), [])
        ok = ("yes (" + ", ".join(x["reader"] for x in v) + ")") if v and all(x["equal"] for x in v) else (
            "**NO**" if v else "-")
        cells = " | ".join(f"{per[i]:.0f}" if i in per else "-" for i in rounds)
        out.append(f"| {w} | {settings} | {cells} | {s['mb_s']:.0f} ({s['best']:.0f}) | {last['stored_mb']:.1f} | "
                   f"{last['ratio']:.4f} | {ok} |")
    others = [w for w in got if not w.startswith("s2r")]
    for mine in ("s2r_zarr_array", "s2r_dataset_writer"):
        if mine not in got or not others:
            continue
        per = []
        for i in rounds:
            best_other = max((by_round[w].get(i, 0), w) for w in others)
            if i in by_round[mine] and best_other[0] > 0:
                per.append(f"{by_round[mine][i] / best_other[0]:.2f} ({best_other[1]})")
        fw = max(others, key=lambda w: got[w]["mb_s"])
        out.append(f"\n{mine} / the fastest other writer, per round: " + ", ".join(per) +
                   f"; of the medians: **{got[mine]['mb_s'] / got[fw]['mb_s']:.2f}** ({fw})")
        if mine == "s2r_dataset_writer":
            rs = agg[(cfg, mine)]
            med = statistics.median(r["seconds"] for r in rs)
            last = rs[-1]
            out.append(f"\ns2r_dataset_writer with its built-in step and episode arrays: {last['total_raw_mb']:.1f} MB "
                       f"raw in, {last['total_raw_mb'] / med:.0f} MB/s (median), {last['total_stored_mb']:.1f} MB "
                       f"stored in {last['files']} files, ratio {last['total_ratio']:.3f}")
    out.append("")

same = [r for r in rows if r["mode"] == "same"]
if same:
    out.append("## The DatasetWriter's whole output vs tensorstore writing the same arrays\n")
    out.append("The DatasetWriter writes its feature plus 13 built-in step and episode arrays. Here tensorstore "
               "writes all 14 arrays of the kept DatasetWriter store again (same zarr.json metadata, same "
               "decoded contents, all writes issued at once, file_io_sync on), alternating with fresh "
               "DatasetWriter runs. MB/s = all raw bytes in / s; median of the rounds.\n")
    out.append("| config | DatasetWriter MB/s | tensorstore MB/s | DatasetWriter / tensorstore |")
    out.append("|---|---:|---:|---:|")
    for cfg in sorted({r["config"] for r in same if r["writer"] == "tensorstore_same_arrays"}):
        key = cfg.split("_")[0]
        dw = [r["total_raw_mb"] / r["seconds"] for r in same
              if r["writer"] == "s2r_dataset_writer" and r["config"].split("_")[0] == key]
        tsr = [r["mb_per_s"] for r in same if r["writer"] == "tensorstore_same_arrays" and r["config"] == cfg]
        if dw and tsr:
            a, b = statistics.median(dw), statistics.median(tsr)
            out.append(f"| {cfg} | {a:.0f} ({', '.join(f'{x:.0f}' for x in dw)}) | "
                       f"{b:.0f} ({', '.join(f'{x:.0f}' for x in tsr)}) | **{a / b:.2f}** |")
    out.append("")
sweep = [r for r in rows if r["mode"] == "sweep"]
if sweep:
    out.append("## zarr-python settings sweep (one write each; zarr_python_tuned uses the fastest)\n")
    out.append("| config | async.concurrency | threading.max_workers | MB/s |")
    out.append("|---|---:|---:|---:|")
    for r in sweep:
        s = r["settings"]
        out.append(f"| {r['config']} | {s['async.concurrency']} | {s['threading.max_workers']} | "
                   f"{data['raw_mb'] / r['seconds']:.0f} |")
    out.append("")

prof = [r for r in rows if r["mode"] == "profile"]
if prof:
    out.append("## Profile of the s2r write path (`s2r_store_bench --profile`, one run each)\n")
    probe_now = [r for r in prof if r.get("probe")]
    out.append("The same shards written the way ZarrArray::WriteChunkBytes does (EncodeChunk, MakeDirs, "
               "temp + write + fsync + rename + directory fsync), with a clock between stages; stage times "
               "are summed over the threads (wall seconds; `cpu` = the threads' own CPU time), so with more "
               "threads they exceed the wall time. I/O threads `(same)`: each thread encodes and then writes "
               "its own shards, as ZarrArray's callers do; 4: the encode threads hand encoded shards to 4 "
               "threads that do the durable writes, so fsync waits overlap each other and the encoding "
               "(tensorstore's split into data-copy and file-I/O pools). `lean prototype`: the same format "
               "and durable-write steps, but the shard encoded without copies (inner chunks compressed "
               "straight from the caller's rows into one reused buffer, crc32c by the SSE4.2 instruction, "
               "one zstd context per thread). Every result is read back through ZarrArray and compared with "
               "the source." + (f" fsync probe just before: {probe_now[0]['median_ms']:.1f} ms." if probe_now else "") +
               "\n")
    out.append("| config | encoder | encode threads | I/O threads | MB/s | encode s (cpu) | mkdir s | write s | fsync s | rename+dir fsync s | read back |")
    out.append("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for r in prof:
        if r.get("writer") in ("s2r_zarr_array_profile", "lean_prototype_profile"):
            path = "EncodeChunk" if r["writer"].startswith("s2r") else "lean prototype"
            io = r["io_threads"] or "(same)"
            out.append(f"| {r['config']} | {path} | {r['threads']} | {io} | {r['mb_per_s']:.0f} | {r['encode_s']:.3f} "
                       f"({r['encode_cpu_s']:.3f}) | {r['mkdir_s']:.3f} | {r['write_s']:.3f} | {r['fsync_s']:.3f} | "
                       f"{r['rename_dirsync_s']:.3f} | {r['read_back_equal']} |")
    out.append("")
    out.append("Codec floor, one thread, all shards (the tail shard at full size): s2r's EncodeChunk against "
               "the bare codec calls on the same inner chunks.\n")
    out.append("| config | EncodeChunk s (MB/s) | bare compress s (MB/s) | crc32c s: s2r / SSE4.2 | copy s |")
    out.append("|---|---:|---:|---:|---:|")
    for r in prof:
        if r.get("writer") == "s2r_codec_floor_profile":
            out.append(f"| {r['config']} | {r['encode_chunk_s']:.3f} ({r['encode_chunk_mb_per_s']:.0f}) | "
                       f"{r['compress_s']:.3f} ({r['compress_mb_per_s']:.0f}) | {r['crc32c_s']:.3f} / "
                       f"{r['crc32c_sse42_s']:.3f} | {r['copy_s']:.3f} |")
    out.append("")
    ds = [r for r in prof if r.get("writer") == "s2r_dataset_writer_profile"]
    if ds:
        out.append("DatasetWriter split (`none_no_checksum`: the config-a layout with no compression and no "
                   "checksum, i.e. its file and commit work alone).\n")
        out.append("| config | threads | MB/s | open s | in Append s | Close s | files |")
        out.append("|---|---:|---:|---:|---:|---:|---:|")
        for r in ds:
            out.append(f"| {r['config']} | {r['threads']} | {r['mb_per_s']:.0f} | {r['open_s']:.3f} | "
                       f"{r['append_s']:.3f} | {r['close_s']:.3f} | {r['files']} |")
        out.append("")
open(md, "w").write("\n".join(out) + "\n")
print("\n".join(out))
EOF
echo "wrote $JSONL and $MD" >&2
