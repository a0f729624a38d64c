// The decode-prefetch table and its choice (decode_prefetch.h). Entries are measured settings
// only: a CPU kind nobody measured gets the default and says so in its source, so a run record
// never claims a tuning that was not done.
#include "kernels/decode_prefetch.h"

#include <cpuid.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

namespace accel {

namespace {

constexpr const char* kEnv = "ACCELBENCH_DECODE_PREFETCH";

// One measured setting. model -1 matches every model of the family.
struct Entry {
  const char* vendor;
  int family, model;
  size_t kquant_superblocks, blocks;
  const char* measured;  // what chose it, for the record
};

// scripts/tune_decode_prefetch.sh measures a CPU kind's row: the decode benchmarks at each
// distance, interleaved, on the machine itself.
constexpr Entry kTable[] = {
    // AMD Zen 5 (2-core EPYC), with the weights on 2 MiB pages (kernels/stream_memory.h):
    // scripts/tune_decode_prefetch.sh on 2026-11-29 (ENGINE=1, 3 rounds) timed Q4_K_M decode at
    // 0 / 1 / 2 / 3 super-blocks ahead at 47.9 / 16.8 / 17.2 / 17.8 ms per token on 1 thread and
    // 25.2 / 9.6 / 13.9 / 14.3 on 2; then 1 against 2 alone, 5 interleaved rounds: 37.2 / 35.4
    // GB/s on 1 thread, 46.7 / 44.2 on 2. (On 4 KiB pages 1 and 2 had tied, and 2 was kept.) The
    // q8_0 GEMV tied at 4 and 8 blocks ahead and MXFP4 was faster at 8 (5 rounds): 8, as on Zen 3.
    {"AuthenticAMD", 26, -1, 1, 8, "Zen 5 (family 26), measured 2026-11-29"},
};

// What a CPU kind with no entry gets: Zen 5's setting, the only one measured on an AVX-512 CPU.
constexpr const Entry& kDefault = kTable[0];

struct Kind {
  std::string vendor;
  int family = -1, model = -1;
};

// "<vendor> family F model M" -> its parts; a string of another form matches no entry.
Kind parse_kind(const std::string& kind) {
  Kind k;
  char vendor[32] = {0};
  int f = -1, m = -1;
  if (std::sscanf(kind.c_str(), "%31s family %d model %d", vendor, &f, &m) == 3) {
    k.vendor = vendor;
    k.family = f;
    k.model = m;
  }
  return k;
}

// A distance in [0, kMaxPrefetchDistance] from s[0, n); false if it is not one.
bool parse_distance(const std::string& s, size_t& out) {
  if (s.empty() || s.size() > 3 || s.find_first_not_of("0123456789") != std::string::npos)
    return false;
  out = size_t(std::stoul(s));
  return out <= kMaxPrefetchDistance;
}

DecodePrefetch from_env(const char* env) {
  const std::string v(env);
  const auto comma = v.find(',');
  DecodePrefetch p;
  if (comma == std::string::npos || !parse_distance(v.substr(0, comma), p.kquant_superblocks) ||
      !parse_distance(v.substr(comma + 1), p.blocks))
    throw std::invalid_argument(std::string(kEnv) + "='" + v +
                                "': expected \"K,B\", two distances in [0, " +
                                std::to_string(kMaxPrefetchDistance) +
                                "] (k-quant super-blocks, q8_0/MXFP4 blocks ahead; 0: none)");
  p.source = std::string(kEnv) + "=" + v;
  return p;
}

}  // namespace

std::string cpu_kind() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(0, &a, &b, &c, &d)) return "unknown";
  char vendor[13] = {0};
  std::memcpy(vendor, &b, 4);
  std::memcpy(vendor + 4, &d, 4);
  std::memcpy(vendor + 8, &c, 4);
  if (!__get_cpuid(1, &a, &b, &c, &d)) return std::string(vendor) + " family ? model ?";
  const unsigned base_family = (a >> 8) & 0xf, base_model = (a >> 4) & 0xf;
  const unsigned family = base_family == 0xf ? base_family + ((a >> 20) & 0xff) : base_family;
  // Linux folds the extended model in from family 6 on (arch/x86/lib/cpu.c, x86_model).
  const unsigned model = family >= 6 ? (((a >> 16) & 0xf) << 4) + base_model : base_model;
  return std::string(vendor) + " family " + std::to_string(family) + " model " +
         std::to_string(model);
}

DecodePrefetch choose_decode_prefetch(const std::string& kind, const char* env) {
  if (env && *env) return from_env(env);
  const Kind k = parse_kind(kind);
  for (const Entry& e : kTable)
    if (k.vendor == e.vendor && k.family == e.family && (e.model < 0 || k.model == e.model))
      return {e.kquant_superblocks, e.blocks, std::string("table: ") + e.measured};
  return {kDefault.kquant_superblocks, kDefault.blocks,
          "default: no measured entry for " + kind + " (Zen 5's setting)"};
}

const DecodePrefetch& decode_prefetch() {
  static const DecodePrefetch p = choose_decode_prefetch(cpu_kind(), std::getenv(kEnv));
  return p;
}

}  // namespace accel
