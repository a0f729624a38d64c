// The Chinese segmentation choice of LongBench's metrics (longbench_segmenter.h).
#include "suites/longbench_segmenter.h"

#include <stdexcept>

#include "suites/jieba_data.h"
#include "suites/longbench_text.h"

namespace accel::longbench {

std::vector<U32> ZhSegmenter::cut(std::u32string_view s) const {
  if (kind == Kind::Char) return char_cut(s);
  return jieba::shared_segmenter(jieba_dir)->cut(s);
}

ZhSegmenter::Kind ZhSegmenter::parse_kind(const std::string& name) {
  if (name == "jieba") return Kind::Jieba;
  if (name == "char") return Kind::Char;
  throw std::invalid_argument("unknown Chinese segmenter '" + name + "' (jieba or char)");
}

}  // namespace accel::longbench
