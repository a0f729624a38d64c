// Writes each fuzz target's seed inputs (accel::fuzz::seeds) into DIR/<target>/, the corpora
// scripts/fuzz.sh starts libFuzzer from. Usage: fuzz_make_seeds DIR
#include <filesystem>
#include <fstream>
#include <iostream>

#include "tests/support/fuzz_entries.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: fuzz_make_seeds DIR\n";
    return 2;
  }
  for (const std::string& target : accel::fuzz::targets()) {
    const std::filesystem::path dir = std::filesystem::path(argv[1]) / target;
    std::filesystem::create_directories(dir);
    for (const auto& [name, bytes] : accel::fuzz::seeds(target))
      std::ofstream(dir / name, std::ios::binary)
          .write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
  }
  return 0;
}
