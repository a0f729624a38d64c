// Shipped model families (see shipped_models.h): manifest parsing and verified installation.
#include "harness/shipped_models.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "harness/file_hash.h"

namespace accel {

namespace fs = std::filesystem;

namespace {

[[noreturn]] void manifest_error(const std::string& path, const std::string& field,
                                 const std::string& what) {
  throw std::runtime_error("[models] " + path + ": " + field + ": " + what);
}

std::string need_string(const nlohmann::json& j, const char* key, const std::string& path,
                        const std::string& field) {
  if (!j.contains(key) || !j[key].is_string()) manifest_error(path, field, "must be a string");
  return j[key].get<std::string>();
}

// A family or role name: what becomes a directory or file stem, so nothing that could leave it.
bool plain_name(const std::string& s) {
  return !s.empty() && s.size() <= 64 && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
  });
}

ShippedFamily parse_manifest(const std::string& name, const fs::path& dir) {
  const std::string path = (dir / "manifest.json").string();
  std::ifstream in(path);
  if (!in) manifest_error(path, "file", "cannot be read");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    manifest_error(path, "file", std::string("is not JSON: ") + e.what());
  }
  if (!j.is_object()) manifest_error(path, "file", "must hold a JSON object");
  ShippedFamily f;
  f.name = name;
  f.dir = dir.string();
  if (need_string(j, "family", path, "family") != name)
    manifest_error(path, "family", "names another family than its folder '" + name + "'");
  f.description = j.value("description", std::string());
  if (!j.contains("members") || !j["members"].is_array() || j["members"].empty())
    manifest_error(path, "members", "must be a non-empty array");
  for (size_t i = 0; i < j["members"].size(); ++i) {
    const auto& m = j["members"][i];
    const std::string at = "members[" + std::to_string(i) + "]";
    if (!m.is_object()) manifest_error(path, at, "must be an object");
    ShippedMember s;
    s.role = need_string(m, "role", path, at + ".role");
    s.file = need_string(m, "file", path, at + ".file");
    s.sha256 = need_string(m, "sha256", path, at + ".sha256");
    if (!plain_name(s.role))
      manifest_error(path, at + ".role", "'" + s.role + "' is not a plain name");
    if (s.file.empty() || s.file.find('/') != std::string::npos || s.file[0] == '.')
      manifest_error(path, at + ".file", "'" + s.file + "' must be a file name inside the folder");
    if (s.sha256.size() != 64) manifest_error(path, at + ".sha256", "must be 64 hex digits");
    if (!m.contains("bytes") || !m["bytes"].is_number_unsigned())
      manifest_error(path, at + ".bytes", "must be a non-negative integer");
    s.bytes = m["bytes"].get<uint64_t>();
    if (f.member(s.role)) manifest_error(path, at + ".role", "'" + s.role + "' appears twice");
    f.members.push_back(std::move(s));
  }
  return f;
}

}  // namespace

const ShippedMember* ShippedFamily::member(const std::string& role) const {
  for (const auto& m : members)
    if (m.role == role) return &m;
  return nullptr;
}

std::string shipped_models_root() {
  if (const char* env = std::getenv("ACCELBENCH_SHIPPED_MODELS_DIR"); env && *env) return env;
  // harness/shipped_models.cpp -> <source>/models
  return (fs::path(__FILE__).parent_path().parent_path() / "models").string();
}

std::optional<ShippedFamily> find_shipped_family(const std::string& name) {
  if (!plain_name(name)) return std::nullopt;
  const fs::path dir = fs::path(shipped_models_root()) / name;
  if (!fs::exists(dir / "manifest.json")) return std::nullopt;
  return parse_manifest(name, dir);
}

std::vector<ShippedFamily> shipped_families() {
  std::vector<ShippedFamily> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(shipped_models_root(), ec)) {
    if (!e.is_directory() || !fs::exists(e.path() / "manifest.json")) continue;
    try {
      if (auto f = find_shipped_family(e.path().filename().string())) out.push_back(*f);
    } catch (const std::exception&) {
      // listed families are the usable ones; `models make` reports a malformed manifest
    }
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  return out;
}

std::vector<std::string> install_shipped_family(const ShippedFamily& f,
                                                const std::string& out_dir) {
  fs::create_directories(out_dir);
  std::vector<std::string> paths;
  for (const auto& m : f.members) {
    const fs::path src = fs::path(f.dir) / m.file;
    const fs::path dst = fs::path(out_dir) / (m.role + ".gguf");
    if (fs::exists(dst) && fs::file_size(dst) == m.bytes && sha256_file(dst.string()) == m.sha256) {
      paths.push_back(dst.string());
      continue;
    }
    if (!fs::exists(src))
      throw std::runtime_error("[models] " + src.string() + ": missing (family '" + f.name +
                               "', member '" + m.role + "' in its manifest.json)");
    const uint64_t size = fs::file_size(src);
    const std::string sha = sha256_file(src.string());
    if (size != m.bytes || sha != m.sha256)
      throw std::runtime_error("[models] " + src.string() + ": sha256 " + sha + " (" +
                               std::to_string(size) + " bytes) does not match the manifest's " +
                               m.sha256 + " (" + std::to_string(m.bytes) + " bytes)");
    const fs::path tmp = dst.string() + ".tmp";
    fs::copy_file(src, tmp, fs::copy_options::overwrite_existing);
    fs::rename(tmp, dst);
    paths.push_back(dst.string());
  }
  return paths;
}

}  // namespace accel
