// Chart layouts over the SVG writer: an x-y chart (lines or scatter, interval bars, a log2 or
// categorical x axis, reference lines, legend) and stacked bars. Charts take plain numbers and
// labels and return SVG text; they never read the store or compute statistics (plots.* and
// dashboard.* do, through the report tables and compare).
#pragma once
#include <cmath>
#include <optional>
#include <string>
#include <vector>

namespace accel::reports {

struct ChartPoint {
  double x = 0, y = 0;
  double lo = NAN, hi = NAN;  // an interval bar when both are finite
  std::string tip;            // a tooltip (<title>) for the marker
  bool flagged = false;       // drawn with a red ring (a regression on the dashboard)
};

struct ChartSeries {
  std::string name;
  std::vector<ChartPoint> points;  // drawn in x order
};

enum class XScale { Linear, Log2, Category };

struct LineChart {
  std::string title, subtitle;
  std::string x_label, y_label;  // with units, e.g. "Context length (tokens)"
  XScale x_scale = XScale::Linear;
  std::vector<std::string> categories;  // Category: point x = index into this
  std::vector<ChartSeries> series;
  bool connect = true;                // lines between a series' points (false: scatter)
  bool identity_line = false;         // the y = x diagonal (predicted vs measured)
  std::optional<double> reference_y;  // a dashed horizontal line (e.g. speedup 1)
  bool y_from_zero = false;           // include 0 in the y range
  std::vector<std::string> notes;     // small lines under the plot
  double plot_width = 480, plot_height = 300;
};

// A self-contained SVG (see svg::Document). Throws std::invalid_argument when no series has a
// point. `inline_svg` leaves out the XML declaration for embedding in HTML.
std::string line_chart_svg(const LineChart& c, bool inline_svg = false);

struct StackedBarChart {
  std::string title, subtitle;
  std::string x_label, y_label;
  std::vector<std::string> bars;            // one label per bar
  std::vector<std::string> layers;          // one legend entry per stacked layer
  std::vector<std::vector<double>> values;  // [bar][layer]; NaN or <= 0 draws nothing
  std::vector<std::string> notes;
};
std::string stacked_bar_svg(const StackedBarChart& c, bool inline_svg = false);

// Axis ticks: about `target` round values (1, 2, 2.5, 5 x 10^n) covering [lo, hi].
std::vector<double> nice_ticks(double lo, double hi, int target = 5);
// The colour of series i (Okabe-Ito, colour-blind safe; cycles).
const std::string& series_color(size_t i);

}  // namespace accel::reports
