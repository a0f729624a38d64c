// The SVG writer (svg.h). Every number goes through num() so output is byte-stable.
#include "reports/svg.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <system_error>

namespace accel::reports::svg {

std::string escape(const std::string& s) {
  std::string o;
  o.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        o += "&amp;";
        break;
      case '<':
        o += "&lt;";
        break;
      case '>':
        o += "&gt;";
        break;
      case '"':
        o += "&quot;";
        break;
      case '\'':
        o += "&apos;";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n' && c != '\r')
          o += ' ';
        else
          o += c;
    }
  }
  return o;
}

std::string num(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", x);
  if (std::string(buf) == "-0.0") return "0.0";  // the same picture must give the same bytes
  return buf;
}

Document::Document(double width, double height, std::string title)
    : width_(width), height_(height), title_(std::move(title)) {}

void Document::raw(const std::string& element) {
  body_ += element;
  body_ += '\n';
}

void Document::rect(double x, double y, double w, double h, const std::string& fill,
                    const std::string& attrs) {
  raw("<rect x=\"" + num(x) + "\" y=\"" + num(y) + "\" width=\"" + num(w) + "\" height=\"" +
      num(h) + "\" fill=\"" + fill + "\"" + (attrs.empty() ? "" : " " + attrs) + "/>");
}

void Document::line(double x1, double y1, double x2, double y2, const std::string& stroke,
                    double stroke_width, const std::string& attrs) {
  raw("<line x1=\"" + num(x1) + "\" y1=\"" + num(y1) + "\" x2=\"" + num(x2) + "\" y2=\"" + num(y2) +
      "\" stroke=\"" + stroke + "\" stroke-width=\"" + num(stroke_width) + "\"" +
      (attrs.empty() ? "" : " " + attrs) + "/>");
}

void Document::polyline(const std::vector<std::pair<double, double>>& pts,
                        const std::string& stroke, double stroke_width, const std::string& attrs) {
  std::string p;
  for (const auto& [x, y] : pts) {
    if (!p.empty()) p += ' ';
    p += num(x);
    p += ',';
    p += num(y);
  }
  raw("<polyline points=\"" + p + "\" fill=\"none\" stroke=\"" + stroke + "\" stroke-width=\"" +
      num(stroke_width) + "\"" + (attrs.empty() ? "" : " " + attrs) + "/>");
}

void Document::circle(double cx, double cy, double r, const std::string& fill,
                      const std::string& attrs) {
  raw("<circle cx=\"" + num(cx) + "\" cy=\"" + num(cy) + "\" r=\"" + num(r) + "\" fill=\"" + fill +
      "\"" + (attrs.empty() ? "" : " " + attrs) + "/>");
}

void Document::text(double x, double y, const std::string& text, const std::string& attrs) {
  raw("<text x=\"" + num(x) + "\" y=\"" + num(y) + "\"" + (attrs.empty() ? "" : " " + attrs) + ">" +
      escape(text) + "</text>");
}

std::string Document::str(bool inline_svg) const {
  std::string o;
  if (!inline_svg) o += "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  o += "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"" + num(width_) +
       "\" height=\"" + num(height_) + "\" viewBox=\"0 0 " + num(width_) + " " + num(height_) +
       "\" font-family=\"DejaVu Sans, Arial, sans-serif\" font-size=\"11\">\n";
  o += "<title>" + escape(title_) + "</title>\n";
  o += "<rect x=\"0\" y=\"0\" width=\"" + num(width_) + "\" height=\"" + num(height_) +
       "\" fill=\"#ffffff\"/>\n";
  o += body_;
  o += "</svg>\n";
  return o;
}

void write_file(const std::string& path, const std::string& content) {
  namespace fs = std::filesystem;
  const fs::path p(path);
  if (p.has_parent_path() && !fs::is_directory(p.parent_path()))
    throw std::runtime_error("cannot write '" + path + "': no directory '" +
                             p.parent_path().string() + "'");
  const fs::path tmp = p.string() + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    f << content;
    f.close();
    if (!f) {
      std::error_code ec;
      fs::remove(tmp, ec);
      throw std::runtime_error("cannot write '" + path + "'");
    }
  }
  std::error_code ec;
  fs::rename(tmp, p, ec);
  if (ec) {
    fs::remove(tmp, ec);
    throw std::runtime_error("cannot write '" + path + "': " + ec.message());
  }
}

std::string file_slug(const std::string& label) {
  std::string out;
  for (char c : label) {
    const bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '.' || c == '_';
    if (keep)
      out += c;
    else if (!out.empty() && out.back() != '-')
      out += '-';
  }
  return out;
}

}  // namespace accel::reports::svg
