#!/usr/bin/env bash
# The CUDA compiler launcher (CMakeLists.txt): runs the compile command it is given (ccache and
# nvcc, with -Xptxas -v) and keeps what the compiler printed, ptxas' per-kernel registers, stack
# frame, spills and shared memory included, in LOG, which bench/cuda_kernels.py reads. The output
# still reaches the build log. With ccache a cached compile replays the same text.
#   resource_log.sh LOG COMMAND...
set -uo pipefail
log=$1
shift
"$@" 2> "$log.tmp"
rc=$?
cat "$log.tmp" >&2
mv -f "$log.tmp" "$log"
exit $rc
