// The published-values loader and the `paper` table (paper_table.h). A published row matches the
// store's trials of its method whose params contain the row's params, at its context; each match
// is taken against the row's reference (method and KV type) at the same target, context and
// workload (and build, when the store spans several), with the ratio every table uses (ratio.h),
// so the same trials print the same speedup here and in the ttft, decode and costmodel tables.
#include "reports/paper_table.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <stdexcept>
#include <tuple>

#include "reports/cost_model.h"
#include "reports/stats.h"

namespace accel::reports {

using results::TrialRecord;

const std::vector<std::string>& published_metrics() {
  static const std::vector<std::string> m = {"ttft_speedup", "decode_speedup", "kv_bytes_ratio",
                                             "score",        "costmodel",      "kernel_speedup"};
  return m;
}

int64_t parse_context_tokens(const std::string& text) {
  size_t used = 0;
  long long n = -1;
  try {
    n = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  const std::string rest = text.substr(used);
  if (used == 0 || n <= 0 || !(rest.empty() || rest == "K" || rest == "k"))
    throw std::invalid_argument("context '" + text + "' is not a token count such as 8192 or 8K");
  return rest.empty() ? int64_t(n) : int64_t(n) * 1024;
}

namespace {

// Validation of one file: every error names the file and the field.
struct Checker {
  std::string file;
  [[noreturn]] void fail(const std::string& field, const std::string& what) const {
    throw std::invalid_argument("[published] " + file + ": " + field + ": " + what);
  }
  const nlohmann::json& need(const nlohmann::json& o, const std::string& key,
                             const std::string& where) const {
    if (!o.contains(key)) fail(where + key, "missing");
    return o[key];
  }
  std::string str(const nlohmann::json& o, const std::string& key, const std::string& where,
                  bool required = true) const {
    if (!o.contains(key)) {
      if (required) fail(where + key, "missing");
      return "";
    }
    if (!o[key].is_string() || o[key].get<std::string>().empty())
      fail(where + key, "must be a non-empty string");
    return o[key].get<std::string>();
  }
  double positive(const nlohmann::json& v, const std::string& field) const {
    if (!v.is_number() || !(v.get<double>() > 0) || !std::isfinite(v.get<double>()))
      fail(field, "must be a positive number");
    return v.get<double>();
  }
  void only_keys(const nlohmann::json& o, const std::set<std::string>& allowed,
                 const std::string& where) const {
    for (auto it = o.begin(); it != o.end(); ++it)
      if (!allowed.count(it.key())) fail(where + it.key(), "unknown field");
  }
};

PublishedRow parse_row(const Checker& c, const nlohmann::json& j, const std::string& w) {
  if (!j.is_object()) c.fail(w.substr(0, w.size() - 1), "must be an object");
  c.only_keys(j,
              {"label", "metric", "method", "params", "reference", "context", "prompt_class",
               "score", "value", "absolute", "qualifier", "claim"},
              w);
  PublishedRow r;
  r.label = c.str(j, "label", w);
  r.metric = c.str(j, "metric", w);
  const auto& ms = published_metrics();
  if (std::find(ms.begin(), ms.end(), r.metric) == ms.end())
    c.fail(w + "metric", "'" + r.metric +
                             "' is not one of ttft_speedup, decode_speedup, "
                             "kv_bytes_ratio, score, costmodel, kernel_speedup");
  r.method = c.str(j, "method", w);
  if (j.contains("params")) {
    if (!j["params"].is_object()) c.fail(w + "params", "must be an object");
    r.params = j["params"];
  }
  if (j.contains("reference")) {
    const auto& ref = j["reference"];
    if (!ref.is_object()) c.fail(w + "reference", "must be an object");
    c.only_keys(ref, {"method", "kv_dtype"}, w + "reference.");
    if (ref.contains("method")) r.ref_method = c.str(ref, "method", w + "reference.");
    if (ref.contains("kv_dtype")) r.ref_kv = c.str(ref, "kv_dtype", w + "reference.");
  }
  if (j.contains("context")) {
    const auto& ctx = j["context"];
    if (ctx.is_number_integer()) {
      if (ctx.get<int64_t>() <= 0) c.fail(w + "context", "must be positive");
      r.context = {ContextSelector::Kind::Exact, ctx.get<int64_t>(),
                   std::to_string(ctx.get<int64_t>())};
    } else if (ctx.is_string()) {
      const std::string s = ctx.get<std::string>();
      if (s == "longest" || s == "shortest") {
        r.context.kind =
            s == "longest" ? ContextSelector::Kind::Longest : ContextSelector::Kind::Shortest;
      } else {
        try {
          r.context.tokens = parse_context_tokens(s);
        } catch (const std::invalid_argument& e) {
          c.fail(w + "context", e.what());
        }
        r.context.kind = ContextSelector::Kind::Exact;
      }
      r.context.text = s;
    } else {
      c.fail(w + "context", "must be a token count, \"8K\", \"longest\" or \"shortest\"");
    }
  }
  r.prompt_class = c.str(j, "prompt_class", w, false);
  r.score = c.str(j, "score", w, r.metric == "score");
  if (r.metric != "score" && !r.score.empty()) c.fail(w + "score", "only for metric 'score'");
  if (j.contains("value")) r.value = c.positive(j["value"], w + "value");
  if (j.contains("absolute")) {
    const auto& a = j["absolute"];
    if (!a.is_object()) c.fail(w + "absolute", "must be an object");
    c.only_keys(a, {"unit", "reference", "method"}, w + "absolute.");
    PublishedAbsolute abs;
    abs.unit = c.str(a, "unit", w + "absolute.");
    abs.reference = c.positive(c.need(a, "reference", w + "absolute."), w + "absolute.reference");
    abs.method = c.positive(c.need(a, "method", w + "absolute."), w + "absolute.method");
    r.absolute = abs;
  }
  r.qualifier = c.str(j, "qualifier", w, false);
  r.claim = c.str(j, "claim", w, false);
  if (!r.value && !r.absolute && r.claim.empty())
    c.fail(w.substr(0, w.size() - 1), "has neither a value, an absolute pair nor a claim");
  return r;
}

}  // namespace

PublishedSet load_published(const std::string& path) {
  const Checker c{path};
  std::ifstream in(path);
  if (!in) throw std::runtime_error("[published] " + path + ": cannot open");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (
      const nlohmann::json::exception& e) {  // parse_error, or out_of_range (a number overflows)
    throw std::invalid_argument("[published] " + path + ": not valid JSON: " + e.what());
  }
  if (!j.is_object()) c.fail("(top level)", "must be an object");
  c.only_keys(j, {"schema_version", "id", "title", "source", "setup", "rows"}, "");
  const auto& v = c.need(j, "schema_version", "");
  if (!v.is_number_integer() || v.get<int>() != 1) c.fail("schema_version", "must be 1");
  PublishedSet s;
  s.file = path;
  s.id = c.str(j, "id", "");
  for (char ch : s.id)
    if (!(std::islower((unsigned char)ch) || std::isdigit((unsigned char)ch) || ch == '-'))
      c.fail("id", "'" + s.id + "' must use only a-z, 0-9 and '-'");
  s.title = c.str(j, "title", "");
  for (const char* obj : {"source", "setup"}) {
    const auto& o = c.need(j, obj, "");
    if (!o.is_object()) c.fail(obj, "must be an object");
    for (auto it = o.begin(); it != o.end(); ++it)
      if (!it.value().is_string()) c.fail(std::string(obj) + "." + it.key(), "must be a string");
  }
  s.source = j["source"];
  s.setup = j["setup"];
  for (const char* k : {"citation", "table", "quoted_in"}) c.str(s.source, k, "source.");
  c.only_keys(s.source, {"kind", "citation", "table", "quoted_in"}, "source.");
  const std::string kind = c.str(s.source, "kind", "source.");
  if (kind != "paper" && kind != "repo") c.fail("source.kind", "must be \"paper\" or \"repo\"");
  c.only_keys(s.setup, {"hardware", "target", "draft", "software", "notes"}, "setup.");
  c.str(s.setup, "hardware", "setup.");
  c.str(s.setup, "target", "setup.");
  const auto& rows = c.need(j, "rows", "");
  if (!rows.is_array() || rows.empty()) c.fail("rows", "must be a non-empty array");
  for (size_t i = 0; i < rows.size(); ++i)
    s.rows.push_back(parse_row(c, rows[i], "rows[" + std::to_string(i) + "]."));
  return s;
}

std::vector<PublishedSet> load_published_dir(const std::string& dir) {
  namespace fs = std::filesystem;
  if (!fs::is_directory(dir))
    throw std::runtime_error("[published] " + dir + ": not a directory (pass --published DIR)");
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_regular_file() && e.path().extension() == ".json") files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  std::vector<PublishedSet> sets;
  std::map<std::string, std::string> seen;
  for (const auto& f : files) {
    sets.push_back(load_published(f));
    const auto [it, fresh] = seen.emplace(sets.back().id, f);
    if (!fresh)
      throw std::invalid_argument("[published] " + f + ": id: '" + it->first +
                                  "' is also the id of " + it->second);
  }
  std::sort(sets.begin(), sets.end(),
            [](const PublishedSet& a, const PublishedSet& b) { return a.id < b.id; });
  return sets;
}

namespace {

bool is_rate_unit(const std::string& u) {
  return u.find("/s") != std::string::npos;
}

}  // namespace

double published_ratio(const PublishedRow& row) {
  if (row.value) return *row.value;
  if (!row.absolute) return NAN;
  const auto& a = *row.absolute;
  // A throughput grows with speed; times and sizes shrink.
  return is_rate_unit(a.unit) ? a.method / a.reference : a.reference / a.method;
}

namespace {

std::string g3(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", x);
  return buf;
}

bool params_match(const nlohmann::json& want, const TrialRecord& t) {
  for (auto it = want.begin(); it != want.end(); ++it) {
    if (it.key() == "kv_dtype") {
      if (!it.value().is_string() || kv_dtype_of(t) != it.value().get<std::string>()) return false;
      continue;
    }
    if (!t.params.is_object() || !t.params.contains(it.key())) return false;
    if (t.params[it.key()] != it.value()) return false;
  }
  return true;
}

// The parity suite names samples "<class>-<index>".
bool class_match(const std::string& cls, const TrialRecord& t) {
  return cls.empty() || t.sample_id.rfind(cls + "-", 0) == 0;
}

struct Group {
  std::string build, target, target_sha, draft, params, kv, workload;
  int64_t ctx = 0;
  auto tie() const { return std::tie(build, target, target_sha, draft, params, kv, workload, ctx); }
  bool operator<(const Group& o) const { return tie() < o.tie(); }
};

// Values of one trial field for a metric; nullopt when the trial has none.
std::optional<double> value_of(const PublishedRow& row, const TrialRecord& t) {
  if (row.metric == "ttft_speedup") return t.ttft_s;
  if (row.metric == "decode_speedup") return t.decode_tok_s;
  if (row.metric == "kv_bytes_ratio")
    return t.kv_bytes > 0 ? std::optional<double>(double(t.kv_bytes)) : std::nullopt;
  if (row.metric == "score") {
    const auto it = t.scores.find(row.score);
    if (it != t.scores.end()) return it->second;
  }
  return std::nullopt;
}

// The trial metric a published row's ratio is of: the name keys its bootstrap like every table's.
std::string metric_name(const std::string& metric) {
  if (metric == "ttft_speedup") return "ttft_s";
  if (metric == "decode_speedup") return "decode_tok_s";
  if (metric == "kv_bytes_ratio") return "kv_bytes";
  return metric;
}

std::string unit_of(const std::string& metric) {
  if (metric == "ttft_speedup") return "s";
  if (metric == "decode_speedup") return "tok/s";
  if (metric == "kv_bytes_ratio") return "GB";
  return "";
}

std::string published_text(const PublishedRow& row) {
  std::string o;
  const std::string q = row.qualifier.empty() ? "" : row.qualifier + " ";
  if (row.value) o = q + g3(*row.value) + (row.metric == "score" ? "" : "×");
  if (row.absolute) {
    const auto& a = *row.absolute;
    const std::string pair = g3(a.reference) + " " + a.unit + " → " + g3(a.method) + " " + a.unit;
    if (o.empty())
      o = pair + " (" + q + format_number(published_ratio(row)) + "×)";
    else
      o += " (" + pair + ")";
  }
  return o.empty() ? "—" : o;
}

nlohmann::json published_data(const PublishedRow& row) {
  nlohmann::json d = {{"ratio", nullptr}};
  const double r = published_ratio(row);
  if (std::isfinite(r)) d["ratio"] = r;
  if (row.value) d["value"] = *row.value;
  if (row.absolute)
    d["absolute"] = {{"unit", row.absolute->unit},
                     {"reference", row.absolute->reference},
                     {"method", row.absolute->method}};
  if (!row.qualifier.empty()) d["qualifier"] = row.qualifier;
  return d;
}

std::string context_text(const ContextSelector& c) {
  return c.kind == ContextSelector::Kind::Any ? "any" : c.text;
}

std::string join(const std::set<std::string>& s, const std::string& none = "none") {
  std::string o;
  for (const auto& x : s) o += (o.empty() ? "" : ", ") + x;
  return o.empty() ? none : o;
}

std::string setup_text(const nlohmann::json& setup) {
  std::string o;
  for (const char* k : {"hardware", "target", "draft", "software", "notes"})
    if (setup.contains(k))
      o += (o.empty() ? "" : "; ") + std::string(k) + " " + setup[k].get<std::string>();
  return o;
}

// Table columns, shared by every metric so one published file prints as one table.
std::vector<Column> paper_columns() {
  return {{"row", "Published row", Align::Left},
          {"context_published", "Context (pub.)", Align::Right},
          {"published", "Published", Align::Right},
          {"context_len", "Context (store)", Align::Right},
          {"config", "Store configuration", Align::Left},
          {"measured", "Store", Align::Right},
          {"store_detail", "Store detail", Align::Left},
          {"ratio_of_ratios", "Ratio of ratios", Align::Right},
          {"note", "Note", Align::Left}};
}

std::vector<Cell> no_measurement(const PublishedRow& row, const std::string& why) {
  return {Cell(row.label),
          Cell(context_text(row.context)),
          Cell(published_text(row), published_data(row)),
          Cell("—", nullptr),
          Cell("—", nullptr),
          Cell("no measurement", nullptr),
          Cell("—", nullptr),
          Cell("—", nullptr),
          Cell(why + (row.claim.empty() ? "" : "; published: " + row.claim))};
}

Cell ratio_of_ratios(double measured, double published) {
  if (!std::isfinite(measured) || !std::isfinite(published)) return Cell("—", nullptr);
  const double x = measured / published;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", x);
  return Cell(buf, x);
}

// Cost-model rows: cost_model()'s configurations of the method, keep and context.
void costmodel_rows(const PublishedRow& row, const CostModel& cm,
                    std::vector<std::vector<Cell>>& out, std::vector<std::string>& builds) {
  std::vector<const CostModelRow*> hits;
  for (const auto& r : cm.rows) {
    if (r.method != row.method) continue;
    if (row.params.contains("keep") && r.keep != row.params["keep"]) continue;
    if (row.context.kind == ContextSelector::Kind::Exact && r.ctx != row.context.tokens) continue;
    hits.push_back(&r);
  }
  if (hits.empty()) {
    out.push_back(no_measurement(row, "no '" + row.method +
                                          "' trials with draft-scoring phases and a baseline in "
                                          "this store"));
    builds.push_back("");
    return;
  }
  const auto f = [](double x, const char* fmt) {
    if (!std::isfinite(x)) return std::string("—");
    char buf[64];
    std::snprintf(buf, sizeof buf, fmt, x);
    return std::string(buf);
  };
  const auto json_num = [](double x) {
    return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json(nullptr);
  };
  for (const auto* r : hits) {
    const nlohmann::json data = {{"predicted", json_num(r->predicted)},
                                 {"measured", r->measured_cell.data},
                                 {"G", json_num(r->G())}};
    out.push_back(
        {Cell(row.label), Cell(context_text(row.context)),
         Cell(published_text(row), published_data(row)), Cell(std::to_string(r->ctx), r->ctx),
         Cell(r->target + " / " + r->draft + ", " + r->method +
              (r->params.empty() ? "" : " (" + r->params + ")")),
         Cell("G " + f(r->G(), "%.2f"), data),
         Cell("r " + f(r->r, "%.3f") + ", k " + f(r->k, "%.3f") + ", pred. " +
              f(r->predicted, "%.2f×") + ", measured " + r->measured_cell.text + ", eps " +
              f(r->eps, "%.3f")),
         Cell("—", nullptr), Cell("no published number: the specs quote the model's form only")});
    builds.push_back(cm.builds.label(r->build));
  }
}

}  // namespace

PaperReport paper_table(const results::ResultStore& store, const PublishedSet& set,
                        const ReportOptions& opt) {
  results::TrialFilter filter;
  filter.where = opt.where;
  const std::vector<TrialRecord> trials = store.trials(filter);
  const BuildIndex builds(store, trials);
  const VaryingParams varying = varying_params_by_method(trials);

  PaperReport rep;
  Table& tab = rep.table;
  tab.title = set.title + " [" + set.id + "]";
  tab.columns = paper_columns();
  std::vector<std::string> row_builds;  // each row's build label, for the Build column
  const auto emit = [&](std::vector<Cell> cells, const std::string& build) {
    tab.rows.push_back(std::move(cells));
    row_builds.push_back(build);
  };
  std::set<std::string> targets, drafts;
  bool synthetic = false;
  std::optional<CostModel> cm;
  BackoffMarks marks;

  for (const PublishedRow& row : set.rows) {
    if (row.metric == "kernel_speedup") {
      emit(no_measurement(row,
                          "kernel timings are not in a results store (Google Benchmark JSON: "
                          "`accelbench bench-table`)"),
           "");
      continue;
    }
    if (row.metric == "costmodel") {
      if (!cm) cm = cost_model(store, opt);
      const size_t before = tab.rows.size();
      costmodel_rows(row, *cm, tab.rows, row_builds);
      if (tab.rows.size() > before && tab.rows.back()[5].text != "no measurement")
        for (const auto& r : cm->rows)
          if (r.method == row.method) {
            targets.insert(r.target);
            drafts.insert(r.draft);
            synthetic |= r.synthetic;
          }
      continue;
    }
    // Label configurations by the params that vary among the method's trials (as every table
    // does) plus the row's own; the draft has its own place in the configuration text.
    std::vector<std::string> row_keys;
    for (auto it = row.params.begin(); it != row.params.end(); ++it)
      if (it.key() != "kv_dtype") row_keys.push_back(it.key());
    std::map<Group, std::vector<const TrialRecord*>> mine;
    for (const auto& t : trials) {
      if (t.method != row.method || fell_back(t) || !params_match(row.params, t) ||
          !class_match(row.prompt_class, t))
        continue;
      // A reference row of the same method (e.g. int4 vs f16 baseline) is not its own match.
      if (t.method == row.ref_method && kv_dtype_of(t) == row.ref_kv) continue;
      if (row.context.kind == ContextSelector::Kind::Exact && t.context_len != row.context.tokens)
        continue;
      mine[{builds.key(t), model_label(t.target), t.target.sha256,
            t.draft ? model_label(*t.draft) : "",
            configuration_label(t, varying, {"draft"}, row_keys), kv_dtype_of(t), t.workload,
            t.context_len}]
          .push_back(&t);
    }
    if (row.context.kind == ContextSelector::Kind::Longest ||
        row.context.kind == ContextSelector::Kind::Shortest) {
      // Keep one context per configuration: the longest (or shortest) the store has.
      std::map<Group, int64_t> pick;
      for (const auto& [g, ts] : mine) {
        Group k = g;
        k.ctx = 0;
        auto [it, fresh] = pick.emplace(k, g.ctx);
        if (!fresh)
          it->second = row.context.kind == ContextSelector::Kind::Longest
                           ? std::max(it->second, g.ctx)
                           : std::min(it->second, g.ctx);
      }
      std::erase_if(mine, [&](const auto& kv) {
        Group k = kv.first;
        k.ctx = 0;
        return pick.at(k) != kv.first.ctx;
      });
    }
    if (mine.empty()) {
      std::string why = "no '" + row.method + "' trials";
      if (!row.params.empty()) why += " with " + params_label(row.params);
      if (!row.prompt_class.empty()) why += " on prompt class " + row.prompt_class;
      if (row.context.kind == ContextSelector::Kind::Exact)
        why += " at context " + std::to_string(row.context.tokens);
      emit(no_measurement(row, why + " in this store"), "");
      continue;
    }
    const double pub = published_ratio(row);
    const auto value = [&row](const TrialRecord& t) { return value_of(row, t); };
    for (const auto& [g, ts] : mine) {
      std::vector<const TrialRecord*> ref;
      for (const auto& t : trials)
        if (t.method == row.ref_method && kv_dtype_of(t) == row.ref_kv &&
            builds.key(t) == g.build && t.target.sha256 == g.target_sha && t.context_len == g.ctx &&
            t.workload == g.workload && !fell_back(t) && class_match(row.prompt_class, t))
          ref.push_back(&t);
      const TrialSample ms = sample_of(ts, value), rs = sample_of(ref, value);
      const std::vector<double>&mv = ms.values, &rv = rs.values;
      targets.insert(g.target);
      if (!g.draft.empty()) drafts.insert(g.draft);
      synthetic |= ts.front()->target.config.contains("synthetic_family");
      std::string config = g.target + (g.draft.empty() ? "" : " / " + g.draft) + ", " + row.method +
                           (g.params.empty() ? "" : " (" + g.params + ")");
      if (g.kv != "f32") config += ", KV " + g.kv;
      std::vector<Cell> out = {Cell(row.label), Cell(context_text(row.context)),
                               Cell(published_text(row), published_data(row)),
                               Cell(std::to_string(g.ctx), g.ctx), Cell(config)};
      const std::string build = builds.split() ? builds.of(*ts.front()).label() : "";
      const std::string ref_name =
          "'" + row.ref_method + "'" + (row.ref_kv == "f32" ? "" : " (KV " + row.ref_kv + ")");
      if (mv.empty()) {
        out.insert(out.end(),
                   {Cell("no measurement", nullptr), Cell("—", nullptr), Cell("—", nullptr),
                    Cell("matching trials record no " +
                         (row.metric == "score" ? "'" + row.score + "' score"
                                                : std::string("value for ") + row.metric))});
        emit(std::move(out), build);
        continue;
      }
      if (row.metric == "score") {
        const double m = mean(mv);
        out.push_back(Cell(format_number(m), {{"mean", m}, {"n", mv.size()}}));
        out.push_back(rv.empty() ? Cell("no " + ref_name + " score to compare", nullptr)
                                 : Cell("retention vs " + ref_name + ": " +
                                            format_number(mean(mv) / mean(rv)),
                                        {{"reference_mean", mean(rv)}}));
        out.push_back(row.value ? ratio_of_ratios(m, *row.value) : Cell("—", nullptr));
        out.push_back(Cell(row.claim.empty() ? "" : "published: " + row.claim));
        emit(std::move(out), build);
        continue;
      }
      if (rv.empty()) {
        out.insert(out.end(),
                   {Cell("no measurement", nullptr), Cell("—", nullptr), Cell("—", nullptr),
                    Cell("no " + ref_name +
                         " trials at this target, context and "
                         "workload to take the ratio against")});
        emit(std::move(out), build);
        continue;
      }
      // Every ratio is "how many times better": a throughput grows, a time or a size shrinks.
      const bool rate = row.metric == "decode_speedup";
      const Ratio ratio =
          trials_ratio(rs, ms, rate ? Direction::HigherIsBetter : Direction::LowerIsBetter,
                       metric_name(row.metric), opt.ratio());
      Cell m = ratio_cell(ratio);
      if (row.metric != "kv_bytes_ratio") marks.mark(m, rs.trials, ms.trials);
      const double scale = row.metric == "kv_bytes_ratio" ? 1e-9 : 1.0;
      const std::string unit = unit_of(row.metric);
      out.push_back(m);
      out.push_back(Cell(format_number(median(rv) * scale) + " " + unit + " → " +
                             format_number(median(mv) * scale) + " " + unit,
                         {{"reference_median", median(rv) * scale},
                          {"method_median", median(mv) * scale},
                          {"unit", unit}}));
      out.push_back(ratio_of_ratios(ratio.ratio, pub));
      std::string note = std::isfinite(pub) ? "" : "no published ratio";
      if (!row.claim.empty()) note += (note.empty() ? "" : "; ") + ("published: " + row.claim);
      out.push_back(Cell(note));
      emit(std::move(out), build);
    }
  }
  if (builds.split()) {
    tab.columns.insert(tab.columns.begin() + 4, BuildIndex::column());
    for (size_t i = 0; i < tab.rows.size(); ++i)
      tab.rows[i].insert(tab.rows[i].begin() + 4,
                         row_builds[i].empty() ? Cell("—", nullptr) : Cell(row_builds[i]));
  }

  std::set<std::string> cpus, hosts;
  for (const auto& r : store.runs()) {
    if (!r.cpu_model.empty())
      cpus.insert(r.cpu_model + " (" + std::to_string(r.threads) + " threads)");
    if (!r.hostname.empty()) hosts.insert(r.hostname);
  }
  rep.header.push_back("Published: " + set.title + ". Source (" +
                       set.source["kind"].get<std::string>() +
                       "): " + set.source["citation"].get<std::string>() + "; " +
                       set.source["table"].get<std::string>() + ". Quoted in " +
                       set.source["quoted_in"].get<std::string>() + ".");
  rep.header.push_back("Published setup: " + setup_text(set.setup) + ".");
  rep.header.push_back("This store: CPU " + join(cpus, "not recorded") + " on host(s) " +
                       join(hosts, "not recorded") + "; target(s) " + join(targets) +
                       "; draft(s) " + join(drafts) + ".");
  rep.header.push_back(
      "Hardware and models differ, so absolute times do not compare: 'Ratio of ratios' = this "
      "store's ratio / the published ratio (1.00 = the published speedup reproduced; for a "
      "score, store mean / published value).");
  if (synthetic)
    rep.header.push_back(
        "The store's targets are random-weight synthetic models: timings are real; scores are "
        "agreement with the baseline only, not task quality.");
  tab.footnotes.push_back(
      std::string(
          "Store: ratio of medians of the row's method against its reference at the same ") +
      (builds.split() ? "build, " : "") +
      "target, context and workload, reference / method for a time or a size, method / "
      "reference for a throughput (Store detail gives the two medians); " +
      interval_text(opt.ratio()) + ".");
  tab.footnotes.push_back(
      "Fallback trials excluded. Rows with no matching trials say 'no measurement'.");
  if (!builds.footnote().empty()) tab.footnotes.push_back(builds.footnote());
  if (!marks.footnote().empty()) tab.footnotes.push_back(marks.footnote());
  // Cost-model rows carry cost_model()'s "†" marks, which this table's marks never saw.
  if (cm && !cm->backoff_note.empty())
    tab.footnotes.push_back("Cost-model rows: " + cm->backoff_note);
  return rep;
}

Table published_list_table(const std::vector<PublishedSet>& sets) {
  Table t;
  t.title = "Published value files";
  t.columns = {{"id", "Id (--paper)", Align::Left},
               {"title", "Title", Align::Left},
               {"source", "Source", Align::Left},
               {"rows", "Rows", Align::Right},
               {"file", "File", Align::Left}};
  for (const auto& s : sets)
    t.rows.push_back({Cell(s.id), Cell(s.title), Cell(s.source["citation"].get<std::string>()),
                      Cell(std::to_string(s.rows.size()), s.rows.size()),
                      Cell(std::filesystem::path(s.file).filename().string())});
  return t;
}

std::string render_paper(const PaperReport& r, Format f) {
  switch (f) {
    case Format::Json:
      return nlohmann::json({{"header", r.header}, {"table", to_json(r.table)}}).dump(2) + "\n";
    case Format::Csv:
      return to_csv(r.table);
    case Format::Latex: {
      std::string o;
      for (const auto& h : r.header) o += "% " + h + "\n";
      return o + to_latex(r.table);
    }
    case Format::Markdown: {
      std::string o;
      for (const auto& h : r.header) o += h + "\n\n";
      return o + to_markdown(r.table);
    }
  }
  return to_markdown(r.table);
}

}  // namespace accel::reports
