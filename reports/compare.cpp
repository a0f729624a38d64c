// compare_stores (compare.h). Trials are pooled per case (config_key: the same case matches across
// commits and CPUs, whose timing case_keys differ) and build (all runs of one build in a store
// count), so a store with repeated runs gives more trials per case rather than separate
// comparisons, and a store spanning builds gives one comparison per pair of builds.
#include "reports/compare.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <stdexcept>

#include "reports/tables.h"

namespace accel::reports {

using results::TrialRecord;

const std::vector<Metric>& metrics() {
  static const std::vector<Metric> m = {
      {"ttft_s", false, [](const TrialRecord& t) { return t.ttft_s; }},
      {"decode_tok_s", true, [](const TrialRecord& t) { return t.decode_tok_s; }},
      {"peak_rss_bytes", false,
       [](const TrialRecord& t) -> std::optional<double> {
         if (t.peak_rss_bytes <= 0) return std::nullopt;
         return double(t.peak_rss_bytes);
       }},
      {"kv_bytes", false,
       [](const TrialRecord& t) -> std::optional<double> {
         if (t.kv_bytes <= 0) return std::nullopt;
         return double(t.kv_bytes);
       }},
  };
  return m;
}

const Metric& metric(const std::string& name) {
  std::string names;
  for (const auto& m : metrics()) {
    if (m.name == name) return m;
    names += (names.empty() ? "" : ", ") + m.name;
  }
  throw std::invalid_argument("unknown metric '" + name + "' (" + names + ")");
}

const char* verdict_name(Verdict v) {
  switch (v) {
    case Verdict::Ok:
      return "ok";
    case Verdict::Regressed:
      return "REGRESSED";
    case Verdict::Improved:
      return "improved";
    case Verdict::TooFewTrials:
      return "too few trials";
  }
  return "?";
}

size_t CompareResult::regressed() const {
  size_t n = 0;
  for (const auto& c : cases) n += c.verdict == Verdict::Regressed;
  return n;
}

CompareResult compare_stores(const results::ResultStore& baseline,
                             const results::ResultStore& candidate, const CompareOptions& opt) {
  const auto bt = baseline.trials(), ct = candidate.trials();
  return compare_trials(bt, ct, opt, BuildIndex(baseline, bt), BuildIndex(candidate, ct));
}

CompareResult compare_trials(const std::vector<TrialRecord>& bt, const std::vector<TrialRecord>& ct,
                             const CompareOptions& opt, const BuildIndex& bb,
                             const BuildIndex& cb) {
  std::vector<const Metric*> ms;
  for (const auto& n : opt.metrics) ms.push_back(&metric(n));
  if (ms.empty()) throw std::invalid_argument("compare: no metric given");
  if (!(opt.max_slowdown >= 0)) throw std::invalid_argument("compare: max slowdown must be >= 0");
  // case (config_key) -> build key -> trials
  using ByBuild = std::map<std::string, std::vector<const TrialRecord*>>;
  std::map<std::string, ByBuild> b, c;
  for (const auto& t : bt) b[results::case_identity_key(t)][bb.key(t)].push_back(&t);
  for (const auto& t : ct) c[results::case_identity_key(t)][cb.key(t)].push_back(&t);
  CompareResult r;
  r.split_builds = bb.split() || cb.split();
  for (const auto& [k, v] : b) r.only_baseline += !c.count(k);
  for (const auto& [k, v] : c) r.only_candidate += !b.count(k);
  // First collect every matched case-metric, so the family size is known before the intervals.
  struct Pending {
    CaseComparison cc;
    std::vector<double> bv, cv;
    bool higher_is_better;
  };
  std::vector<Pending> pending;
  for (const auto& [key, b_builds] : b) {
    auto it = c.find(key);
    if (it == c.end()) continue;
    for (const auto& [b_build, bs] : b_builds)
      for (const auto& [c_build, cs] : it->second)
        for (const Metric* m : ms) {
          Pending p;
          for (const auto* t : bs)
            if (auto x = m->get(*t); x && std::isfinite(*x) && *x > 0) p.bv.push_back(*x);
          for (const auto* t : cs)
            if (auto x = m->get(*t); x && std::isfinite(*x) && *x > 0) p.cv.push_back(*x);
          if (p.bv.empty() && p.cv.empty()) continue;  // metric not measured for this case
          const TrialRecord& t0 = *bs.front();
          CaseComparison& cc = p.cc;
          cc.case_key = key;
          cc.baseline_build = bb.of(t0);
          cc.candidate_build = cb.of(*cs.front());
          cc.method = t0.method;
          cc.params = params_label(t0.params);
          cc.model = model_label(t0.target);
          cc.workload = t0.workload;
          cc.sample_id = t0.sample_id;
          cc.context_len = t0.context_len;
          cc.metric = m->name;
          cc.n_baseline = p.bv.size();
          cc.n_candidate = p.cv.size();
          cc.baseline_median = median(p.bv);
          cc.candidate_median = median(p.cv);
          if (int(p.bv.size()) < opt.min_trials || int(p.cv.size()) < opt.min_trials)
            cc.verdict = Verdict::TooFewTrials;
          p.higher_is_better = m->higher_is_better;
          pending.push_back(std::move(p));
        }
  }
  size_t judged = 0;
  for (const auto& p : pending) judged += p.cc.verdict != Verdict::TooFewTrials;
  r.case_level =
      opt.family_wise && judged > 1 ? 1.0 - (1.0 - opt.level) / double(judged) : opt.level;
  // Enough resamples that each tail of the interval rests on >= 10 of them (capped for speed).
  const double tail = (1.0 - r.case_level) / 2.0;
  r.resamples = int(std::clamp(std::ceil(10.0 / tail), double(opt.resamples), 100000.0));
  for (auto& p : pending) {
    CaseComparison& cc = p.cc;
    std::string key = cc.case_key + "|" + cc.metric;
    if (r.split_builds) key += "|" + cc.baseline_build.key() + "|" + cc.candidate_build.key();
    // The baseline's speedup over the candidate: > 1 means "candidate worse".
    const Ratio slow = speedup_ratio(
        p.cv, p.bv, p.higher_is_better ? Direction::HigherIsBetter : Direction::LowerIsBetter, key,
        {r.resamples, opt.seed, r.case_level});
    cc.slowdown = {slow.ratio, slow.lo, slow.hi};
    cc.mann_whitney_p = mann_whitney(p.cv, p.bv).p;
    if (cc.verdict != Verdict::TooFewTrials) {
      if (cc.slowdown.lo > 1.0 + opt.max_slowdown)
        cc.verdict = Verdict::Regressed;
      else if (cc.slowdown.hi < 1.0 / (1.0 + opt.max_slowdown))
        cc.verdict = Verdict::Improved;
    }
    r.cases.push_back(std::move(cc));
  }
  return r;
}

namespace {
// The slowdown in ratio.h's cell format, three decimals.
Cell slowdown_cell(const CaseComparison& c, const CompareResult& r) {
  Ratio x;
  x.ratio = c.slowdown.estimate;
  x.lo = c.slowdown.lo;
  x.hi = c.slowdown.hi;
  x.level = r.case_level;
  x.resamples = r.resamples;
  x.baseline_n = c.n_baseline;  // JSON baseline_n / n: the baseline and candidate stores' trials
  x.candidate_n = c.n_candidate;
  return ratio_cell(x, 3);
}
}  // namespace

Table compare_table(const CompareResult& r, const CompareOptions& opt) {
  Table t;
  t.title = "Candidate vs baseline";
  if (r.split_builds) t.columns.push_back({"build", "Build", Align::Left});
  for (Column c : std::vector<Column>{{"method", "Method", Align::Left},
                                      {"params", "Params", Align::Left},
                                      {"model", "Model", Align::Left},
                                      {"context_len", "Context", Align::Right},
                                      {"workload", "Workload", Align::Left},
                                      {"sample_id", "Sample", Align::Left},
                                      {"metric", "Metric", Align::Left},
                                      {"baseline", "Baseline median", Align::Right},
                                      {"candidate", "Candidate median", Align::Right},
                                      {"slowdown", "Slowdown", Align::Right},
                                      {"p", "MW p", Align::Right},
                                      {"verdict", "Verdict", Align::Left},
                                      {"case_key", "Case", Align::Left}})
    t.columns.push_back(std::move(c));
  std::set<std::pair<std::string, std::string>> cpu_pairs;  // differing CPUs of compared sides
  for (const auto& c : r.cases) {
    char p[32];
    std::snprintf(p, sizeof p, "%.3g", c.mann_whitney_p);
    if (c.baseline_build.cpu != c.candidate_build.cpu)
      cpu_pairs.insert({c.baseline_build.cpu, c.candidate_build.cpu});
    std::vector<Cell> row;
    if (r.split_builds)
      row.push_back(Cell(c.baseline_build.label() + " → " + c.candidate_build.label()));
    for (Cell x : {
             Cell(c.method),
             Cell(c.params),
             Cell(c.model),
             Cell(std::to_string(c.context_len), c.context_len),
             Cell(c.workload),
             Cell(c.sample_id),
             Cell(c.metric),
             Cell(format_number(c.baseline_median, 4),
                  {{"median", c.baseline_median}, {"n", c.n_baseline}}),
             Cell(format_number(c.candidate_median, 4),
                  {{"median", c.candidate_median}, {"n", c.n_candidate}}),
             slowdown_cell(c, r),
             Cell(p, c.mann_whitney_p),
             Cell(verdict_name(c.verdict)),
             Cell(c.case_key.substr(0, 16), c.case_key),
         })
      row.push_back(std::move(x));
    t.rows.push_back(std::move(row));
  }
  char buf[384];
  std::snprintf(buf, sizeof buf,
                "Slowdown: ratio of medians, candidate / baseline for a time or a size, baseline / "
                "candidate for a throughput, so > 1 is worse; %.4g%% percentile-bootstrap "
                "interval per case (%g%% jointly over the judged cases), %d resamples of each "
                "side's trials; REGRESSED when the lower bound > %.4g (max slowdown %g%%).",
                r.case_level * 100, opt.level * 100, r.resamples, 1.0 + opt.max_slowdown,
                opt.max_slowdown * 100);
  t.footnotes.push_back(buf);
  if (r.split_builds)
    t.footnotes.push_back(
        "Build = baseline build → candidate build (git commit, +dirty, CPU model): a store holds "
        "several builds, so each case is compared per pair of builds and no side pools trials of "
        "different builds.");
  for (const auto& [b, c] : cpu_pairs)
    t.footnotes.push_back("Baseline CPU '" + b + "' differs from candidate CPU '" + c +
                          "': those slowdowns include the machines' difference.");
  if (r.only_baseline || r.only_candidate)
    t.footnotes.push_back("Unmatched cases: " + std::to_string(r.only_baseline) +
                          " only in baseline, " + std::to_string(r.only_candidate) +
                          " only in candidate.");
  return t;
}

}  // namespace accel::reports
