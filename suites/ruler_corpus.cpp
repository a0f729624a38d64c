// Essay loading (cached per path) and the derived word lists (ruler_corpus.h).
#include "suites/ruler_corpus.h"

#include <algorithm>
#include <array>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>
#include <utility>

#include "suites/python_text.h"
#include "suites/ruler_text.h"

namespace accel::ruler {

namespace {

constexpr uintmax_t kMaxEssayBytes = uintmax_t(64) << 20;

// Function words of 4+ letters (the common-word list is for content words).
constexpr std::string_view kStopWords[] = {
    "about",    "above",    "after",     "again",      "against",    "almost",  "along",
    "already",  "also",     "although",  "always",     "among",      "another", "anyone",
    "anything", "anyway",   "around",    "because",    "been",       "before",  "behind",
    "being",    "below",    "between",   "both",       "cannot",     "could",   "does",
    "doing",    "down",     "during",    "each",       "either",     "else",    "enough",
    "even",     "ever",     "every",     "everyone",   "everything", "from",    "further",
    "have",     "having",   "hence",     "here",       "herself",    "himself", "however",
    "into",     "itself",   "just",      "least",      "less",       "like",    "many",
    "might",    "more",     "most",      "much",       "must",       "myself",  "neither",
    "never",    "nobody",   "none",      "nothing",    "often",      "once",    "only",
    "onto",     "other",    "others",    "ourselves",  "over",       "perhaps", "quite",
    "rather",   "really",   "same",      "shall",      "should",     "since",   "some",
    "somebody", "someone",  "something", "sometimes",  "still",      "such",    "than",
    "that",     "their",    "them",      "themselves", "then",       "there",   "therefore",
    "these",    "they",     "this",      "those",      "though",     "through", "thus",
    "together", "under",    "unless",    "until",      "upon",       "very",    "were",
    "what",     "whatever", "when",      "whenever",   "where",      "whether", "which",
    "while",    "whom",     "whose",     "will",       "with",       "would",   "your"};

bool stop_word(std::string_view w) {
  return std::find(std::begin(kStopWords), std::end(kStopWords), w) != std::end(kStopWords);
}

bool ends_with_any(std::string_view w, std::initializer_list<std::string_view> suffixes,
                   size_t min_stem) {
  for (std::string_view s : suffixes)
    if (w.size() >= s.size() + min_stem && w.substr(w.size() - s.size()) == s) return true;
  return false;
}

bool letter(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

std::string read_bounded(const std::filesystem::path& f, uintmax_t& budget,
                         const std::string& who) {
  std::error_code ec;
  const uintmax_t size = std::filesystem::file_size(f, ec);
  if (ec) throw std::invalid_argument(who + ": cannot read '" + f.string() + "'");
  if (size > budget)
    throw std::invalid_argument(who + ": essay text '" + f.string() + "' is larger than the " +
                                std::to_string(kMaxEssayBytes >> 20) + " MiB limit");
  budget -= size;
  std::ifstream in(f, std::ios::binary);
  std::string s(size_t(size), '\0');
  if (!in.read(s.data(), std::streamsize(size)))
    throw std::invalid_argument(who + ": cannot read '" + f.string() + "'");
  const size_t bad = pytext::utf8_invalid_at(s);
  if (bad != std::string::npos)
    throw std::invalid_argument(who + ": essay text '" + f.string() + "': invalid UTF-8 at byte " +
                                std::to_string(bad));
  return s;
}

// "PATH#bytes=A:B" -> PATH and the byte range [A, B) of the joined text (nullopt: all of it).
// The capable family's plans use it to draw haystacks from the essays it never trained on.
std::pair<std::string, std::optional<std::pair<size_t, size_t>>> split_byte_range(
    const std::string& data, const std::string& who) {
  const size_t at = data.rfind("#bytes=");
  if (at == std::string::npos) return {data, std::nullopt};
  const std::string range = data.substr(at + 7);
  const size_t colon = range.find(':');
  const auto number = [&](const std::string& t) {
    if (t.empty() || t.size() > 12 || !std::all_of(t.begin(), t.end(), ::isdigit))
      throw std::invalid_argument(who + ": data '" + data +
                                  "': the byte range must read #bytes=START:END (decimal)");
    return size_t(std::stoull(t));
  };
  if (colon == std::string::npos) number("");
  const size_t a = number(range.substr(0, colon)), b = number(range.substr(colon + 1));
  if (a >= b) throw std::invalid_argument(who + ": data '" + data + "': empty byte range");
  return {data.substr(0, at), std::make_pair(a, b)};
}

std::shared_ptr<const EssayCorpus> build(const std::string& data_arg, const std::string& who) {
  namespace fs = std::filesystem;
  const auto [data, range] = split_byte_range(data_arg, who);
  std::vector<fs::path> files;
  std::error_code ec;
  if (fs::is_directory(data, ec)) {
    for (const auto& e : fs::directory_iterator(data, ec))
      if (e.is_regular_file() && e.path().extension() == ".txt") files.push_back(e.path());
    std::sort(files.begin(), files.end(),
              [](const fs::path& a, const fs::path& b) { return a.string() < b.string(); });
  } else if (fs::is_regular_file(data, ec)) {
    files.push_back(data);
  }
  if (files.empty())
    throw std::invalid_argument(who + ": no essay text at data '" + data +
                                "' (need a text file or a directory of .txt files)");
  std::string text;
  uintmax_t budget = kMaxEssayBytes;
  for (const auto& f : files) text += read_bounded(f, budget, who);
  if (range) {
    if (range->second > text.size())
      throw std::invalid_argument(who + ": data '" + data_arg + "': the byte range ends past the " +
                                  std::to_string(text.size()) + " bytes of text");
    text = text.substr(range->first, range->second - range->first);
    if (const size_t bad = pytext::utf8_invalid_at(text); bad != std::string::npos)
      throw std::invalid_argument(who + ": data '" + data_arg +
                                  "': the byte range cuts a UTF-8 character (at byte " +
                                  std::to_string(range->first + bad) + ")");
  }
  auto c = std::make_shared<EssayCorpus>();
  c->source = data_arg;
  c->haystack = py_collapse_split(text);
  c->words = words_from_text(text);
  c->text = std::move(text);
  if (c->words.adjs.empty() || c->words.nouns.empty())
    throw std::invalid_argument(who + ": essay text at data '" + data +
                                "' has too few words to draw keys from");
  return c;
}

}  // namespace

WordLists words_from_text(std::string_view text) {
  std::set<std::string> common;
  for (size_t i = 0; i < text.size();) {
    if (!letter(text[i])) {
      ++i;
      continue;
    }
    const size_t b = i;
    while (i < text.size() && letter(text[i])) ++i;
    // Skip contraction pieces ("don" of "don't") and words glued to digits or other scripts.
    const auto glued = [&](size_t k) {
      const unsigned char c = uint8_t(text[k]);
      return c == '\'' || c >= 0x80 || (c >= '0' && c <= '9') || c == '_';
    };
    if ((b > 0 && glued(b - 1)) || (i < text.size() && glued(i))) continue;
    const std::string_view w = text.substr(b, i - b);
    if (w.size() < 4 || w.size() > 14) continue;
    if (!std::all_of(w.begin(), w.end(), [](char c) { return c >= 'a' && c <= 'z'; })) continue;
    if (stop_word(w)) continue;
    common.emplace(w);
  }
  WordLists out;
  for (const std::string& w : common) {
    out.common.push_back(w);
    if (ends_with_any(w, {"able", "ible", "ful", "ive", "less", "ous", "ical", "ish", "ary", "ic"},
                      3))
      out.adjs.push_back(w);
    else if (ends_with_any(w,
                           {"tion", "sion", "ment", "ness", "ity", "ship", "ism", "ist", "ance",
                            "ence", "dom", "hood", "ure", "er", "or"},
                           3))
      out.nouns.push_back(w);
  }
  return out;
}

std::shared_ptr<const EssayCorpus> load_essays(const std::string& data, const std::string& who) {
  if (data.empty())
    throw std::invalid_argument(who +
                                ": needs the suite parameter 'data' (the Paul Graham "
                                "essays: a text file or a directory of .txt files, e.g. "
                                "../shared/data/niah)");
  static std::mutex mu;
  static std::map<std::string, std::shared_ptr<const EssayCorpus>> cache;
  std::lock_guard<std::mutex> lock(mu);
  auto& slot = cache[data];
  if (!slot) slot = build(data, who);
  return slot;
}

}  // namespace accel::ruler
