// Kernel benchmark tables from Google Benchmark JSON output: benchmarks named
// <family>/<variant>/<shape>/<size> (e.g. kv_attention/fused_int4/seed/32768) become one row per
// (shape, size) with each variant's median time and its ratio to a reference variant, with a
// percentile-bootstrap interval over the repetitions. Reads JSON only: no running, no store.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "reports/table.h"

namespace accel::reports {

struct BenchTableOptions {
  std::string family = "kv_attention";
  std::string reference = "fused_int4";  // ratios are variant time / reference time
  // A variant whose time is the reference's floor (e.g. a plain read of the same bytes): the
  // table gives reference time / floor time for it.
  std::string floor_variant = "stream_int4";
  std::string size_label = "Keys";  // the header of the <size> column (kquant: "K")
  // Optional: read bandwidth in bytes/s measured in the same run (a variant named
  // <family>/dram_read/<bytes>); reference time is then also compared with kv_bytes / bandwidth.
  bool use_dram_bandwidth = true;
  // Optional, with the bandwidth: the f32 FMA peak in flops/s measured in the same run (a variant
  // named <family>/fma_peak/<anything> with a flops_per_s counter; the best repetition counts).
  // Rows whose reference entry has a pv_fmas counter then also give the P.V arithmetic floor (the
  // column shows only when some row's reference has one),
  // 2 x pv_fmas / peak, against the DRAM stream time: a kernel doing its P.V in f32 FMAs cannot
  // come closer to the stream than that.
  bool use_fma_peak = true;
};

// Every variant whose entries report what they cost (bytes or kv_bytes read, fma_flops, int8_macs)
// also gets a roofline column: its median time over max(bytes / read bandwidth, arithmetic), the
// arithmetic max(f, i) + shared * min(f, i) with f = fma_flops / FMA peak, i = int8_macs / int8
// dot-product peak and shared how much the two kinds compete for ports (kernels/fma_peak.h), with
// the rates measured in the same run by entries named <family>/dram_read/<bytes>,
// <family>/fma_peak/<any> (flops_per_s), <family>/int8_peak/<any> (ops_per_s, its label the
// instruction) and <family>/fma_int8_overlap/<any> (shared; the median counts). A term whose
// counter or rate is missing is left out; no overlap entry means shared = 0 (the larger term).
// Throws std::invalid_argument naming the entry when the JSON is not Google Benchmark output or
// holds no benchmark of the family.
Table bench_table(const nlohmann::json& bench, const BenchTableOptions& opt = {});

}  // namespace accel::reports
