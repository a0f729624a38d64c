// The NIAH grid table and heatmaps (niah_report.h). Scores repeat on every trial of a case, so a
// sample counts once per (configuration, context length, sample id).
#include "reports/niah_report.h"

#include "reports/svg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <stdexcept>
#include <tuple>

namespace accel::reports {

namespace {

using results::TrialRecord;

constexpr const char* kScore = "niah.score";
constexpr const char* kDepth = "niah.depth";

// (not the baseline, target, method, params, KV): the baseline's grids come first.
using ConfigKey = std::tuple<bool, std::string, std::string, std::string, std::string>;

std::string depth_text(double d) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", d);
  return buf;
}

std::string score_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", s);
  return buf;
}

// The SVG text and coordinate formats are svg.h's, shared with the other figures.
std::string xml_escape(const std::string& s) {
  return svg::escape(s);
}

std::string num(double x) {
  return svg::num(x);
}  // SVG coordinates

}  // namespace

std::string NiahGrid::label() const {
  std::string s = method + (params.empty() ? "" : " " + params) + " (" + target;
  s += ", KV " + kv + ")";
  return s;
}

std::vector<NiahGrid> niah_grids(const results::ResultStore& store, const ReportOptions& opt) {
  results::TrialFilter f;
  f.where = opt.where;
  const auto trials = store.trials(f);
  const auto varying = varying_params_by_method(trials);
  struct Acc {
    NiahGrid g;
    std::set<std::tuple<int64_t, std::string>> seen;  // (length, sample id)
    std::map<std::pair<double, int64_t>, std::vector<double>> values;
  };
  std::map<ConfigKey, Acc> acc;
  std::set<double> depths;
  std::set<int64_t> lengths;
  for (const auto& t : trials) {
    const auto s = t.scores.find(kScore);
    const auto d = t.scores.find(kDepth);
    if (s == t.scores.end() || d == t.scores.end()) continue;
    // Only the parameters that vary within the method label a grid, plus the draft and input
    // files, so two auxiliaries or predictors of one method stay apart.
    const nlohmann::json p = configuration_params(t, varying);
    const std::string params = p.empty() ? std::string() : params_label(p);
    const std::string kv = kv_dtype_of(t);
    const ConfigKey key{t.method != opt.baseline_method, model_label(t.target), t.method, params,
                        kv};
    Acc& a = acc[key];
    a.g.target = std::get<1>(key);
    a.g.method = t.method;
    a.g.params = params;
    a.g.kv = kv;
    a.g.synthetic = a.g.synthetic ||
                    (t.target.config.is_object() && t.target.config.contains("synthetic_family"));
    if (fell_back(t)) {
      ++a.g.fallbacks;
      continue;
    }
    if (!a.seen.insert({t.context_len, t.sample_id}).second) continue;
    a.values[{d->second, t.context_len}].push_back(s->second);
    depths.insert(d->second);
    lengths.insert(t.context_len);
  }
  std::vector<NiahGrid> out;
  for (auto& [key, a] : acc) {
    NiahGrid g = std::move(a.g);
    g.depths.assign(depths.begin(), depths.end());
    g.lengths.assign(lengths.begin(), lengths.end());
    double total = 0;
    for (const auto& [cell, v] : a.values) {
      double sum = 0;
      for (double x : v) sum += x;
      g.cells[cell] = {sum / double(v.size()), v.size()};
      total += sum;
      g.samples += v.size();
    }
    g.mean = g.samples ? total / double(g.samples) : NAN;
    out.push_back(std::move(g));
  }
  return out;
}

Table niah_table(const results::ResultStore& store, const ReportOptions& opt) {
  const auto grids = niah_grids(store, opt);
  std::set<std::string> targets, kvs;
  for (const auto& g : grids) targets.insert(g.target), kvs.insert(g.kv);
  const bool show_target = targets.size() > 1;
  const bool show_kv = kvs.size() > 1 || (kvs.size() == 1 && *kvs.begin() != "f32");

  Table t;
  t.title = "NIAH: needle score (0-100) by depth and context length";
  t.columns = {{"method", "Method", Align::Left}, {"params", "Params", Align::Left}};
  if (show_target) t.columns.push_back({"target", "Target", Align::Left});
  if (show_kv) t.columns.push_back({"kv_dtype", "KV", Align::Left});
  t.columns.push_back({"depth", "Depth (%)", Align::Right});
  const std::vector<int64_t> lengths = grids.empty() ? std::vector<int64_t>{} : grids[0].lengths;
  for (int64_t len : lengths)
    t.columns.push_back({"score@" + std::to_string(len), std::to_string(len), Align::Right});
  t.columns.push_back({"mean", "Mean", Align::Right});

  const auto cell = [](double sum, size_t n) {
    if (n == 0) return Cell("—", nullptr);
    const double m = sum / double(n);
    return Cell(score_text(m), {{"mean", m}, {"n", n}});
  };
  size_t fallbacks = 0;
  std::set<size_t> ns;
  for (const auto& g : grids) {
    fallbacks += g.fallbacks;
    std::vector<Cell> lead = {Cell(g.method), Cell(g.params)};
    if (show_target) lead.push_back(Cell(g.target));
    if (show_kv) lead.push_back(Cell(g.kv));
    std::map<int64_t, std::pair<double, size_t>> by_length;  // over depths
    for (double d : g.depths) {
      std::vector<Cell> row = lead;
      row.push_back(Cell(depth_text(d), d));
      double sum = 0;
      size_t n = 0;
      for (int64_t len : lengths) {
        const auto it = g.cells.find({d, len});
        if (it == g.cells.end()) {
          row.push_back(Cell("—", nullptr));
          continue;
        }
        const double s = it->second.mean * double(it->second.n);
        row.push_back(cell(s, it->second.n));
        ns.insert(it->second.n);
        sum += s, n += it->second.n;
        by_length[len].first += s, by_length[len].second += it->second.n;
      }
      row.push_back(cell(sum, n));
      t.rows.push_back(std::move(row));
    }
    std::vector<Cell> all = lead;
    all.push_back(Cell("all", "all"));
    for (int64_t len : lengths) all.push_back(cell(by_length[len].first, by_length[len].second));
    all.push_back(g.samples ? Cell(score_text(g.mean), {{"mean", g.mean}, {"n", g.samples}})
                            : Cell("—", nullptr));
    t.rows.push_back(std::move(all));
  }

  std::string samples = "—";
  if (!ns.empty())
    samples = *ns.begin() == *ns.rbegin()
                  ? std::to_string(*ns.begin())
                  : std::to_string(*ns.begin()) + "-" + std::to_string(*ns.rbegin());
  t.footnotes.push_back(
      "Cell = mean niah.score over samples (100: the generation contains the needle's value); "
      "columns are context lengths in tokens; samples per cell: " +
      samples + "; \"all\" = every depth. Heatmaps: --svg DIR.");
  std::set<std::string> synthetic;
  for (const auto& g : grids)
    if (g.synthetic) synthetic.insert(g.target);
  for (const auto& m : synthetic)
    t.footnotes.push_back(m +
                          " is a random-weight synthetic model: its scores say nothing about "
                          "retrieval.");
  if (fallbacks)
    t.footnotes.push_back(std::to_string(fallbacks) +
                          " trial(s) fell back to the method's full path and are left out.");
  if (grids.empty()) t.footnotes.push_back("No niah scores in this selection.");
  return t;
}

std::string niah_color(double score) {
  static const int kStops[3][3] = {{0xF0, 0x49, 0x6E}, {0xEB, 0xB8, 0x39}, {0x0C, 0xD7, 0x9F}};
  const double x = std::clamp(std::isnan(score) ? 0.0 : score, 0.0, 100.0) / 50.0;  // [0, 2]
  const int seg = x >= 1.0 ? 1 : 0;
  const double f = x - seg;
  char buf[8];
  int c[3];
  for (int i = 0; i < 3; ++i)
    c[i] = int(std::lround(kStops[seg][i] + f * (kStops[seg + 1][i] - kStops[seg][i])));
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", c[0], c[1], c[2]);
  return buf;
}

std::string niah_svg(const NiahGrid& g) {
  const size_t cols = std::max<size_t>(g.lengths.size(), 1);
  const size_t rows = std::max<size_t>(g.depths.size(), 1);
  const double cw = std::clamp(560.0 / double(cols), 40.0, 96.0);
  const double ch = std::clamp(330.0 / double(rows), 18.0, 34.0);
  const double left = 78, top = 74, gap = 24, bar_w = 16, right = 70, bottom = 56;
  const double gw = cw * double(cols), gh = ch * double(rows);
  const std::string title = "NIAH: " + g.method + (g.params.empty() ? "" : " " + g.params);
  const std::string sub = g.target + ", KV " + g.kv + ", mean " +
                          (g.samples ? score_text(g.mean) : std::string("—")) + " over " +
                          std::to_string(g.samples) + " sample(s)";
  const std::string note = g.synthetic ? "random-weight model: scores carry no retrieval meaning"
                                       : "score: 100 when the generation contains the needle";
  // Wide enough for the text lines (about 8.5 px a character at 14 px bold, 6.5 at 11 px).
  const double width = std::max({left + gw + gap + bar_w + right, 16 + 8.5 * double(title.size()),
                                 16 + 6.5 * double(std::max(sub.size(), note.size()))});
  const double height = top + gh + bottom;

  std::string o;
  o += "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  o += "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"" + num(width) +
       "\" height=\"" + num(height) + "\" viewBox=\"0 0 " + num(width) + " " + num(height) +
       "\" font-family=\"DejaVu Sans, Arial, sans-serif\" font-size=\"11\">\n";
  o += "<title>" + xml_escape("NIAH heatmap: " + g.label()) + "</title>\n";
  o += "<defs><linearGradient id=\"niah-scale\" x1=\"0\" y1=\"1\" x2=\"0\" y2=\"0\">"
       "<stop offset=\"0\" stop-color=\"" +
       niah_color(0) + "\"/><stop offset=\"0.5\" stop-color=\"" + niah_color(50) +
       "\"/><stop offset=\"1\" stop-color=\"" + niah_color(100) + "\"/></linearGradient></defs>\n";
  o += "<rect x=\"0\" y=\"0\" width=\"" + num(width) + "\" height=\"" + num(height) +
       "\" fill=\"#ffffff\"/>\n";
  o += "<text x=\"16\" y=\"22\" font-size=\"14\" font-weight=\"bold\">" + xml_escape(title) +
       "</text>\n";
  o += "<text x=\"16\" y=\"40\" fill=\"#444444\">" + xml_escape(sub) + "</text>\n";
  o +=
      "<text x=\"16\" y=\"55\" fill=\"#777777\" font-size=\"10\">" + xml_escape(note) + "</text>\n";

  o += "<g class=\"grid\">\n";
  for (size_t r = 0; r < g.depths.size(); ++r) {
    const double d = g.depths[r];
    const double y = top + ch * double(r);
    for (size_t c = 0; c < g.lengths.size(); ++c) {
      const int64_t len = g.lengths[c];
      const double x = left + cw * double(c);
      const auto it = g.cells.find({d, len});
      const std::string geo = "x=\"" + num(x) + "\" y=\"" + num(y) + "\" width=\"" + num(cw) +
                              "\" height=\"" + num(ch) + "\"";
      const std::string where =
          " data-depth=\"" + depth_text(d) + "\" data-length=\"" + std::to_string(len) + "\"";
      if (it == g.cells.end()) {
        o += "<rect class=\"cell missing\" " + geo + where +
             " fill=\"#d9d9d9\" stroke=\"#ffffff\"><title>depth " + depth_text(d) + "%, " +
             std::to_string(len) + " tokens: not run</title></rect>\n";
        continue;
      }
      const NiahCell& cell = it->second;
      o += "<rect class=\"cell\" " + geo + where + " data-score=\"" + score_text(cell.mean) +
           "\" data-n=\"" + std::to_string(cell.n) + "\" fill=\"" + niah_color(cell.mean) +
           "\" stroke=\"#ffffff\"><title>depth " + depth_text(d) + "%, " + std::to_string(len) +
           " tokens: " + score_text(cell.mean) + " (n=" + std::to_string(cell.n) +
           ")</title></rect>\n";
      if (cw >= 40 && ch >= 16)
        o += "<text x=\"" + num(x + cw / 2) + "\" y=\"" + num(y + ch / 2 + 4) +
             "\" text-anchor=\"middle\" font-size=\"10\" fill=\"#1a1a1a\">" +
             score_text(cell.mean) + "</text>\n";
    }
  }
  o += "</g>\n";

  // Axes: depths down the left (0% at the top, as the notebook's heatmap), lengths along the
  // bottom.
  for (size_t r = 0; r < g.depths.size(); ++r)
    o += "<text x=\"" + num(left - 6) + "\" y=\"" + num(top + ch * (double(r) + 0.5) + 4) +
         "\" text-anchor=\"end\">" + depth_text(g.depths[r]) + "</text>\n";
  for (size_t c = 0; c < g.lengths.size(); ++c)
    o += "<text x=\"" + num(left + cw * (double(c) + 0.5)) + "\" y=\"" + num(top + gh + 16) +
         "\" text-anchor=\"middle\">" + std::to_string(g.lengths[c]) + "</text>\n";
  o += "<text x=\"" + num(left + gw / 2) + "\" y=\"" + num(top + gh + 40) +
       "\" text-anchor=\"middle\">Context length (tokens)</text>\n";
  o += "<text x=\"18\" y=\"" + num(top + gh / 2) +
       "\" text-anchor=\"middle\" transform=\"rotate(-90 18 " + num(top + gh / 2) +
       ")\">Needle depth (%)</text>\n";

  // Colour bar: 0 at the bottom, 100 at the top.
  const double bx = left + gw + gap;
  o += "<rect class=\"scale\" x=\"" + num(bx) + "\" y=\"" + num(top) + "\" width=\"" + num(bar_w) +
       "\" height=\"" + num(gh) + "\" fill=\"url(#niah-scale)\" stroke=\"#999999\"/>\n";
  for (int v : {0, 50, 100})
    o += "<text x=\"" + num(bx + bar_w + 5) + "\" y=\"" + num(top + gh * (1 - v / 100.0) + 4) +
         "\">" + std::to_string(v) + "</text>\n";
  o += "<text x=\"" + num(bx) + "\" y=\"" + num(top - 8) + "\">Score</text>\n";
  o += "</svg>\n";
  return o;
}

std::vector<std::string> write_niah_heatmaps(const results::ResultStore& store,
                                             const ReportOptions& opt, const std::string& dir) {
  const auto grids = niah_grids(store, opt);
  if (grids.empty())
    throw std::invalid_argument(
        "report --svg: no niah scores in this selection (run the niah "
        "suite first)");
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw std::runtime_error("report --svg: cannot create '" + dir + "': " + ec.message());
  std::vector<std::string> paths;
  std::set<std::string> used;
  for (const auto& g : grids) {
    const std::string slug =
        svg::file_slug(g.method + "_" + g.params + "_" + g.kv + "_" + g.target);
    std::string name = "niah-" + slug;
    for (int i = 2; used.count(name); ++i) name = "niah-" + slug + "-" + std::to_string(i);
    used.insert(name);
    const std::string path = (fs::path(dir) / (name + ".svg")).string();
    try {
      svg::write_file(path, niah_svg(g));
    } catch (const std::runtime_error& e) {
      throw std::runtime_error(std::string("report --svg: ") + e.what());
    }
    paths.push_back(path);
  }
  return paths;
}

}  // namespace accel::reports
