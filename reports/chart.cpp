// Chart layouts (chart.h). Sizes are fixed in pixels so a figure reads the same at paper size;
// text widths are estimated (about 6.5 px a character at 11 px) since no font is measured.
#include "reports/chart.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <stdexcept>

#include "reports/svg.h"

namespace accel::reports {

namespace {

using svg::num;

constexpr double kCharW = 6.5;  // estimated width of an 11 px character

std::string tick_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", std::abs(v) < 1e-12 ? 0.0 : v);
  return buf;
}

// Long legend entries are cut so the figure keeps its width; the full name is in the tooltip.
std::string fit(const std::string& s, size_t max_chars) {
  if (s.size() <= max_chars) return s;
  size_t cut = max_chars - 1;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;  // UTF-8 start
  return s.substr(0, cut) + "…";
}

struct Range {
  double lo = std::numeric_limits<double>::infinity();
  double hi = -std::numeric_limits<double>::infinity();
  void add(double v) {
    if (!std::isfinite(v)) return;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  bool empty() const { return !(lo <= hi); }
  // Pads by a fraction of the span (or of the value when the span is 0).
  void pad(double frac) {
    double span = hi - lo;
    if (span <= 0) span = std::abs(lo) > 0 ? std::abs(lo) : 1;
    lo -= span * frac;
    hi += span * frac;
  }
};

void axis_titles(svg::Document& d, double left, double top, double pw, double ph, double x_label_y,
                 const std::string& x_label, const std::string& y_label) {
  d.text(left + pw / 2, x_label_y, x_label, "text-anchor=\"middle\" font-size=\"12\"");
  const double yc = top + ph / 2;
  d.text(18, yc, y_label,
         "text-anchor=\"middle\" font-size=\"12\" transform=\"rotate(-90 18 " + num(yc) + ")\"");
}

void titles(svg::Document& d, const std::string& title, const std::string& subtitle) {
  d.text(16, 22, title, "font-size=\"14\" font-weight=\"bold\"");
  if (!subtitle.empty()) d.text(16, 40, subtitle, "fill=\"#444444\"");
}

void legend(svg::Document& d, double x, double y, const std::vector<std::string>& names,
            bool squares, size_t max_chars) {
  for (size_t i = 0; i < names.size(); ++i) {
    const double yy = y + 18 * double(i);
    const std::string& c = series_color(i);
    if (squares)
      d.rect(x, yy - 9, 12, 12, c);
    else {
      d.line(x, yy - 3, x + 18, yy - 3, c, 2);
      d.circle(x + 9, yy - 3, 3.5, c);
    }
    d.raw("<g><title>" + svg::escape(names[i]) + "</title>");
    d.text(x + 24, yy + 1, fit(names[i], max_chars));
    d.raw("</g>");
  }
}

size_t longest(const std::vector<std::string>& v) {
  size_t n = 0;
  for (const auto& s : v) n = std::max(n, s.size());
  return n;
}

}  // namespace

const std::string& series_color(size_t i) {
  static const std::vector<std::string> k = {"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00",
                                             "#56B4E9", "#000000", "#8C564B", "#7F7F7F", "#BCBD22"};
  return k[i % k.size()];
}

std::vector<double> nice_ticks(double lo, double hi, int target) {
  if (!(hi > lo) || !std::isfinite(lo) || !std::isfinite(hi)) return {lo};
  const double raw = (hi - lo) / std::max(target, 1);
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0})
    if (m * mag >= raw) {
      step = m * mag;
      break;
    }
  std::vector<double> t;
  // Each tick from its index (no accumulated error), rounded to 12 significant digits so 0.6 is
  // 0.6 and not 0.6000000000000001.
  const double first = std::ceil(lo / step - 1e-9);
  for (int i = 0;; ++i) {
    const double v = (first + i) * step;
    if (v > hi + step * 1e-9) break;
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.12g", v);
    t.push_back(std::abs(v) < step * 1e-9 ? 0.0 : std::strtod(buf, nullptr));
  }
  return t;
}

std::string line_chart_svg(const LineChart& c, bool inline_svg) {
  Range xr, yr;
  size_t n_points = 0;
  for (const auto& s : c.series)
    for (const auto& p : s.points) {
      ++n_points;
      xr.add(c.x_scale == XScale::Log2 ? std::log2(p.x) : p.x);
      yr.add(p.y);
      if (std::isfinite(p.lo) && std::isfinite(p.hi)) {
        yr.add(p.lo);
        yr.add(p.hi);
      }
    }
  if (n_points == 0 || xr.empty() || yr.empty())
    throw std::invalid_argument("chart '" + c.title + "': nothing to draw");
  if (c.identity_line) {  // a common range on both axes, so y = x is the diagonal
    Range both = xr;
    both.add(yr.lo);
    both.add(yr.hi);
    xr = yr = both;
  }
  if (c.reference_y) yr.add(*c.reference_y);
  if (c.y_from_zero) yr.add(0);
  if (c.x_scale == XScale::Category) {
    xr.lo = -0.5;
    xr.hi = double(std::max<size_t>(c.categories.size(), 1)) - 0.5;
  } else if (c.x_scale == XScale::Log2) {
    xr.lo -= 0.3;
    xr.hi += 0.3;
  } else {
    xr.pad(0.05);
  }
  yr.pad(0.06);
  if (c.y_from_zero && yr.lo < 0 && std::all_of(c.series.begin(), c.series.end(), [](auto& s) {
        return std::all_of(s.points.begin(), s.points.end(), [](auto& p) { return p.y >= 0; });
      }))
    yr.lo = 0;
  if (c.identity_line) xr = yr;
  const std::vector<double> yt = nice_ticks(yr.lo, yr.hi);

  // x tick positions (in axis units) and their labels.
  std::vector<std::pair<double, std::string>> xt;
  if (c.x_scale == XScale::Category) {
    for (size_t i = 0; i < c.categories.size(); ++i) xt.push_back({double(i), c.categories[i]});
  } else if (c.x_scale == XScale::Log2) {
    std::vector<double> xs;
    for (const auto& s : c.series)
      for (const auto& p : s.points) xs.push_back(p.x);
    std::sort(xs.begin(), xs.end());
    xs.erase(std::unique(xs.begin(), xs.end()), xs.end());
    if (xs.size() > 10) {  // too many to label: the powers of two in range
      xs.clear();
      for (double e = std::ceil(xr.lo); e <= xr.hi; e += 1) xs.push_back(std::exp2(e));
    }
    for (double v : xs) xt.push_back({std::log2(v), tick_text(v)});
  } else {
    for (double v : nice_ticks(xr.lo, xr.hi)) xt.push_back({v, tick_text(v)});
  }

  const bool rotate_x =
      c.x_scale == XScale::Category && (c.categories.size() > 6 || longest(c.categories) > 10);
  const size_t name_chars = std::min<size_t>(48, longest([&] {
                                               std::vector<std::string> n;
                                               for (const auto& s : c.series) n.push_back(s.name);
                                               return n;
                                             }()));
  const double left = 78, top = c.subtitle.empty() ? 44 : 58, pw = c.plot_width, ph = c.plot_height;
  const double x_lab_h =
      rotate_x ? 14 + 0.7 * kCharW * double(std::min<size_t>(longest(c.categories), 24)) : 18;
  const double legend_x = left + pw + 24;
  const double width =
      std::max(legend_x + 24 + kCharW * double(name_chars) + 16, 16 + 8.5 * double(c.title.size()));
  const double notes_y = top + ph + x_lab_h + 34;
  const double height = std::max(notes_y + 14.0 * double(c.notes.size()) + 8,
                                 top + 18.0 * double(c.series.size()) + 16);
  svg::Document d(width, height, c.title);
  titles(d, c.title, c.subtitle);

  const auto X = [&](double v) {
    const double a = c.x_scale == XScale::Log2 ? std::log2(v) : v;
    return left + (a - xr.lo) / (xr.hi - xr.lo) * pw;
  };
  const auto Xa = [&](double a) { return left + (a - xr.lo) / (xr.hi - xr.lo) * pw; };
  const auto Y = [&](double v) { return top + ph - (v - yr.lo) / (yr.hi - yr.lo) * ph; };

  // Frame, grid and ticks.
  d.raw("<g class=\"axes\">");
  for (double v : yt) {
    if (v < yr.lo || v > yr.hi) continue;
    d.line(left, Y(v), left + pw, Y(v), "#e5e5e5");
    d.text(left - 6, Y(v) + 4, tick_text(v), "text-anchor=\"end\"");
  }
  for (const auto& [a, label] : xt) {
    if (a < xr.lo || a > xr.hi) continue;
    d.line(Xa(a), top + ph, Xa(a), top + ph + 4, "#333333");
    if (rotate_x)
      d.text(Xa(a), top + ph + 14, label,
             "text-anchor=\"end\" font-size=\"10\" transform=\"rotate(-35 " + num(Xa(a)) + " " +
                 num(top + ph + 14) + ")\"");
    else
      d.text(Xa(a), top + ph + 16, label, "text-anchor=\"middle\"");
  }
  d.rect(left, top, pw, ph, "none", "stroke=\"#333333\"");
  axis_titles(d, left, top, pw, ph, top + ph + x_lab_h + 18, c.x_label, c.y_label);
  d.raw("</g>");

  if (c.reference_y && *c.reference_y >= yr.lo && *c.reference_y <= yr.hi)
    d.line(left, Y(*c.reference_y), left + pw, Y(*c.reference_y), "#777777", 1,
           "stroke-dasharray=\"5,4\" class=\"reference\"");
  if (c.identity_line) {
    d.line(Xa(xr.lo), Y(yr.lo), Xa(xr.hi), Y(yr.hi), "#777777", 1,
           "stroke-dasharray=\"5,4\" class=\"identity\"");
    d.text(Xa(xr.hi) - 6, Y(yr.hi) + 14, "y = x", "text-anchor=\"end\" fill=\"#777777\"");
  }

  for (size_t si = 0; si < c.series.size(); ++si) {
    const ChartSeries& s = c.series[si];
    const std::string& col = series_color(si);
    std::vector<ChartPoint> pts = s.points;
    std::stable_sort(pts.begin(), pts.end(), [](auto& a, auto& b) { return a.x < b.x; });
    d.raw("<g class=\"series\" data-name=\"" + svg::escape(s.name) + "\">");
    if (c.connect && pts.size() > 1) {
      std::vector<std::pair<double, double>> line;
      for (const auto& p : pts) line.push_back({X(p.x), Y(p.y)});
      d.polyline(line, col, 1.8);
    }
    for (const auto& p : pts) {
      if (std::isfinite(p.lo) && std::isfinite(p.hi)) {
        d.line(X(p.x), Y(p.lo), X(p.x), Y(p.hi), col, 1.2, "class=\"interval\"");
        d.line(X(p.x) - 4, Y(p.lo), X(p.x) + 4, Y(p.lo), col, 1.2);
        d.line(X(p.x) - 4, Y(p.hi), X(p.x) + 4, Y(p.hi), col, 1.2);
      }
      const std::string tip = p.tip.empty() ? "" : "<title>" + svg::escape(p.tip) + "</title>";
      d.raw("<circle class=\"point\" cx=\"" + num(X(p.x)) + "\" cy=\"" + num(Y(p.y)) +
            "\" r=\"3.5\" fill=\"" + col + "\">" + tip + "</circle>");
      if (p.flagged)
        d.circle(X(p.x), Y(p.y), 7.5, "none",
                 "stroke=\"#D62728\" stroke-width=\"2\" class=\"flagged\"");
    }
    d.raw("</g>");
  }
  std::vector<std::string> names;
  for (const auto& s : c.series) names.push_back(s.name);
  legend(d, legend_x, top + 10, names, false, name_chars);
  for (size_t i = 0; i < c.notes.size(); ++i)
    d.text(16, notes_y + 14 * double(i), c.notes[i], "font-size=\"10\" fill=\"#555555\"");
  return d.str(inline_svg);
}

std::string stacked_bar_svg(const StackedBarChart& c, bool inline_svg) {
  if (c.bars.empty() || c.layers.empty())
    throw std::invalid_argument("chart '" + c.title + "': nothing to draw");
  if (c.values.size() != c.bars.size())
    throw std::invalid_argument("chart '" + c.title + "': one value row per bar expected");
  double top_value = 0;
  for (const auto& row : c.values) {
    double sum = 0;
    for (double v : row)
      if (std::isfinite(v) && v > 0) sum += v;
    top_value = std::max(top_value, sum);
  }
  if (!(top_value > 0)) top_value = 1;
  const std::vector<double> yt = nice_ticks(0, top_value * 1.05);
  const double y_hi = std::max(yt.back(), top_value * 1.05);
  const size_t n = c.bars.size();
  const double slot = std::clamp(480.0 / double(n), 22.0, 90.0);
  const double left = 78, top = c.subtitle.empty() ? 44 : 58, pw = slot * double(n), ph = 300;
  const double bw = slot * 0.62;
  const double x_lab_h = 14 + 0.7 * kCharW * double(std::min<size_t>(longest(c.bars), 40));
  const double legend_x = left + pw + 24;
  const double width = std::max(legend_x + 24 + kCharW * double(longest(c.layers)) + 16,
                                16 + 8.5 * double(c.title.size()));
  const double notes_y = top + ph + x_lab_h + 34;
  const double height = std::max(notes_y + 14.0 * double(c.notes.size()) + 8,
                                 top + 18.0 * double(c.layers.size()) + 16);
  svg::Document d(width, height, c.title);
  titles(d, c.title, c.subtitle);
  const auto Y = [&](double v) { return top + ph - v / y_hi * ph; };
  d.raw("<g class=\"axes\">");
  for (double v : yt) {
    if (v > y_hi) continue;
    d.line(left, Y(v), left + pw, Y(v), "#e5e5e5");
    d.text(left - 6, Y(v) + 4, tick_text(v), "text-anchor=\"end\"");
  }
  d.rect(left, top, pw, ph, "none", "stroke=\"#333333\"");
  for (size_t b = 0; b < n; ++b) {
    const double xc = left + slot * (double(b) + 0.5);
    d.text(xc, top + ph + 12, c.bars[b],
           "text-anchor=\"end\" font-size=\"10\" transform=\"rotate(-40 " + num(xc) + " " +
               num(top + ph + 12) + ")\"");
  }
  axis_titles(d, left, top, pw, ph, top + ph + x_lab_h + 18, c.x_label, c.y_label);
  d.raw("</g>");
  for (size_t b = 0; b < n; ++b) {
    const double x = left + slot * (double(b) + 0.5) - bw / 2;
    double base = 0;
    d.raw("<g class=\"bar\" data-label=\"" + svg::escape(c.bars[b]) + "\">");
    for (size_t l = 0; l < c.layers.size() && l < c.values[b].size(); ++l) {
      const double v = c.values[b][l];
      if (!(std::isfinite(v) && v > 0)) continue;
      char tip[64];
      std::snprintf(tip, sizeof tip, ": %.4g", v);
      d.raw("<rect class=\"segment\" x=\"" + num(x) + "\" y=\"" + num(Y(base + v)) + "\" width=\"" +
            num(bw) + "\" height=\"" + num(Y(base) - Y(base + v)) + "\" fill=\"" + series_color(l) +
            "\"><title>" + svg::escape(c.bars[b] + " " + c.layers[l] + tip) + "</title></rect>");
      base += v;
    }
    d.raw("</g>");
  }
  legend(d, legend_x, top + 10, c.layers, true, 48);
  for (size_t i = 0; i < c.notes.size(); ++i)
    d.text(16, notes_y + 14 * double(i), c.notes[i], "font-size=\"10\" fill=\"#555555\"");
  return d.str(inline_svg);
}

}  // namespace accel::reports
