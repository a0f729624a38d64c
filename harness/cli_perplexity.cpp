// PLACEHOLDER: the `perplexity` subcommand is being written.
#include "harness/cli.h"

namespace accel {

void register_perplexity_command(CLI::App& app, CliCommands& out) { (void)app; (void)out; }

}  // namespace accel
