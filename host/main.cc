// s2r: batched simulation for Sim2Real data. One binary, one subcommand per job.
#include <cstdio>
#include <exception>
#include <new>
#include <string>

#include <CLI/CLI.hpp>

#include "host/cli.h"
#include "host/version.h"

int main(int argc, char** argv) {
  CLI::App app{std::string("s2r ") + s2r::S2rVersion() + " (" + s2r::S2rGitRevision() +
               "): batched rigid-body simulation for Sim2Real"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("s2r ") + s2r::S2rVersion() + " " + s2r::S2rGitRevision());
  s2r::AddRolloutCommand(&app);
  s2r::AddBenchCommand(&app);
  s2r::AddInspectCommand(&app);
  s2r::AddCompareCommand(&app);
  s2r::AddSweepCommand(&app);
  s2r::AddReplayCommand(&app);
  s2r::AddSysidCommand(&app);
  s2r::AddClusterCommands(&app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "s2r: error: out of memory (an allocation failed): ask for fewer worlds, a shorter horizon or "
                         "fewer threads\n");
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "s2r: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
