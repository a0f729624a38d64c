// PLACEHOLDER: the `tokenize` subcommand is being written.
#include "harness/cli.h"

namespace accel {

void register_tokenize_command(CLI::App& app, CliCommands& out) { (void)app; (void)out; }

}  // namespace accel
