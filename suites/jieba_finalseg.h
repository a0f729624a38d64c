// jieba 0.42.1's finalseg.cut, the HMM segmentation jieba applies to the characters its
// dictionary left single: runs of [\u4E00-\u9FD5] are cut by Viterbi over the B/M/E/S states,
// other text is split by re_skip [a-zA-Z0-9]+(?:\.\d+)?%?. Owns that algorithm only; the tables
// are jieba_hmm.h's, and the dictionary pass that calls it is jieba_segmenter.h's.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "suites/jieba_hmm.h"

namespace accel::jieba {

// finalseg.viterbi(obs, 'BMES', ...)'s path for a non-empty run of [\u4E00-\u9FD5] characters.
std::vector<State> viterbi_path(const HmmTables& hmm, std::u32string_view obs);

// Appends finalseg.cut(s) to `out`. `s` must consist of re_han_default characters
// [\u4E00-\u9FD5a-zA-Z0-9+#&._%-], as every buffer jieba hands it does, so re_skip's \d is an
// ASCII digit here. Force_Split_Words is empty (only jieba.del_word fills it).
void finalseg_cut(const HmmTables& hmm, std::u32string_view s, std::vector<std::u32string>& out);

}  // namespace accel::jieba
