// PLACEHOLDER: being written.
#include "harness/cli.h"

namespace accel {

void register_results_commands(CLI::App& app, CliCommands& out) { (void)app; (void)out; }

}  // namespace accel
