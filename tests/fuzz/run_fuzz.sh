#!/usr/bin/env bash
# Bounded libFuzzer run of the Zarr store's metadata parser and chunk/shard decoder, and of the .npz
# reader of `s2r sweep --policy-net` (host/sweep/npz.h).
#
#   tests/fuzz/run_fuzz.sh [SECONDS] [--update-corpus]
#
# Builds fuzz_metadata and fuzz_chunk with clang++ -fsanitize=fuzzer,address,undefined (the
# host/store sources they need compiled directly, objects cached under build/fuzz), plus
# ASan/UBSan replay binaries, then:
#   1. replays the committed crash-* inputs: one that still fails is a finding (reported, and left
#      out of the seeds so the fuzzer can look for others);
#   2. fuzzes each harness for SECONDS (default 30) seeded with tests/fuzz/corpus/<harness>; new
#      units go to a temporary directory, never into the repository;
#   3. with --update-corpus: also seeds from make_seed_corpus.py (zarr-python) and s2r's own
#      encoder, then rewrites tests/fuzz/corpus/<harness> as the -merge=1 minimized union (crash-*
#      files are always kept; new crashes are added as crash-*).
# Exits 1 on any finding and prints the reproducer path; exits 0 with a message when clang++ or
# libFuzzer is missing. Environment: S2R_FUZZ_CXX (default clang++), S2R_FUZZ_BUILD (default
# build/fuzz), S2R_FUZZ_TARGETS (default "metadata chunk npz").
set -euo pipefail
cd "$(dirname "$0")/../.."

seconds=30
update=0
for arg in "$@"; do
  case "$arg" in
    --update-corpus) update=1 ;;
    ''|*[!0-9]*) echo "usage: $0 [SECONDS] [--update-corpus]" >&2; exit 2 ;;
    *) seconds="$arg" ;;
  esac
done

cxx="${S2R_FUZZ_CXX:-clang++}"
work="${S2R_FUZZ_BUILD:-build/fuzz}"
targets=(${S2R_FUZZ_TARGETS:-metadata chunk npz})
jobs=$(nproc 2>/dev/null || echo 2)

# --- toolchain check: skip cleanly where libFuzzer is not installed ----------------------------
if ! command -v "$cxx" >/dev/null 2>&1; then
  echo "run_fuzz: $cxx not found; skipping the fuzz run (install clang and libclang-rt-14-dev)"
  exit 0
fi
mkdir -p "$work/obj" "$work/artifacts"
echo 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long) { return 0; }' >"$work/probe.cc"
if ! "$cxx" -fsanitize=fuzzer,address,undefined "$work/probe.cc" -o "$work/probe" >"$work/probe.log" 2>&1; then
  echo "run_fuzz: $cxx cannot link -fsanitize=fuzzer (libclang_rt.fuzzer missing?); skipping the fuzz run"
  sed 's/^/  /' "$work/probe.log" | tail -3
  exit 0
fi

# --- build ---------------------------------------------------------------------------------------
flags=(-std=c++17 -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined -I.)
libs=(-lblosc -lzstd -lz)

# An object is stale when its source or any header it included (from its .d file) is newer.
stale() {
  local obj="$1" src="$2"
  [ -f "$obj" ] && [ -f "${obj%.o}.d" ] || return 0
  [ "$src" -nt "$obj" ] && return 0
  local dep
  for dep in $(sed -e 's/^[^:]*://' -e 's/\\$//' "${obj%.o}.d"); do
    [ -f "$dep" ] && [ "$dep" -nt "$obj" ] && return 0
  done
  return 1
}

compile() {  # compile SRC OBJ [EXTRA_FLAGS...]
  local src="$1" obj="$2"
  shift 2
  if stale "$obj" "$src"; then
    "$cxx" "${flags[@]}" "$@" -MMD -MF "${obj%.o}.d" -c "$src" -o "$obj"
  fi
}

store_objs=()
pids=()
# The store sources the harnesses reach (metadata parsing and the codec chain).
store_srcs=(host/store/codecs.cc host/store/crc32c.cc host/store/dtype.cc host/store/file_io.cc host/store/metadata.cc
            host/store/nd_box.cc host/store/zarr_array.cc host/sweep/npz.cc)
for src in "${store_srcs[@]}" tests/fuzz/fuzz_*.cc tests/fuzz/replay_main.cc; do
  name=$(basename "${src%.cc}")
  obj="$work/obj/$name.o"
  # The code under test carries coverage instrumentation; replay_main does not need it.
  extra=(-fsanitize=fuzzer-no-link)
  [ "$name" = replay_main ] && extra=()
  case "$src" in host/store/* | host/sweep/npz.cc) store_objs+=("$obj") ;; esac
  compile "$src" "$obj" "${extra[@]}" &
  pids+=($!)
  if [ ${#pids[@]} -ge "$jobs" ]; then wait "${pids[0]}"; pids=("${pids[@]:1}"); fi
done
for pid in "${pids[@]}"; do wait "$pid"; done
for t in "${targets[@]}"; do
  "$cxx" "${flags[@]}" -fsanitize=fuzzer "$work/obj/fuzz_$t.o" "${store_objs[@]}" "${libs[@]}" -o "$work/fuzz_$t"
  "$cxx" "${flags[@]}" "$work/obj/fuzz_$t.o" "$work/obj/replay_main.o" "${store_objs[@]}" "${libs[@]}" \
    -o "$work/replay_$t"
done
echo "run_fuzz: built ${targets[*]/#/$work/fuzz_}"

# JSON tokens for the metadata fuzzer (libFuzzer -dict): every key and name the parser knows.
cat >"$work/metadata.dict" <<'EOF'
"zarr_format"
"node_type"
"array"
"group"
"shape"
"data_type"
"chunk_grid"
"regular"
"chunk_key_encoding"
"default"
"configuration"
"chunk_shape"
"separator"
"fill_value"
"codecs"
"name"
"attributes"
"dimension_names"
"storage_transformers"
"consolidated_metadata"
"must_understand"
"bytes"
"endian"
"little"
"big"
"blosc"
"cname"
"clevel"
"shuffle"
"noshuffle"
"bitshuffle"
"typesize"
"blocksize"
"zstd"
"level"
"checksum"
"gzip"
"crc32c"
"sharding_indexed"
"index_codecs"
"index_location"
"start"
"end"
"NaN"
"Infinity"
"-Infinity"
"0x"
"bool"
"int8"
"int16"
"int32"
"int64"
"uint8"
"uint16"
"uint32"
"uint64"
"float32"
"float64"
"lz4"
"9223372036854775807"
"18446744073709551615"
"4294967296"
"1e400"
EOF

export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:symbolize=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"

# Decoding a chunk of a few hundred bytes, or parsing a zarr.json, has no business allocating a
# gigabyte, whatever a header claims: over -malloc_limit_mb is a finding.
limits=(-max_len=16384 -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=1024)
findings=()
# the first line of a report: the harness's FINDING or the sanitizer's / libFuzzer's ERROR
headline() {
  grep -m1 -E "FINDING|ERROR: (AddressSanitizer|libFuzzer)|runtime error" "$1" | sed 's/^/  /' || true
}
# keep FILE NAME: copies a reproducer into the corpus as NAME unless a crash-* file there already
# holds the same bytes.
keep() {
  local c
  for c in "$corpus"/crash-*; do
    [ -f "$c" ] && cmp -s "$1" "$c" && return 0
  done
  cp "$1" "$corpus/$2"
  echo "run_fuzz: $t: reproducer kept as $corpus/$2"
}
run_id=$(date +%Y%m%d-%H%M%S)-$$

for t in "${targets[@]}"; do
  corpus="tests/fuzz/corpus/$t"
  mkdir -p "$corpus"
  tmp=$(mktemp -d "${TMPDIR:-/tmp}/s2r_fuzz_$t.XXXXXX")
  mkdir -p "$tmp/seeds" "$tmp/new" "$tmp/gen"

  # 1. known reproducers (crash-*): each that still fails is a finding and is kept out of the seeds
  for f in "$corpus"/*; do
    [ -f "$f" ] || continue
    case "$(basename "$f")" in
      crash-*)
        if ! ("$work/fuzz_$t" "${limits[@]}" "$f") >"$tmp/replay.log" 2>&1; then
          echo "run_fuzz: $t: known reproducer still fails: $f"
          headline "$tmp/replay.log"
          findings+=("$f")
          continue
        fi ;;
    esac
    cp "$f" "$tmp/seeds/"
  done

  # generated seeds (--update-corpus): zarr-python documents and shards, s2r's own encoder
  if [ "$update" = 1 ]; then
    if [ -x .venv/bin/python ] && .venv/bin/python -c "import zarr" 2>/dev/null; then
      .venv/bin/python tests/fuzz/make_seed_corpus.py "$tmp/py" 2>/dev/null | grep -v "^ *warn" || true
      [ -d "$tmp/py/$t" ] && cp "$tmp/py/$t"/* "$tmp/gen/" 2>/dev/null || true
    else
      echo "run_fuzz: no .venv with zarr-python; zarr-python seeds skipped"
    fi
    "$work/replay_$t" --write-seeds "$tmp/gen" >/dev/null
    for f in "$tmp/gen"/*; do
      [ -f "$f" ] || continue
      if ! ("$work/fuzz_$t" "${limits[@]}" "$f") >"$tmp/replay.log" 2>&1; then
        echo "run_fuzz: $t: generated seed $(basename "$f") is a finding"
        headline "$tmp/replay.log"
        keep "$f" "crash-$(basename "$f")"
        findings+=("$corpus/crash-$(basename "$f")")
        rm "$f"
      fi
    done
  fi

  # 2. the bounded run
  dict=()
  [ "$t" = metadata ] && dict=(-dict="$work/metadata.dict")
  artifacts="$work/artifacts/$run_id-$t-"
  echo "run_fuzz: fuzzing $t for ${seconds}s" \
    "(seeds: $(ls "$tmp/seeds" | wc -l) committed + $(ls "$tmp/gen" | wc -l) generated)"
  set +e
  "$work/fuzz_$t" "$tmp/new" "$tmp/seeds" "$tmp/gen" "${dict[@]}" "${limits[@]}" -max_total_time="$seconds" \
    -print_final_stats=1 -artifact_prefix="$artifacts" >"$tmp/fuzz.log" 2>&1
  rc=$?
  set -e
  done_line=$(grep -E "^#[0-9]+[[:space:]]+(DONE|INITED)" "$tmp/fuzz.log" | tail -1 || true)
  execs=$(grep -m1 "stat::number_of_executed_units" "$tmp/fuzz.log" | awk '{print $2}' || true)
  echo "run_fuzz: $t: rc=$rc execs=${execs:-?} ${done_line:-}"
  if [ "$rc" -ne 0 ]; then
    grep -E -A25 "==ERROR|FINDING|runtime error|deadly signal|out-of-memory|timeout" "$tmp/fuzz.log" |
      head -60 | sed 's/^/  /' || true
    for a in "$artifacts"*; do
      [ -f "$a" ] || continue
      echo "run_fuzz: $t: FINDING reproducer: $a"
      echo "  reproduce: $work/fuzz_$t -malloc_limit_mb=1024 $a   (or: $work/replay_$t $a)"
      findings+=("$a")
      if [ "$update" = 1 ]; then
        name=$(basename "$a")
        name=${name#"$run_id-$t-"}
        case "$name" in crash-*) ;; *) name="crash-$name" ;; esac
        keep "$a" "$name"
      fi
    done
    [ -n "$(ls "$artifacts"* 2>/dev/null)" ] || findings+=("$t: libFuzzer exit $rc")
  fi

  # 3. minimize into the repository: the committed and generated seeds first, then the new units.
  #    JSON multiplies libFuzzer's hit-counter features (the metadata corpus would be ~600 KB), so
  #    metadata merges on edge coverage alone (-use_counters=0).
  if [ "$update" = 1 ]; then
    merge=(-merge=1)
    [ "$t" = metadata ] && merge+=(-use_counters=0)
    mkdir -p "$tmp/merged"
    "$work/fuzz_$t" "${merge[@]}" "${limits[@]}" "$tmp/merged" "$tmp/seeds" "$tmp/gen" >"$tmp/merge1.log" 2>&1 || true
    "$work/fuzz_$t" "${merge[@]}" "${limits[@]}" "$tmp/merged" "$tmp/new" >"$tmp/merge2.log" 2>&1 || true
    if [ -n "$(ls "$tmp/merged")" ]; then
      find "$corpus" -maxdepth 1 -type f ! -name 'crash-*' -delete
      cp "$tmp/merged"/* "$corpus/"
      echo "run_fuzz: $t: corpus now $(ls "$corpus" | wc -l) files, $(cat "$corpus"/* | wc -c) bytes"
    fi
  fi
  rm -rf "$tmp"
done

if [ ${#findings[@]} -gt 0 ]; then
  echo "run_fuzz: ${#findings[@]} finding(s):"
  printf '  %s\n' "${findings[@]}"
  exit 1
fi
echo "run_fuzz: no findings"
