// The `suite` table: every suite's metrics aggregated per (suite, method, params, KV type, target,
// context) and, for multi-task suites, per task, as each metric's declaration in the run's suite
// record says (mean, sum, min or max over samples, with its direction in the header); then the
// suite's official summary rows (task_summary.h) when its record declares one. Reads the store
// only: a new suite appears here with no report code.
#include <cmath>
#include <map>
#include <set>

#include "reports/tables.h"
#include "reports/task_summary.h"

namespace accel::reports {

namespace {

// LongBench's two scoring choices (suites/longbench.h), which change its scores and so must label
// every row that used them: how Chinese is cut (jieba, the official; "char", an approximation that
// suite versions 1-zhchar and 2-zhchar always used) and code_sim's fuzz.ratio backend (difflib,
// the official setup; python-Levenshtein). Read from the suite params stored with the trial's run.
struct LongBenchScoring {
  std::string segmenter = "jieba", fuzz = "difflib";
};
LongBenchScoring longbench_scoring(const std::string& version, const nlohmann::json& params) {
  LongBenchScoring s;
  if (version.find("zhchar") != std::string::npos)
    s.segmenter = "char";
  else if (params.is_object() && params.contains("segmenter"))
    s.segmenter = params["segmenter"].get<std::string>();
  if (params.is_object() && params.contains("fuzz")) s.fuzz = params["fuzz"].get<std::string>();
  return s;
}
// The label's suffix for choices other than the official ones ("" for the official setup).
std::string scoring_suffix(const LongBenchScoring& s) {
  std::string out;
  if (s.segmenter != "jieba") out += " segmenter=" + s.segmenter;
  if (s.fuzz != "difflib") out += " fuzz=" + s.fuzz;
  return out;
}
std::vector<std::string> scoring_footnotes(const std::set<std::string>& segmenters,
                                           const std::set<std::string>& fuzzes) {
  std::vector<std::string> notes;
  if (segmenters.count("jieba"))
    notes.push_back(
        "LongBench's Chinese tasks (multifieldqa_zh, dureader, vcsum) are cut by "
        "jieba 0.42.1's default cut, as metrics.py does: the official scores.");
  if (segmenters.count("char"))
    notes.push_back(
        "Rows marked segmenter=char (and every longbench v1-zhchar / v2-zhchar row) "
        "cut Han text one character per token: their Chinese scores approximate "
        "metrics.py's jieba cut and are not the official ones.");
  if (fuzzes.count("difflib"))
    notes.push_back(
        "LongBench's code_sim_score (lcc, repobench-p): fuzzywuzzy 0.18.0's "
        "fuzz.ratio on difflib.SequenceMatcher (no python-Levenshtein), LongBench's "
        "official setup (fuzz=difflib).");
  if (fuzzes.count("levenshtein"))
    notes.push_back(
        "Rows marked fuzz=levenshtein: code_sim_score with fuzz.ratio on "
        "python-Levenshtein 0.12.2's ratio, as fuzzywuzzy scores where that package "
        "is installed; not LongBench's official setup, and lcc/repobench-p differ.");
  return notes;
}

struct MetricDecl {
  bool higher_is_better = true;
  std::string aggregation = "mean";
};

// What the runs' suite records declare (later runs win): every metric, and each suite's summary.
struct Declarations {
  std::map<std::string, MetricDecl> metrics;
  std::map<std::string, TaskSummaryDecl> summaries;  // by suite name
};

Declarations declarations(const results::ResultStore& store) {
  Declarations out;
  for (const auto& run : store.runs()) {
    for (const auto& m : run.suite.value("metrics", nlohmann::json::array()))
      out.metrics[m.value("name", "")] = {m.value("higher_is_better", true),
                                          m.value("aggregation", "mean")};
    if (run.suite.contains("task_summary"))
      out.summaries[run.suite.value("name", "")] =
          parse_task_summary(run.suite["task_summary"], "run " + run.run_id + " suite record");
  }
  return out;
}

double aggregate(const std::vector<double>& v, const std::string& how) {
  if (v.empty()) return NAN;
  double acc = how == "min" ? INFINITY : how == "max" ? -INFINITY : 0;
  for (double x : v)
    acc = how == "min" ? std::min(acc, x) : how == "max" ? std::max(acc, x) : acc + x;
  return how == "mean" ? acc / double(v.size()) : acc;
}

// One configuration at one length: (suite name, suite label, method, params, KV, target, context).
using GroupKey = std::tuple<std::string, std::string, std::string, std::string, std::string,
                            std::string, int64_t>;
using SampleScores = std::map<std::string, std::map<std::string, double>>;  // metric, sample
using TaskScores = std::map<std::string, SampleScores>;                     // task

Cell number_cell(double x) {
  return std::isnan(x) ? Cell("—", nullptr) : Cell(format_number(x), x);
}

// Tasks in the suite's declared order, then any others by name ("" first).
std::vector<std::string> ordered_tasks(const TaskScores& tasks, const TaskSummaryDecl* d) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  if (tasks.count("")) out.push_back(""), seen.insert("");
  if (d)
    for (const auto& t : d->tasks)
      if (tasks.count(t)) out.push_back(t), seen.insert(t);
  for (const auto& [t, _] : tasks)
    if (!seen.count(t)) out.push_back(t);
  return out;
}

class SuiteTableBuilder {
 public:
  SuiteTableBuilder(Declarations decls, bool task_column, bool score_column)
      : decls_(std::move(decls)), task_column_(task_column), score_column_(score_column) {}

  void set_metrics(std::set<std::string> metrics) { metrics_ = std::move(metrics); }

  Table build(const std::map<GroupKey, TaskScores>& groups) {
    Table tab;
    tab.title = "Suite metrics, aggregated over samples as each metric declares";
    tab.columns = {{"suite", "Suite", Align::Left},   {"method", "Method", Align::Left},
                   {"params", "Params", Align::Left}, {"kv_dtype", "KV", Align::Left},
                   {"target", "Target", Align::Left}, {"context_len", "Context", Align::Right}};
    if (task_column_) tab.columns.push_back({"task", "Task", Align::Left});
    for (const auto& m : metrics_) {
      const auto it = decls_.metrics.find(m);
      const MetricDecl d = it == decls_.metrics.end() ? MetricDecl{} : it->second;
      tab.columns.push_back(
          {m, m + " (" + d.aggregation + (d.higher_is_better ? ", ↑)" : ", ↓)"), Align::Right});
    }
    if (score_column_) tab.columns.push_back({"task_score", "Task score", Align::Right});
    tab.columns.push_back({"samples", "Samples", Align::Right});

    // Per configuration (the key without context): the overall score at each length.
    std::map<GroupKey, std::map<int64_t, std::pair<double, size_t>>> by_length;
    for (const auto& [k, tasks] : groups) {
      const TaskSummaryDecl* d = summary_of(std::get<0>(k));
      std::map<std::string, double> task_scores;
      std::map<std::string, size_t> task_samples;
      for (const auto& task : ordered_tasks(tasks, d)) {
        const SampleScores& s = tasks.at(task);
        double score = NAN;
        if (d && !task.empty()) {
          score = task_score(s, *d, task);
          if (!std::isnan(score)) task_scores[task] = score;
        }
        task_samples[task] = sample_count(s);
        tab.rows.push_back(task_row(k, task, s, score));
      }
      if (!d || task_scores.empty()) continue;
      const GroupScore all = group_mean(task_scores, d->tasks);
      add_summary_row(tab, k, d->overall, all, task_samples, d->tasks);
      for (const auto& [label, members] : d->groups)
        if (const GroupScore g = group_mean(task_scores, members); g.present)
          add_summary_row(tab, k, label, g, task_samples, members);
      if (d->length_weighted && all.present) {
        GroupKey config = k;
        std::get<6>(config) = 0;
        by_length[config][std::get<6>(k)] = {all.mean, all.present};
      }
    }
    add_length_rows(tab, by_length);
    footnotes(tab, groups.empty());
    return tab;
  }

 private:
  const TaskSummaryDecl* summary_of(const std::string& suite) const {
    const auto it = decls_.summaries.find(suite);
    return it == decls_.summaries.end() ? nullptr : &it->second;
  }

  static size_t sample_count(const SampleScores& s) {
    size_t n = 0;
    for (const auto& [m, v] : s) n = std::max(n, v.size());
    return n;
  }

  // The reference's task score: the mean of the task metric over the task's samples, rounded.
  static double task_score(const SampleScores& s, const TaskSummaryDecl& d,
                           const std::string& task) {
    const auto it = s.find(d.metric_for(task));
    if (it == s.end() || it->second.empty()) return NAN;
    std::vector<double> v;
    for (const auto& [sample, x] : it->second) v.push_back(x);
    return round_like_python(aggregate(v, "mean"), d.round_decimals);
  }

  std::vector<Cell> key_cells(const GroupKey& k, Cell context, const std::string& task) const {
    std::vector<Cell> row = {Cell(std::get<1>(k)), Cell(std::get<2>(k)), Cell(std::get<3>(k)),
                             Cell(std::get<4>(k)), Cell(std::get<5>(k)), std::move(context)};
    if (task_column_) row.push_back(Cell(task));
    return row;
  }

  static Cell context_cell(const GroupKey& k) {
    return Cell(std::to_string(std::get<6>(k)), std::get<6>(k));
  }

  std::vector<Cell> task_row(const GroupKey& k, const std::string& task, const SampleScores& s,
                             double score) const {
    std::vector<Cell> row = key_cells(k, context_cell(k), task);
    for (const auto& m : metrics_) {
      const auto it = s.find(m);
      std::vector<double> v;
      if (it != s.end())
        for (const auto& [sample, x] : it->second) v.push_back(x);
      const auto d = decls_.metrics.find(m);
      row.push_back(
          number_cell(aggregate(v, d == decls_.metrics.end() ? "mean" : d->second.aggregation)));
    }
    if (score_column_) row.push_back(number_cell(score));
    const size_t n = sample_count(s);
    row.push_back(Cell(std::to_string(n), n));
    return row;
  }

  // A mean over tasks: metric cells empty, the task score column holds the mean.
  void add_summary_row(Table& tab, const GroupKey& k, const std::string& label, const GroupScore& g,
                       const std::map<std::string, size_t>& samples,
                       const std::vector<std::string>& members) const {
    size_t n = 0;
    for (const auto& m : members)
      if (const auto it = samples.find(m); it != samples.end()) n += it->second;
    std::vector<Cell> row = key_cells(
        k, context_cell(k),
        "= " + label + " (" + std::to_string(g.present) + "/" + std::to_string(g.of) + " tasks)");
    for (size_t i = 0; i < metrics_.size(); ++i) row.push_back(Cell("", nullptr));
    row.push_back(number_cell(g.mean));
    row.push_back(Cell(std::to_string(n), n));
    tab.rows.push_back(std::move(row));
  }

  void add_length_rows(
      Table& tab,
      const std::map<GroupKey, std::map<int64_t, std::pair<double, size_t>>>& by_length) const {
    for (const auto& [config, lengths] : by_length) {
      if (lengths.size() < 2) continue;
      std::map<int64_t, double> scores;
      std::string tasks;
      for (const auto& [len, v] : lengths) {
        scores[len] = v.first;
        tasks += (tasks.empty() ? "" : ", ") + std::to_string(v.second);
      }
      const LengthAverages a = length_averages(scores);
      const std::string label =
          "= " + summary_of(std::get<0>(config))->overall + " (tasks per length: " + tasks + ")";
      for (const auto& [name, value] :
           {std::pair{"Avg", a.avg}, {"wAvg (inc)", a.wavg_inc}, {"wAvg (dec)", a.wavg_dec}}) {
        std::vector<Cell> row = key_cells(config, Cell(name, name), label);
        for (size_t i = 0; i < metrics_.size(); ++i) row.push_back(Cell("", nullptr));
        row.push_back(number_cell(value));
        row.push_back(Cell("", nullptr));
        tab.rows.push_back(std::move(row));
      }
    }
  }

  void footnotes(Table& tab, bool empty) const {
    tab.footnotes.push_back(
        "Each metric's aggregation over samples and its direction (↑ higher is better, ↓ lower) "
        "come from the suite's declaration stored with its run; trials that fell back are left "
        "out. Params: only those that vary within the method in this selection.");
    if (score_column_)
      tab.footnotes.push_back(
          "Task score: the suite's official per-task score (the mean of its task metric over the "
          "task's samples, rounded as the reference rounds it); rows \"= …\" are the reference's "
          "means of task scores (RULER: the average over tasks per length, and Avg / wAvg (inc) "
          "/ wAvg (dec) over lengths with weights 1..n / n..1 by increasing length; LongBench: "
          "per category, per language and overall). \"k/N tasks\": a mean over the k tasks "
          "present of the N the suite defines — only k = N is the published summary.");
    if (empty) tab.footnotes.push_back("No scored trials in this selection.");
  }

  Declarations decls_;
  bool task_column_, score_column_;
  std::set<std::string> metrics_;
};

}  // namespace

Table suite_table(const results::ResultStore& store, const ReportOptions& opt) {
  results::TrialFilter f;
  f.where = opt.where;
  Declarations decls = declarations(store);
  // Scores are per case, repeated on each trial: one value per (group, task, metric, sample).
  std::map<GroupKey, TaskScores> groups;
  std::set<std::string> metrics;
  bool any_task = false, any_summary = false;
  const auto trials = store.trials(f);
  const auto varying = varying_params_by_method(trials);
  std::map<std::string, nlohmann::json> suite_params;  // run_id -> its suite params
  for (const auto& r : store.runs())
    suite_params[r.run_id] = r.suite.value("params", nlohmann::json());
  std::set<std::string> segmenters, fuzzes;
  for (const auto& t : trials) {
    if (t.scores.empty() || fell_back(t)) continue;
    std::string suffix;
    if (t.workload == "longbench") {
      const LongBenchScoring sc = longbench_scoring(t.workload_version, suite_params[t.run_id]);
      segmenters.insert(sc.segmenter);
      fuzzes.insert(sc.fuzz);
      suffix = scoring_suffix(sc);
    }
    const GroupKey k{t.workload,
                     t.workload + " v" + t.workload_version + suffix,
                     t.method,
                     configuration_label(t, varying),
                     t.kv_dtype.empty() ? "f32" : t.kv_dtype,
                     model_label(t.target),
                     t.context_len};
    any_task |= !t.sample_task.empty();
    any_summary |= !t.sample_task.empty() && decls.summaries.count(t.workload);
    for (const auto& [name, v] : t.scores) {
      groups[k][t.sample_task][name][t.sample_id] = v;
      metrics.insert(name);
    }
  }
  SuiteTableBuilder b(std::move(decls), any_task, any_summary);
  b.set_metrics(std::move(metrics));
  Table tab = b.build(groups);
  for (std::string& note : scoring_footnotes(segmenters, fuzzes))
    tab.footnotes.push_back(std::move(note));
  return tab;
}

}  // namespace accel::reports
