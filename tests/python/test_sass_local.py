"""The footprint scripts' readers of ptxas' and nvdisasm's output (bench/cuda_kernels.py parse_log,
bench/sass_local.py), on small texts in the tools' formats: no compiler, no device."""
import os
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "bench"))

from cuda_kernels import parse_log  # noqa: E402
from sass_local import Executions, estimate, memory_ops  # noqa: E402

KERNEL = "_ZN3s2r48_GLOBAL__N__56b218f1_15_backend_cuda_cu_1b68817e17ControlStepKernelILj2EEEvNS_9ModelViewEPKf"
STEP = "_ZN3s2r11PhysicsStepILj2EEEvRKNS_9ModelViewEb"

PTXAS = f"""ptxas info    : Compiling entry function '{KERNEL}' for 'sm_90'
ptxas info    : Function properties for {KERNEL}
    33776 bytes stack frame, 112 bytes spill stores, 852 bytes spill loads
ptxas info    : Used 64 registers, used 0 barriers, 33776 bytes cumulative stack size
ptxas info    : Function properties for {STEP}
    0 bytes stack frame, 1622 bytes spill stores, 3392 bytes spill loads
ptxas info    : Function properties for _ZN3s2r14NormalQuantileEd
    72 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Compiling entry function '_ZN3s2r48_GLOBAL__N__56b218f1_15_backend_cuda_cu_1b68817e17ResetWorldsKernelEv' for 'sm_90'
ptxas info    : Function properties for _ZN3s2r48_GLOBAL__N__56b218f1_15_backend_cuda_cu_1b68817e17ResetWorldsKernelEv
    48 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 56 registers, used 0 barriers, 48 bytes cumulative stack size
"""


def test_a_kernels_spills_include_the_functions_it_calls():
    """ptxas lists a kernel's kept calls after its own lines: their spills run in its threads."""
    k = parse_log(PTXAS)
    step = k["ControlStepKernel<slide_trees>"]
    assert (step["regs"], step["stack"]) == (64, 33776)
    assert (step["spill_stores"], step["spill_loads"]) == (112 + 1622, 852 + 3392)
    assert step["calls"][STEP] == (1622, 3392)
    reset = k["ResetWorldsKernel"]
    assert (reset["regs"], reset["spill_stores"], reset["spill_loads"], reset["calls"]) == (56, 0, 0, {})


SASS = f"""\t.section\t.text.{KERNEL},"ax",@progbits
{KERNEL}:
\t//## File "{REPO}/cuda/backend_cuda.cu", line 215
        /*0000*/                   STL [R1+0x82b4], R10 ;
        /*0010*/                   STL.128 [R45+0x10], R16 ;
${KERNEL}${STEP}:
\t//## File "{REPO}/kernels/math_types.h", line 35 inlined at "{REPO}/kernels/solver_contact.h", line 339
\t//## File "{REPO}/kernels/solver_contact.h", line 339 inlined at "{REPO}/kernels/step_world.h", line 213
\t//## File "{REPO}/kernels/step_world.h", line 213
        /*0020*/                   LDL.64 R4, [R1+0x90] ;
        /*0030*/                   LD.E R0, desc[UR4][R8.64] ;
        /*0040*/                   LDC R8, c[0x0][0x20] ;
\t//## File "{REPO}/kernels/step_world.h", line 205
        /*0050*/                   LDL.LU R3, [R7] ;
        /*0060*/                   ST.E.64 desc[UR4][R2.64], R4 ;
"""


def test_local_and_generic_accesses_are_read_with_their_inline_chains():
    ops = memory_ops(SASS)
    assert ops == [
        ("ControlStepKernel<slide_trees>", ("cuda/backend_cuda.cu:215",), "store", 4, "fixed"),
        ("ControlStepKernel<slide_trees>", ("cuda/backend_cuda.cu:215",), "store", 16, "addressed"),
        ("PhysicsStep<slide_trees>", ("kernels/math_types.h:35", "kernels/solver_contact.h:339",
                                      "kernels/step_world.h:213"), "load", 8, "fixed"),
        ("PhysicsStep<slide_trees>", ("kernels/math_types.h:35", "kernels/solver_contact.h:339",
                                      "kernels/step_world.h:213"), "load", 4, "generic"),
        ("PhysicsStep<slide_trees>", ("kernels/step_world.h:205",), "load", 4, "addressed"),
        ("PhysicsStep<slide_trees>", ("kernels/step_world.h:205",), "store", 8, "generic"),
    ]


def test_an_inlined_helper_runs_as_often_as_its_call_site_not_as_all_its_callers():
    """gcov counts a helper's line over every caller (here 1000 runs of math_types.h:35 in 500
    calls); an instruction inlined from one call site runs as often as that site, times the
    helper line's runs per call (2: a loop of two), times the sites above it."""
    lines = {"kernels/math_types.h:35": 1000, "kernels/solver_contact.h:339": 12, "kernels/step_world.h:213": 3,
             "kernels/step_world.h:205": 2}
    calls = {("kernels/math_types.h", 30, 40): 500, ("kernels/solver_contact.h", 330, 380): 3,
             ("kernels/step_world.h", 180, 270): 1, ("kernels/step_world.h", 200, 210): 0}
    runs = Executions(lines, calls)
    chain = ("kernels/math_types.h:35", "kernels/solver_contact.h:339", "kernels/step_world.h:213")
    assert runs(chain) == 3 * (12 / 3) * (1000 / 500)
    assert runs(("kernels/step_world.h:213",)) == 3
    # a call site whose line runs more often than the function is called (`if (c) f();`): the
    # function's 3 calls bound the site's 40 runs
    lines["kernels/step_world.h:190"] = 40
    assert runs(("kernels/solver_contact.h:339", "kernels/step_world.h:190")) == 3 * (12 / 3)
    del lines["kernels/step_world.h:190"]
    assert runs(("kernels/other.h:1",)) is None  # no count: not estimated
    # a line inside a function that never ran in the counted steps: zero
    assert runs(("kernels/step_world.h:205", "kernels/step_world.h:213")) == 0.0
    by_kind, by_line, unseen = estimate(memory_ops(SASS), runs)
    assert by_kind[("PhysicsStep<slide_trees>", "fixed", "load")] == 8 * 24
    assert by_kind[("PhysicsStep<slide_trees>", "addressed", "load")] == 4 * 2
    assert unseen["fixed"] == 4 and unseen["addressed"] == 16  # the kernel's line has no count
