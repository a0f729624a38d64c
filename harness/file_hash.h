// SHA-256 of model files (OpenSSL's libcrypto), cached per (path, size, mtime) so a plan that
// reuses a 400 MB model hashes it once. Case keys and stored model identities use these digests.
#pragma once
#include <string>

namespace accel {

std::string sha256_file(const std::string& path);  // lowercase hex; throws naming the file
std::string sha256_text(const std::string& data);  // lowercase hex

}  // namespace accel
