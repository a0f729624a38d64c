// PLACEHOLDER: the `models` subcommand is being written.
#include "harness/cli.h"

namespace accel {

void register_models_commands(CLI::App& app, CliCommands& out) { (void)app; (void)out; }

}  // namespace accel
