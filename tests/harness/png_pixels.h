// A minimal PNG reader for the browser tests: 8-bit RGB or RGBA, non-interlaced (what chromium's
// --screenshot writes), decoded with zlib, so a test can look at a screenshot's pixels. Anything
// else throws std::runtime_error naming the file and what it could not read.
#pragma once
#include <zlib.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

namespace accel::test {

struct PngImage {
  uint32_t width = 0, height = 0;
  std::vector<uint32_t> rgb;  // row-major, 0xRRGGBB (alpha dropped)
};

inline PngImage read_png(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  const auto fail = [&](const std::string& why) { throw std::runtime_error(path + ": " + why); };
  const auto be32 = [&](size_t at) {
    if (at + 4 > bytes.size()) fail("truncated");
    uint32_t v = 0;
    for (size_t i = 0; i < 4; ++i) v = v << 8 | static_cast<unsigned char>(bytes[at + i]);
    return v;
  };
  if (bytes.compare(0, 8, "\x89PNG\r\n\x1a\n") != 0) fail("not a PNG (bad signature)");
  PngImage img;
  int channels = 0;
  std::string idat;
  for (size_t at = 8; at + 8 <= bytes.size();) {
    const uint32_t len = be32(at);
    const std::string type = bytes.substr(at + 4, 4);
    if (at + 12 + len > bytes.size()) fail("chunk " + type + " runs past the end");
    const std::string data = bytes.substr(at + 8, len);
    if (type == "IHDR") {
      img.width = be32(at + 8);
      img.height = be32(at + 12);
      const int depth = data[8], colour = data[9], interlace = data[12];
      if (depth != 8 || (colour != 2 && colour != 6) || interlace != 0)
        fail("only 8-bit non-interlaced RGB/RGBA is read");
      channels = colour == 6 ? 4 : 3;
    } else if (type == "IDAT") {
      idat += data;
    } else if (type == "IEND") {
      break;
    }
    at += 12 + len;
  }
  if (channels == 0 || img.width == 0 || img.height == 0) fail("no image header");
  const size_t stride = size_t(img.width) * channels;
  std::vector<unsigned char> raw((stride + 1) * img.height);
  uLongf raw_len = raw.size();
  if (uncompress(raw.data(), &raw_len, reinterpret_cast<const Bytef*>(idat.data()), idat.size()) !=
          Z_OK ||
      raw_len != raw.size())
    fail("image data does not inflate to " + std::to_string(raw.size()) + " bytes");
  // Undo the per-row filters (PNG spec section 9) in place, row by row.
  std::vector<unsigned char> prev(stride, 0), row(stride);
  img.rgb.reserve(size_t(img.width) * img.height);
  for (uint32_t y = 0; y < img.height; ++y) {
    const unsigned char* in = &raw[y * (stride + 1)];
    const int filter = in[0];
    for (size_t i = 0; i < stride; ++i) {
      const int a = i >= size_t(channels) ? row[i - channels] : 0, b = prev[i],
                c = i >= size_t(channels) ? prev[i - channels] : 0;
      int pred = 0;
      switch (filter) {
        case 0:
          pred = 0;
          break;
        case 1:
          pred = a;
          break;
        case 2:
          pred = b;
          break;
        case 3:
          pred = (a + b) / 2;
          break;
        case 4: {
          const int p = a + b - c, pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
          pred = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
          break;
        }
        default:
          fail("unknown row filter " + std::to_string(filter));
      }
      row[i] = static_cast<unsigned char>(in[1 + i] + pred);
    }
    for (size_t x = 0; x < img.width; ++x) {
      const unsigned char* p = &row[x * channels];
      img.rgb.push_back(uint32_t(p[0]) << 16 | uint32_t(p[1]) << 8 | p[2]);
    }
    prev.swap(row);
  }
  return img;
}

}  // namespace accel::test
