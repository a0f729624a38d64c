// Model families shipped as files in the repository (models/<name>/manifest.json plus GGUFs, e.g.
// the trained `capable` family), as opposed to synthetic families generated from a seed. Owns
// finding a family's manifest, checking it, and installing its files (sha256-verified) where plans
// and `models make` expect family members. It never trains or writes model weights itself.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace accel {

struct ShippedMember {
  std::string role;    // file stem once installed: "target", "draft", ...
  std::string file;    // file name inside the family's folder
  std::string sha256;  // lowercase hex, from the manifest
  uint64_t bytes = 0;
};

struct ShippedFamily {
  std::string name;
  std::string description;
  std::string dir;  // the folder holding manifest.json and the files
  std::vector<ShippedMember> members;
  const ShippedMember* member(const std::string& role) const;  // nullptr when absent
};

// Where shipped families live: $ACCELBENCH_SHIPPED_MODELS_DIR when set, else this source tree's
// models/ folder (found from this file's compile-time path, so a build needs no install step).
std::string shipped_models_root();

// The family `name` when <root>/<name>/manifest.json exists; nullopt otherwise. A manifest that
// exists but is malformed throws, naming the file and the field.
std::optional<ShippedFamily> find_shipped_family(const std::string& name);

// Every family under the root that has a manifest (sorted by name); malformed ones are skipped.
std::vector<ShippedFamily> shipped_families();

// Copies each member to <out_dir>/<role>.gguf (through a temporary file and a rename, so nothing
// half-written is left), after checking its size and sha256 against the manifest; a member
// already there with the right digest is kept. Returns the paths in manifest order. Throws naming
// the file on a missing file or a digest mismatch.
std::vector<std::string> install_shipped_family(const ShippedFamily& f, const std::string& out_dir);

}  // namespace accel
