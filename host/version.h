// The version of s2r and the git revision a binary was built from, as stores, sbatch scripts and
// `s2r --version` record them. The revision is taken at build time (cmake/revision.cmake), not at
// configure time, and ends in "-dirty" where tracked files had uncommitted changes.
#pragma once

namespace s2r {

const char* S2rVersion();
const char* S2rGitRevision();

}  // namespace s2r
