// The NIAH grid report: per configuration (target, method, the params that vary within the
// method, KV type) the mean `niah.score` of every (needle depth, context length) cell, read from
// the trials' scores (the depth is the `niah.depth` score the suite stores with each sample, the
// length the trial's context length). `report --table niah` prints the grids as one table;
// `report --table niah --svg DIR` also draws one heatmap per configuration, the figure of
// gkamradt's viz/CreateVizFromLLMTesting.ipynb (x: context length, y: depth, 0% at the top,
// colour: score on its colormap #F0496E -> #EBB839 -> #0CD79F). Reads the store only.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "reports/tables.h"

namespace accel::reports {

struct NiahCell {
  double mean = 0;  // mean niah.score over the cell's samples (0-100)
  size_t n = 0;     // samples
};

struct NiahGrid {
  std::string target, method, params, kv;
  bool synthetic = false;        // a random-weight synthetic target
  std::vector<double> depths;    // ascending, every depth any configuration has
  std::vector<int64_t> lengths;  // ascending, every context length any configuration has
  std::map<std::pair<double, int64_t>, NiahCell> cells;  // (depth, length); absent: not run
  double mean = 0;                                       // over all samples of the grid
  size_t samples = 0;
  size_t fallbacks = 0;  // trials left out because the method fell back
  // "method params (target, KV kv)" as the heatmap's title says it.
  std::string label() const;
};

// The grids of every configuration with niah scores in the selection, baseline first, then by
// (target, method, params, KV). Trials that fell back are left out (counted in `fallbacks`).
std::vector<NiahGrid> niah_grids(const results::ResultStore& store, const ReportOptions& opt);

// Row = configuration x depth (then "all": the mean over depths), one column per context length
// and a mean column; cell = mean score with its sample count in the JSON data.
Table niah_table(const results::ResultStore& store, const ReportOptions& opt);

// The colour of a score in [0, 100] (clamped): linear in RGB between #F0496E (0), #EBB839 (50)
// and #0CD79F (100), each channel rounded; "#rrggbb".
std::string niah_color(double score);

// One configuration's heatmap: a self-contained SVG 1.1 document (no scripts, fonts or external
// references). Each cell is a <rect class="cell"> with data-depth, data-length, data-score and
// data-n attributes, filled with niah_color(score) and labelled with its score; a cell with no
// samples is class "cell missing" in grey. A colour bar shows the scale.
std::string niah_svg(const NiahGrid& g);

// Writes niah_svg() of every grid to DIR/niah-<configuration>.svg (DIR is created) and returns
// the paths written, in grid order. Throws std::runtime_error naming a file it cannot write, and
// std::invalid_argument when the selection has no niah scores.
std::vector<std::string> write_niah_heatmaps(const results::ResultStore& store,
                                             const ReportOptions& opt, const std::string& dir);

}  // namespace accel::reports
