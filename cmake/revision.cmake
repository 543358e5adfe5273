# Writes the source file that names the code a binary was built from (host/version.h): run by the
# s2r_revision target at every build (and once at configure time), so a new commit or an edit is
# recorded without a re-configure, and the file is rewritten only when its text changes (a build
# without a change recompiles nothing). A tree with changes to tracked files is "<rev>-dirty".
# In: S2R_SOURCE_DIR, S2R_REVISION_OUT, S2R_VERSION, and S2R_FIXED_REVISION (a revision given with
# -DS2R_GIT_REVISION, where the tree has no .git: it is used as it is).
set(revision "${S2R_FIXED_REVISION}")
if(NOT revision)
  execute_process(COMMAND git rev-parse --short=12 HEAD WORKING_DIRECTORY "${S2R_SOURCE_DIR}"
                  OUTPUT_VARIABLE revision OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE failed)
  if(failed OR NOT revision)
    set(revision "unknown")
  else()
    execute_process(COMMAND git status --porcelain --untracked-files=no WORKING_DIRECTORY "${S2R_SOURCE_DIR}"
                    OUTPUT_VARIABLE changes OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    if(changes)
      string(APPEND revision "-dirty")
    endif()
  endif()
endif()
set(text "// written by cmake/revision.cmake: the code this binary was built from
#include \"host/version.h\"

namespace s2r {
const char* S2rVersion() { return \"${S2R_VERSION}\"; }
const char* S2rGitRevision() { return \"${revision}\"; }
}  // namespace s2r
")
set(old "")
if(EXISTS "${S2R_REVISION_OUT}")
  file(READ "${S2R_REVISION_OUT}" old)
endif()
if(NOT old STREQUAL text)
  file(WRITE "${S2R_REVISION_OUT}" "${text}")
endif()
