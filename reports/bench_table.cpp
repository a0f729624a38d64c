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
  double us = 0;         // real time in microseconds
  double kv_bytes = 0;   // the bytes read: the kv_bytes counter, else bytes; 0 when absent
  double pv_fmas = 0;    // the pv_fmas counter, 0 when absent
  double fma_flops = 0;  // f32 FMA arithmetic (2 flops per multiply-add), 0 when absent
  double int8_macs = 0;  // u8 x s8 dot-product multiply-adds, 0 when absent
  int threads = 0;       // the threads counter, 0 when absent
};

// The rates of one thread count (0: entries that did not say).
struct Rates {
  std::vector<double> dram_bytes_per_s;
  double fma_flops_per_s = 0;  // best repetition
  double int8_ops_per_s = 0;   // best repetition
  // fma_int8_overlap's shared fraction (fma_peak.h), one per repetition; none: taken as 0.
  std::vector<double> fma_int8_shared;
};

// Measurements of the machine in the same run, beside the kernels, by thread count.
struct Machine {
  std::map<int, Rates> by_threads;
  std::string int8_instruction;
  // The rates an entry on `threads` threads is bounded by: its own thread count's when measured,
  // else those measured without a count.
  const Rates* rates(int threads) const {
    auto it = by_threads.find(threads);
    if (it == by_threads.end()) it = by_threads.find(0);
    return it == by_threads.end() ? nullptr : &it->second;
  }
  // Every thread count's read rates (the DRAM stream column) and the best FMA peak (the P.V floor
  // column): those columns predate rates per thread count.
  std::vector<double> all_dram_bytes_per_s() const {
    std::vector<double> v;
    for (const auto& [t, r] : by_threads)
      v.insert(v.end(), r.dram_bytes_per_s.begin(), r.dram_bytes_per_s.end());
    return v;
  }
  double best_fma_flops_per_s() const {
    double best = 0;
    for (const auto& [t, r] : by_threads) best = std::max(best, r.fma_flops_per_s);
    return best;
  }
};

// An entry's roofline bound in seconds, max(bytes / bandwidth, arithmetic) over the terms it has
// counters (and the run has rates at its thread count) for, and which term binds; 0 when it has
// none. The arithmetic of an entry doing both kinds is max(f, i) + shared * min(f, i) with
// f = fma_flops / FMA peak, i = int8_macs / int8 peak and shared the run's measured port sharing
// (fma_peak.h; its median, 0 when not measured); "fma+int8" names it when the smaller kind adds
// to it.
struct Bound {
  double s = 0;
  const char* kind = "";
};
Bound roofline_bound(const Entry& e, const Machine& m) {
  Bound b;
  const Rates* r = m.rates(e.threads);
  if (!r) return b;
  auto consider = [&](double s, const char* kind) {
    if (s > b.s) b = {s, kind};
  };
  if (e.kv_bytes > 0 && !r->dram_bytes_per_s.empty())
    consider(e.kv_bytes / median(r->dram_bytes_per_s), "mem");
  const double f = e.fma_flops > 0 && r->fma_flops_per_s > 0 ? e.fma_flops / r->fma_flops_per_s : 0;
  const double i = e.int8_macs > 0 && r->int8_ops_per_s > 0 ? e.int8_macs / r->int8_ops_per_s : 0;
  const double shared = r->fma_int8_shared.empty() ? 0 : median(r->fma_int8_shared);
  const double added = shared * std::min(f, i);
  if (added > 0)
    consider(std::max(f, i) + added, "fma+int8");
  else if (f > 0 || i > 0)
    consider(std::max(f, i), f >= i ? "fma" : "int8");
  return b;
}

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
    const int threads = int(b.value("threads", 0.0));
    if (p.size() == 3 && p[1] == "dram_read") {
      const double bytes = b.value("bytes", 0.0);
      if (bytes > 0 && us > 0)
        machine->by_threads[threads].dram_bytes_per_s.push_back(bytes / (us * 1e-6));
      continue;
    }
    if (p.size() == 3 && p[1] == "fma_peak") {
      double& best = machine->by_threads[threads].fma_flops_per_s;
      best = std::max(best, b.value("flops_per_s", 0.0));
      continue;
    }
    if (p.size() == 3 && p[1] == "fma_int8_overlap") {
      if (b.contains("shared") && b["shared"].is_number())
        machine->by_threads[threads].fma_int8_shared.push_back(b["shared"].get<double>());
      continue;
    }
    if (p.size() == 3 && p[1] == "int8_peak") {
      double& best = machine->by_threads[threads].int8_ops_per_s;
      best = std::max(best, b.value("ops_per_s", 0.0));
      machine->int8_instruction = b.value("label", "");
      continue;
    }
    if (p.size() != 4)
      throw std::invalid_argument("benchmark '" + name + "': expected " + family +
                                  "/<variant>/<shape>/<size>");
    Entry e{p[1],
            p[2],
            0,
            us,
            b.value("kv_bytes", b.value("bytes", 0.0)),
            b.value("pv_fmas", 0.0),
            b.value("fma_flops", 0.0),
            b.value("int8_macs", 0.0),
            threads};
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
  const std::vector<double> dram = machine.all_dram_bytes_per_s();
  std::vector<std::string> variants;  // in order of first appearance
  using Key = std::pair<std::string, long long>;
  std::map<Key, std::map<std::string, std::vector<double>>> times;
  std::map<Key, const Entry*> ref_entry;  // the reference's entry of each row (its counters)
  std::map<Key, std::map<std::string, const Entry*>> variant_entry;  // each variant's counters
  std::vector<Key> order;
  for (const auto& e : entries) {
    if (std::find(variants.begin(), variants.end(), e.variant) == variants.end())
      variants.push_back(e.variant);
    const Key k{e.shape, e.size};
    if (!times.count(k)) order.push_back(k);
    times[k][e.variant].push_back(e.us);
    variant_entry[k][e.variant] = &e;
    if (e.variant == opt.reference) ref_entry[k] = &e;
  }
  const double bw = dram.empty() ? 0 : median(dram);
  Table t;
  t.title = "Kernel times (median µs over repetitions) and ratios to " + opt.reference;
  t.columns = {{"shape", "Shape", Align::Left}, {"size", opt.size_label, Align::Right}};
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
  const double peak = machine.best_fma_flops_per_s();
  const bool any_pv = std::any_of(ref_entry.begin(), ref_entry.end(),
                                  [](const auto& kv) { return kv.second->pv_fmas > 0; });
  const bool show_pv_floor = show_dram && opt.use_fma_peak && peak > 0 && any_pv;
  if (show_pv_floor)
    t.columns.push_back({"pv_floor_ratio", "f32 P·V floor / DRAM stream", Align::Right});
  // Roofline: a column per variant whose entries have a bound (counters and measured rates).
  std::vector<std::string> roof_variants;
  for (const auto& v : variants)
    for (const auto& [k, by] : variant_entry)
      if (by.count(v) && roofline_bound(*by.at(v), machine).s > 0) {
        roof_variants.push_back(v);
        break;
      }
  for (const auto& v : roof_variants)
    t.columns.push_back({v + "_roofline", v + " / roofline", Align::Right});
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
    for (const auto& v : roof_variants) {
      const auto it = variant_entry[k].find(v);
      const Bound b = it == variant_entry[k].end() ? Bound{} : roofline_bound(*it->second, machine);
      if (b.s <= 0 || by[v].empty()) {
        row.push_back(Cell("—", nullptr));
        continue;
      }
      const double m = median(by[v]) * 1e-6 / b.s;
      char text[48];
      std::snprintf(text, sizeof text, "%.2f× %s", m, b.kind);
      row.push_back(
          Cell(text, nlohmann::json{{"ratio", m}, {"bound_us", b.s * 1e6}, {"bound", b.kind}}));
    }
    t.rows.push_back(std::move(row));
  }
  if (!roof_variants.empty()) {
    std::string rates;
    for (const auto& [threads, r] : machine.by_threads) {
      std::string one;
      auto add = [&](const std::string& x) { one += (one.empty() ? "" : ", ") + x; };
      if (!r.dram_bytes_per_s.empty())
        add("read " + format_number(median(r.dram_bytes_per_s) * 1e-9) + " GB/s");
      if (r.fma_flops_per_s > 0)
        add("f32 FMA " + format_number(r.fma_flops_per_s * 1e-9) + " GFLOP/s");
      if (r.int8_ops_per_s > 0)
        add("int8 dot " + format_number(r.int8_ops_per_s * 1e-9) + " G multiply-adds/s");
      if (!r.fma_int8_shared.empty())
        add("FMA and int8 ports shared " + format_number(median(r.fma_int8_shared)));
      rates += std::string(rates.empty() ? "" : "; ") +
               (threads > 0 ? std::to_string(threads) + " thread" + (threads > 1 ? "s" : "") + ": "
                            : "") +
               one;
    }
    if (!machine.int8_instruction.empty()) rates += " (int8 via " + machine.int8_instruction + ")";
    t.footnotes.push_back(
        "<variant> / roofline: the median time over the variant's roofline bound, max(bytes / "
        "read bandwidth, arithmetic) over the counters it reports, where the arithmetic is "
        "max(f, i) + shared × min(f, i) with f = fma_flops / f32 FMA peak, i = int8_macs / int8 "
        "dot-product peak and shared the measured fraction of port sharing between the two (0: "
        "separate ports, the larger term alone; 1: shared, the sum; 0 when not measured), with "
        "the rates measured in the same run at the entry's thread count (" +
        rates +
        "); the suffix names the binding term (mem, fma, int8, or fma+int8 when both kinds add "
        "up). 1× is the bound itself. The "
        "bandwidth is a 1 GiB read's (memory, not cache): an entry whose data stays in cache "
        "between iterations can go below 1× mem.");
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
