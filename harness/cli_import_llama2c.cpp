// PLACEHOLDER: being written.
#include "harness/cli.h"

namespace accel {

void add_import_llama2c_command(CLI::App& models, CliCommands& out) { (void)models; (void)out; }

}  // namespace accel
