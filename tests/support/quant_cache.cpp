// Builds the tests' quantized KV caches (quant_cache.h) through the format's own quantizer and
// dequantizer (kernels/kv_quant.h).
#include "tests/support/quant_cache.h"

#include "tests/support/test_support.h"

namespace accel::test {

void QuantCache::dequantize() {
  const size_t kv_dim = size_t(hkv) * size_t(D), kbb = kv_quant_kblock_bytes(f, D);
  std::vector<uint8_t> r(rec);
  if (f == KVQuant::Int4) vblk.assign(size_t(hkv) * vhead(), 0);
  for (size_t j = 0; j < n; ++j)
    for (int g = 0; g < hkv; ++g) {
      const size_t col = j * kv_dim + size_t(g) * size_t(D);
      kblock_get(f, D, &k[size_t(g) * khead() + j / 32 * kbb], int(j % 32), r.data());
      kv_dequantize_head(f, r.data(), D, &kf[col]);
      const uint8_t* vrec = &v[size_t(g) * n * rec + j * rec];
      kv_dequantize_head(f, vrec, D, &vf[col]);
      if (f == KVQuant::Int4)
        vblock_put(f, D, vrec, &vblk[size_t(g) * vhead() + j / 32 * kbb], int(j % 32));
    }
}

QuantCache make_quant_cache(KVQuant f, int hkv, int D, size_t n, uint64_t seed, float kscale) {
  QuantCache c{f, hkv, D, n, kv_quant_record_bytes(f, D), {}, {}, {}, {}, {}};
  const size_t kv_dim = size_t(hkv) * size_t(D);
  const auto kraw = random_normal(n * kv_dim, seed, kscale);
  const auto vraw = random_normal(n * kv_dim, seed + 1);
  c.k.resize(size_t(hkv) * c.khead());
  c.v.resize(size_t(hkv) * n * c.rec);
  c.kf.resize(n * kv_dim);
  c.vf.resize(n * kv_dim);
  std::vector<uint8_t> rec(c.rec);
  for (size_t j = 0; j < n; ++j)
    for (int g = 0; g < hkv; ++g) {
      const size_t col = j * kv_dim + size_t(g) * size_t(D);
      kv_quantize_head(f, &kraw[col], D, rec.data());
      kblock_put(f, D, rec.data(),
                 &c.k[size_t(g) * c.khead() + j / 32 * kv_quant_kblock_bytes(f, D)], int(j % 32));
      kv_quantize_head(f, &vraw[col], D, &c.v[size_t(g) * n * c.rec + j * c.rec]);
    }
  c.dequantize();
  return c;
}

}  // namespace accel::test
