// PLACEHOLDER: the `generate` subcommand is being written.
#include "harness/cli.h"

namespace accel {

void register_generate_command(CLI::App& app, CliCommands& out) { (void)app; (void)out; }

}  // namespace accel
