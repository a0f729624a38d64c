// The `pld` table: Prompt Lookup Decoding's decode speed against greedy decoding per prompt class
// (the parity suite's sample classes), as the seed study's table reports it, with what explains a
// speedup: acceptance, tokens committed per verify step, the ceiling that acceptance allows
// (baseline step time x tokens per step / verify step time), how close the run came to it, the
// drafter's share of decode time and greedy parity. Reads the store only.
#include <map>
#include <set>
#include <tuple>

#include "reports/stats.h"
#include "reports/tables.h"

namespace accel::reports {

namespace {

using results::TrialRecord;

// The parity suite names samples "<class>-<index>"; other suites' samples count as their workload.
std::string prompt_class(const TrialRecord& t) {
  if (t.workload != "parity") return t.workload;
  const size_t dash = t.sample_id.rfind('-');
  return dash == std::string::npos ? t.sample_id : t.sample_id.substr(0, dash);
}

// (build, target, class, context, KV): the cell a PLD row is compared within.
using Group = std::tuple<std::string, std::string, std::string, int64_t, std::string>;

struct Row {
  std::vector<const TrialRecord*> trials;  // those with a decode speed
  double drafted = 0, accepted = 0, committed = 0, verify_steps = 0;
  double verify_s = 0, drafter_s = 0, decode_s = 0;
  std::vector<double> parity;
};

double stat(const nlohmann::json& s, const char* k) {
  return s.contains(k) && s[k].is_number() ? s[k].get<double>() : 0.0;
}

void add(Row& r, const TrialRecord& t) {
  if (!t.decode_tok_s || *t.decode_tok_s <= 0) return;
  r.trials.push_back(&t);
  r.decode_s += double(t.decode_tokens - 1) / *t.decode_tok_s;
  const auto& s = t.stats;
  r.drafted += stat(s, "drafted_tokens");
  r.accepted += stat(s, "accepted_tokens");
  r.verify_steps += stat(s, "verify_steps");
  r.committed += stat(s, "tokens_per_step") * stat(s, "verify_steps");
  r.verify_s += stat(s, "verify_s");
  r.drafter_s += stat(s, "drafter_s");
  if (const auto it = t.scores.find("parity.exact"); it != t.scores.end())
    r.parity.push_back(it->second);
}

// A derived figure with a unit ("×" for ratios without an interval).
Cell figure_cell(double x, const char* unit = "×") {
  if (!(x == x)) return Cell("—", nullptr);
  return Cell(format_number(x) + unit, x);
}

Cell number_cell(double x) {
  return figure_cell(x, "");
}

}  // namespace

Table pld_table(const results::ResultStore& store, const ReportOptions& opt) {
  results::TrialFilter f;
  f.where = opt.where;
  std::vector<TrialRecord> trials;
  for (auto& t : store.trials(f))
    if (!t.error) trials.push_back(std::move(t));
  const BuildIndex builds(store, trials);
  const auto varying = varying_params_by_method(trials);
  std::map<Group, Row> base;
  std::map<std::pair<Group, std::string>, Row> pld;
  for (const auto& t : trials) {
    const Group g{builds.key(t), model_label(t.target), prompt_class(t), t.context_len,
                  kv_dtype_of(t)};
    if (t.method == opt.baseline_method) add(base[g], t);
    if (t.method == "pld") add(pld[{g, configuration_label(t, varying)}], t);
  }
  if (pld.empty())
    throw std::invalid_argument("report pld: no successful pld trials in the selection");

  Table tb;
  tb.title = "Prompt Lookup Decoding: decode speed against greedy decoding";
  if (builds.split()) tb.columns.push_back(BuildIndex::column());
  for (Column c : std::vector<Column>{{"target", "Target"},
                                      {"class", "Prompt class"},
                                      {"context", "Context"},
                                      {"kv", "KV"},
                                      {"config", "PLD config"},
                                      {"base_tok_s", "Baseline tok/s"},
                                      {"pld_tok_s", "PLD tok/s"},
                                      {"speedup", "Speedup"},
                                      {"acceptance", "Accepted"},
                                      {"tokens_per_step", "Tok/step"},
                                      {"ceiling", "Ceiling"},
                                      {"of_ceiling", "Of ceiling"},
                                      {"drafter_share", "Drafter"},
                                      {"parity", "Parity"}})
    tb.columns.push_back(std::move(c));
  const auto tok_s = [](const TrialRecord& t) { return t.decode_tok_s; };
  BackoffMarks marks;
  for (const auto& [key, r] : pld) {
    const auto& [g, label] = key;
    const auto& [build, target, cls, ctx, kv] = g;
    const auto b = base.find(g);
    const TrialSample bs = b == base.end() ? TrialSample{} : sample_of(b->second.trials, tok_s);
    const TrialSample ps = sample_of(r.trials, tok_s);
    const double base_step = 1.0 / median(bs.values);
    const double tps = r.verify_steps > 0 ? r.committed / r.verify_steps : NAN;
    const double verify_step = r.verify_steps > 0 ? r.verify_s / r.verify_steps : NAN;
    const double ceiling = tps * base_step / verify_step;
    const Ratio sp = trials_ratio(bs, ps, Direction::HigherIsBetter, "decode_tok_s", opt.ratio());
    Cell sp_cell = ratio_cell(sp), base_cell = number_cell(median(bs.values)),
         pld_cell = number_cell(median(ps.values));
    marks.mark(sp_cell, bs.trials, ps.trials);
    marks.mark(base_cell, bs.trials);
    marks.mark(pld_cell, ps.trials);
    std::vector<Cell> row;
    if (builds.split()) row.push_back(Cell(builds.label(build)));
    for (Cell c : {Cell(target), Cell(cls), Cell(std::to_string(ctx), ctx), Cell(kv),
                   Cell(label.empty() ? "(as preset)" : label), base_cell, pld_cell, sp_cell,
                   figure_cell(r.drafted > 0 ? r.accepted / r.drafted : NAN, ""),
                   figure_cell(tps, ""), figure_cell(ceiling), figure_cell(sp.ratio / ceiling, ""),
                   figure_cell(r.decode_s > 0 ? r.drafter_s / r.decode_s : NAN, ""),
                   r.parity.empty() ? Cell("—", nullptr) : figure_cell(mean(r.parity), "")})
      row.push_back(std::move(c));
    tb.rows.push_back(std::move(row));
  }
  tb.footnotes = {
      ratio_footnote("Speedup",
                     "decode tok/s; baseline = the `" + opt.baseline_method +
                         "` method at the same " + (builds.split() ? "build, " : "") +
                         "target, prompt class, context and KV type",
                     Direction::HigherIsBetter, opt.ratio()),
      "Baseline tok/s and PLD tok/s: medians over trials. Accepted = accepted / drafted tokens; "
      "Tok/step = committed tokens per verify step; Ceiling = baseline step time (1 / median "
      "tok/s) x Tok/step / PLD's mean verify step time (the speedup that acceptance allows at "
      "this verify cost); Of ceiling = Speedup / Ceiling; Drafter = drafter seconds / decode "
      "seconds.",
      "Parity = share of samples whose tokens equal the reference's (parity suite only)."};
  if (!builds.footnote().empty()) tb.footnotes.push_back(builds.footnote());
  if (!marks.footnote().empty()) tb.footnotes.push_back(marks.footnote());
  return tb;
}

}  // namespace accel::reports
