// The `accelbench` command line: parses arguments and dispatches to the subcommands in harness/.
// Owns no logic of its own; each subcommand lives in its own cli_*.cpp file.
#include "harness/cli.h"

int main(int argc, char** argv) {
  return accel::cli_main(argc, argv);
}
