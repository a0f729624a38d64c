// A small dependency-free SVG 1.1 writer shared by every figure of the reports layer: XML
// escaping, fixed-precision coordinates (so the same data always gives the same bytes), an
// element builder, and the all-or-nothing file write. Knows nothing of charts, stores or data.
#pragma once
#include <string>
#include <utility>
#include <vector>

namespace accel::reports::svg {

// XML text/attribute escaping; C0 controls other than tab/newline/CR become spaces (XML 1.0).
std::string escape(const std::string& s);
// A coordinate with one decimal ("12.5"): enough for print, and locale-independent.
std::string num(double x);

// A self-contained SVG document (no scripts, fonts or external references): elements are
// appended in drawing order; str() wraps them in the XML header and the <svg> root with a white
// background and a <title>. Attribute strings passed as `attrs` are written verbatim.
class Document {
 public:
  Document(double width, double height, std::string title);
  double width() const { return width_; }
  double height() const { return height_; }
  void raw(const std::string& element);  // a pre-built element (newline added)
  void rect(double x, double y, double w, double h, const std::string& fill,
            const std::string& attrs = "");
  void line(double x1, double y1, double x2, double y2, const std::string& stroke,
            double stroke_width = 1, const std::string& attrs = "");
  void polyline(const std::vector<std::pair<double, double>>& pts, const std::string& stroke,
                double stroke_width = 1.5, const std::string& attrs = "");
  void circle(double cx, double cy, double r, const std::string& fill,
              const std::string& attrs = "");
  // `text` is escaped; `attrs` e.g. "text-anchor=\"end\" font-size=\"10\"".
  void text(double x, double y, const std::string& text, const std::string& attrs = "");
  // The document; `inline_svg` leaves out the XML declaration (for embedding in HTML).
  std::string str(bool inline_svg = false) const;

 private:
  double width_, height_;
  std::string title_, body_;
};

// Writes `content` to `path` all or nothing: a temporary file beside it, then rename, so a failed
// write never leaves a half-written file. Throws std::runtime_error naming the path.
void write_file(const std::string& path, const std::string& content);

// A file-name stem from a label: letters, digits, '.' and '_' kept, every other run of characters
// one '-' (e.g. "tiny/target ruler 4096" -> "tiny-target-ruler-4096").
std::string file_slug(const std::string& label);

}  // namespace accel::reports::svg
