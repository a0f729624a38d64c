// Tests of the decode-prefetch choice (kernels/decode_prefetch.h): the environment's setting
// overrides the table, the table matches its CPU kinds, an unmeasured kind gets the default and
// says so, malformed settings are refused by name, and cpu_kind() reads as /proc/cpuinfo does.
#include "kernels/decode_prefetch.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <stdexcept>
#include <string>

namespace accel {
namespace {

constexpr const char* kZen5 = "AuthenticAMD family 26 model 2";

TEST(DecodePrefetch, EnvironmentOverridesTheTable) {
  const DecodePrefetch p = choose_decode_prefetch(kZen5, "3,12");
  EXPECT_EQ(p.kquant_superblocks, 3u);
  EXPECT_EQ(p.blocks, 12u);
  EXPECT_EQ(p.source, "ACCELBENCH_DECODE_PREFETCH=3,12");
  const DecodePrefetch lo = choose_decode_prefetch(kZen5, "0,0");
  EXPECT_EQ(lo.kquant_superblocks, 0u);
  EXPECT_EQ(lo.blocks, 0u);
  const DecodePrefetch hi = choose_decode_prefetch(kZen5, "64,64");
  EXPECT_EQ(hi.kquant_superblocks, kMaxPrefetchDistance);
  EXPECT_EQ(hi.blocks, kMaxPrefetchDistance);
}

// The Zen 5 entry covers every model of family 26; an empty variable counts as unset.
TEST(DecodePrefetch, TableEntryMatchesItsFamily) {
  for (const char* kind : {kZen5, "AuthenticAMD family 26 model 68"}) {
    for (const char* env : {static_cast<const char*>(nullptr), ""}) {
      const DecodePrefetch p = choose_decode_prefetch(kind, env);
      EXPECT_EQ(p.kquant_superblocks, 1u) << kind;
      EXPECT_EQ(p.blocks, 8u) << kind;
      EXPECT_EQ(p.source.rfind("table: ", 0), 0u) << p.source;
    }
  }
}

// A kind nobody measured (here Intel Sapphire Rapids, and a string of no known form) gets the
// default, and its record names the kind and says that nothing was measured for it.
TEST(DecodePrefetch, UnmeasuredKindGetsTheDefaultAndSaysSo) {
  for (const std::string kind :
       {"GenuineIntel family 6 model 143", "AuthenticAMD family 25 model 1", "unknown"}) {
    const DecodePrefetch p = choose_decode_prefetch(kind, nullptr);
    EXPECT_EQ(p.kquant_superblocks, 1u);
    EXPECT_EQ(p.blocks, 8u);
    EXPECT_NE(p.source.find("no measured entry for " + kind), std::string::npos) << p.source;
  }
}

TEST(DecodePrefetch, MalformedSettingsAreRefusedByName) {
  for (const char* bad :
       {"x", "3", "3,", ",3", "-1,2", "65,1", "1,65", "3,8,1", " 3,8", "3, 8", "0x2,8", "1000,1"}) {
    try {
      choose_decode_prefetch(kZen5, bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const std::invalid_argument& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("ACCELBENCH_DECODE_PREFETCH='" + std::string(bad) + "'"),
                std::string::npos)
          << what;
    }
  }
}

// cpu_kind() (cpuid) names the CPU as /proc/cpuinfo's first processor does.
TEST(DecodePrefetch, CpuKindReadsAsProcCpuinfo) {
  std::ifstream in("/proc/cpuinfo");
  std::string line, vendor, family, model;
  while (std::getline(in, line)) {
    const auto colon = line.find(':');
    if (colon == std::string::npos || colon + 2 > line.size()) continue;
    std::string key = line.substr(0, colon);
    while (!key.empty() && (key.back() == ' ' || key.back() == '\t')) key.pop_back();
    const std::string val = line.substr(colon + 2);
    if (key == "vendor_id" && vendor.empty()) vendor = val;
    if (key == "cpu family" && family.empty()) family = val;
    if (key == "model" && model.empty()) model = val;
  }
  if (family.empty()) GTEST_SKIP() << "/proc/cpuinfo has no x86 identity fields";
  EXPECT_EQ(cpu_kind(), vendor + " family " + family + " model " + model);
}

TEST(DecodePrefetch, ProcessSettingIsTheChoiceForThisCpu) {
  const DecodePrefetch want =
      choose_decode_prefetch(cpu_kind(), std::getenv("ACCELBENCH_DECODE_PREFETCH"));
  EXPECT_EQ(decode_prefetch().kquant_superblocks, want.kquant_superblocks);
  EXPECT_EQ(decode_prefetch().blocks, want.blocks);
  EXPECT_EQ(decode_prefetch().source, want.source);
}

}  // namespace
}  // namespace accel
