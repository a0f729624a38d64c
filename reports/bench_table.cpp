// bench_table (bench_table.h): Google Benchmark JSON -> one row per (shape, size), medians and
// bootstrap ratio intervals per variant. Aggregate entries (mean/median/stddev rows) are ignored:
// every statistic is computed here from the repetitions themselves.
#include "reports/bench_table.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <stdexcept>
#include <vector>

#include "reports/stats.h"
#include "reports/tables.h"

namespace accel::reports {

namespace {

struct Entry {
  std::string variant, shape;
  long long size = 0;
  double us = 0;        // real time in microseconds
  double kv_bytes = 0;  // the kv_bytes counter, 0 when absent
  double pv_fmas = 0;   // the pv_fmas counter, 0 when absent
};

// Measurements of the machine in the same run, beside the kernels.
struct Machine {
  std::vector<double> dram_bytes_per_s;
  double fma_flops_per_s = 0;  // best repetition
};

double to_us(double t, const std::string& unit, const std::string& name) {
  if (unit == "ns") return t * 1e-3;
  if (unit == "us") return t;
  if (unit == "ms") return t * 1e3;
  if (unit == "s") return t * 1e6;
  throw std::invalid_argument("benchmark '" + name + "': unknown time_unit '" + unit + "'");
}

// "<family>/<variant>/<shape>/<size>[/iterations:1][/repeats:1][/real_time]" -> parts, or false.
bool parse_name(const std::string& name, const std::string& family, std::vector<std::string>* out) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= name.size()) {
    const size_t slash = name.find('/', start);
    const std::string p =
        name.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
    if (p != "real_time" && p.rfind("iterations:", 0) != 0 && p.rfind("repeats:", 0) != 0 &&
        p.rfind("min_time:", 0) != 0)
      parts.push_back(p);
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
  if (parts.empty() || parts[0] != family) return false;
  *out = std::move(parts);
  return true;
}

std::vector<Entry> read_entries(const nlohmann::json& bench, const std::string& family,
                                Machine* machine) {
  if (!bench.is_object() || !bench.contains("benchmarks") || !bench["benchmarks"].is_array())
    throw std::invalid_argument("not Google Benchmark JSON output: no \"benchmarks\" array");
  std::vector<Entry> out;
  for (const auto& b : bench["benchmarks"]) {
    const std::string name = b.value("name", "");
    if (b.value("run_type", "iteration") != "iteration" || b.contains("error_message")) continue;
    std::vector<std::string> p;
    if (!parse_name(name, family, &p)) continue;
    if (!b.contains("real_time") || !b["real_time"].is_number())
      throw std::invalid_argument("benchmark '" + name + "': no numeric real_time");
    const double us = to_us(b["real_time"].get<double>(), b.value("time_unit", "ns"), name);
    if (p.size() == 3 && p[1] == "dram_read") {
      const double bytes = b.value("bytes", 0.0);
      if (bytes > 0 && us > 0) machine->dram_bytes_per_s.push_back(bytes / (us * 1e-6));
      continue;
    }
    if (p.size() == 3 && p[1] == "fma_peak") {
      machine->fma_flops_per_s = std::max(machine->fma_flops_per_s, b.value("flops_per_s", 0.0));
      continue;
    }
    if (p.size() != 4)
      throw std::invalid_argument("benchmark '" + name + "': expected " + family +
                                  "/<variant>/<shape>/<size>");
    Entry e{p[1], p[2], 0, us, b.value("kv_bytes", 0.0), b.value("pv_fmas", 0.0)};
    try {
      e.size = std::stoll(p[3]);
    } catch (const std::exception&) {
      throw std::invalid_argument("benchmark '" + name + "': size '" + p[3] + "' is not a number");
    }
    out.push_back(e);
  }
  if (out.empty()) throw std::invalid_argument("no '" + family + "/...' benchmarks in the JSON");
  return out;
}

Cell us_cell(const std::vector<double>& t) {
  if (t.empty()) return Cell("—", nullptr);
  const double m = median(t);
  return Cell(format_number(m), nlohmann::json{{"median_us", m}, {"n", t.size()}});
}

// num's median time / den's: ratio.h's speedup of num over den (the reference usually in den),
// with its interval only where both sides have more than one repetition.
Cell time_ratio_cell(const std::vector<double>& num, const std::vector<double>& den,
                     const std::string& key) {
  const Ratio r =
      speedup_ratio(num, den, Direction::LowerIsBetter, key, RatioOptions{2000, 0, 0.95});
  if (r.empty()) return Cell("—", nullptr);
  if (num.size() > 1 && den.size() > 1) return ratio_cell(r);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2f×", r.ratio);
  return Cell(buf, nlohmann::json{{"ratio", r.ratio}, {"lo", r.lo}, {"hi", r.hi}});
}

}  // namespace

Table bench_table(const nlohmann::json& bench, const BenchTableOptions& opt) {
  Machine machine;
  const std::vector<Entry> entries = read_entries(bench, opt.family, &machine);
  const std::vector<double>& dram = machine.dram_bytes_per_s;
  std::vector<std::string> variants;  // in order of first appearance
  using Key = std::pair<std::string, long long>;
  std::map<Key, std::map<std::string, std::vector<double>>> times;
  std::map<Key, const Entry*> ref_entry;  // the reference's entry of each row (its counters)
  std::vector<Key> order;
  for (const auto& e : entries) {
    if (std::find(variants.begin(), variants.end(), e.variant) == variants.end())
      variants.push_back(e.variant);
    const Key k{e.shape, e.size};
    if (!times.count(k)) order.push_back(k);
    times[k][e.variant].push_back(e.us);
    if (e.variant == opt.reference) ref_entry[k] = &e;
  }
  const double bw = dram.empty() ? 0 : median(dram);
  Table t;
  t.title = "Kernel times (median µs over repetitions) and ratios to " + opt.reference;
  t.columns = {{"shape", "Shape", Align::Left}, {"size", "Keys", Align::Right}};
  for (const auto& v : variants) t.columns.push_back({v + "_us", v + " (µs)", Align::Right});
  for (const auto& v : variants)
    if (v != opt.reference && v != opt.floor_variant)
      t.columns.push_back({v + "_ratio", v + " / " + opt.reference, Align::Right});
  const bool has_floor =
      std::find(variants.begin(), variants.end(), opt.floor_variant) != variants.end();
  if (has_floor)
    t.columns.push_back({"floor_ratio", opt.reference + " / " + opt.floor_variant, Align::Right});
  const bool show_dram = opt.use_dram_bandwidth && bw > 0;
  if (show_dram)
    t.columns.push_back({"dram_ratio", opt.reference + " / DRAM stream", Align::Right});
  const double peak = machine.fma_flops_per_s;
  const bool show_pv_floor = show_dram && opt.use_fma_peak && peak > 0;
  if (show_pv_floor)
    t.columns.push_back({"pv_floor_ratio", "f32 P·V floor / DRAM stream", Align::Right});
  std::sort(order.begin(), order.end());
  for (const auto& k : order) {
    auto& by = times[k];
    std::vector<Cell> row = {Cell(k.first), Cell(std::to_string(k.second), k.second)};
    for (const auto& v : variants) row.push_back(us_cell(by[v]));
    const auto& ref = by[opt.reference];
    const std::string key = k.first + "/" + std::to_string(k.second);
    for (const auto& v : variants)
      if (v != opt.reference && v != opt.floor_variant)
        row.push_back(time_ratio_cell(by[v], ref, key));
    if (has_floor) row.push_back(time_ratio_cell(ref, by[opt.floor_variant], key));
    const Entry* re = ref_entry.count(k) ? ref_entry[k] : nullptr;
    const double stream_s = re && bw > 0 ? re->kv_bytes / bw : 0;  // 0 without the counter
    if (show_dram)
      row.push_back(stream_s > 0 && !ref.empty()
                        ? time_ratio_cell(ref, std::vector<double>{stream_s * 1e6}, key)
                        : Cell("—", nullptr));
    if (show_pv_floor) {
      const double floor_s = re ? 2 * re->pv_fmas / peak : 0;
      row.push_back(stream_s > 0 && floor_s > 0
                        ? Cell(format_number(floor_s / stream_s) + "×",
                               nlohmann::json{{"ratio", floor_s / stream_s}})
                        : Cell("—", nullptr));
    }
    t.rows.push_back(std::move(row));
  }
  t.footnotes.push_back("Ratios: ratio of medians, the column's variant / " + opt.reference +
                        " (kernel time); 95% percentile-bootstrap interval, 2000 resamples of "
                        "each side's repetitions, where both sides have more than one.");
  if (has_floor)
    t.footnotes.push_back(opt.reference + " / " + opt.floor_variant +
                          ": the reference's time against a plain SIMD read of the same bytes "
                          "at the same cache level (warm), i.e. how far it is from read-bound.");
  if (show_dram)
    t.footnotes.push_back(opt.reference +
                          " / DRAM stream: against kv_bytes / the read bandwidth measured in the "
                          "same run from a 1 GiB buffer (" +
                          format_number(bw * 1e-9) + " GB/s).");
  if (show_pv_floor)
    t.footnotes.push_back(
        "f32 P·V floor / DRAM stream: pv_fmas (keys x query heads x head_dim multiply-adds) at "
        "the f32 FMA peak measured in the same run (" +
        format_number(peak * 1e-9) +
        " GFLOP/s), against the DRAM stream time: a kernel that computes P·V with f32 FMAs "
        "cannot be faster than this multiple of the stream (scores, softmax and conversions "
        "come on top).");
  return t;
}

}  // namespace accel::reports
