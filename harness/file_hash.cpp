// SHA-256 helpers (see file_hash.h).
#include "harness/file_hash.h"

#include <openssl/evp.h>
#include <sys/stat.h>

#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <tuple>
#include <vector>

namespace accel {

namespace {

class Sha256 {
 public:
  Sha256() : ctx_(EVP_MD_CTX_new(), EVP_MD_CTX_free) {
    if (!ctx_ || EVP_DigestInit_ex(ctx_.get(), EVP_sha256(), nullptr) != 1)
      throw std::runtime_error("sha256: OpenSSL init failed");
  }
  void update(const void* p, size_t n) { EVP_DigestUpdate(ctx_.get(), p, n); }
  std::string hex() {
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    EVP_DigestFinal_ex(ctx_.get(), md, &len);
    static const char* digits = "0123456789abcdef";
    std::string s;
    for (unsigned i = 0; i < len; ++i) s += digits[md[i] >> 4], s += digits[md[i] & 15];
    return s;
  }

 private:
  std::unique_ptr<EVP_MD_CTX, void (*)(EVP_MD_CTX*)> ctx_;
};

}  // namespace

std::string sha256_text(const std::string& data) {
  Sha256 h;
  h.update(data.data(), data.size());
  return h.hex();
}

std::string sha256_file(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) throw std::runtime_error("cannot stat '" + path + "'");
  using Key = std::tuple<std::string, off_t, int64_t, int64_t>;
  static std::map<Key, std::string> cache;
  static std::mutex mu;
  const Key key{path, st.st_size, int64_t(st.st_mtim.tv_sec), int64_t(st.st_mtim.tv_nsec)};
  {
    std::lock_guard<std::mutex> lock(mu);
    if (auto it = cache.find(key); it != cache.end()) return it->second;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read '" + path + "'");
  Sha256 h;
  std::vector<char> buf(1 << 20);
  while (in) {
    in.read(buf.data(), std::streamsize(buf.size()));
    h.update(buf.data(), size_t(in.gcount()));
  }
  const std::string hex = h.hex();
  std::lock_guard<std::mutex> lock(mu);
  cache[key] = hex;
  return hex;
}

}  // namespace accel
