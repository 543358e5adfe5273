// Subcommands of the s2r binary. Each returns the process exit code; errors are printed as one
// line naming the file (and line / column where there is one).
#pragma once

#include <string>

namespace CLI {
class App;
}

namespace s2r {

void AddRolloutCommand(CLI::App* app);
void AddBenchCommand(CLI::App* app);
void AddInspectCommand(CLI::App* app);
void AddCompareCommand(CLI::App* app);  // cli_compare.cc
void AddSweepCommand(CLI::App* app);
void AddReplayCommand(CLI::App* app);
void AddSysidCommand(CLI::App* app);
void AddClusterCommands(CLI::App* app);  // launch, status, merge (cli_cluster.cc)

// s2r inspect --fields SCENE: the scene's addressable parameters and options (cli_fields.cc)
void RunInspectFields(const std::string& scene, bool json);

}  // namespace s2r
