// `accelbench models import-llama2c`: converts a llama2.c legacy checkpoint and tokenizer.bin
// into a GGUF model. Argument wiring only; the conversion and its validation live in
// models/llama2c_import.cpp.
#include <cstdio>
#include <memory>

#include "harness/cli.h"
#include "models/llama2c_import.h"

namespace accel {

void add_import_llama2c_command(CLI::App& models, CliCommands& out) {
  struct Args {
    std::string checkpoint, tokenizer, out;
  };
  auto a = std::make_shared<Args>();
  CLI::App* sub = models.add_subcommand(
      "import-llama2c", "Convert a llama2.c (version 0) checkpoint and tokenizer.bin to GGUF");
  sub->add_option("--checkpoint", a->checkpoint, "llama2.c checkpoint (.bin, legacy format)")
      ->required();
  sub->add_option("--tokenizer", a->tokenizer, "llama2.c tokenizer (tokenizer.bin / tok512.bin)")
      ->required();
  sub->add_option("--out", a->out, "Output GGUF path (written atomically)")->required();
  out.push_back({sub, [a] {
                   import_llama2c(a->checkpoint, a->tokenizer, a->out);
                   std::printf("%s\n", a->out.c_str());
                   return 0;
                 }});
}

}  // namespace accel
