// The essay text RULER draws on and the word lists we derive from it. RULER reads
// json/PaulGrahamEssays.json (the 49 essays of gkamradt's needle-in-a-haystack repository in file
// name order, then essays scraped from paulgraham.com); ../shared/data/niah holds exactly those
// 49 files joined in the same order, so our haystack is the first 111,877 words of RULER's and
// differs only past them (it repeats from the start, RULER goes on with the scraped essays).
//
// Word lists: RULER takes nouns, adjectives and verbs from the `wonderwords` package, which is not
// available offline. We take the words of the same essays instead: every lowercase ASCII word of
// 4-14 letters that is not a function word is "common" (cwe's list), and adjectives and nouns are
// picked from those by suffix (-able/-ible/-ful/-ive/-less/-ous/-ical/-ish/-ary/-ic;
// -tion/-sion/-ment/-ness/-ity/-ship/-ism/-ist/-ance/-ence/-dom/-hood/-ure/-er/-or): a heuristic,
// not a part-of-speech tagger. RULER's fallback list (json/english_words.json, a git-lfs file) is
// replaced by the adjective-noun keys.
#pragma once
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace accel::ruler {

struct WordLists {
  std::vector<std::string> adjs, nouns;  // sorted, distinct
  std::vector<std::string> common;       // sorted, distinct (cwe's nouns + adjectives + verbs)
  // RULER's `words` for niah: sorted(set(f"{adj}-{noun}")). Index order is (adj, noun) order,
  // which equals the sorted order because words hold letters only and '-' sorts before them.
  size_t n_keys() const { return adjs.size() * nouns.size(); }
  std::string key(size_t i) const { return adjs[i / nouns.size()] + "-" + nouns[i % nouns.size()]; }
};

// The lists above, from any text.
WordLists words_from_text(std::string_view text);

struct EssayCorpus {
  std::string source;                 // the path given
  std::string text;                   // the files joined, as read (the NIAH haystack, niah.h)
  std::vector<std::string> haystack;  // re.sub(r"\s+", " ", text).split(" ")
  WordLists words;
};

// Reads `data` (a text file, or a directory whose .txt files are joined in byte order of name,
// as RULER's download script joins them) once per process; later calls share it. A suffix
// "#bytes=START:END" keeps only bytes [START, END) of the joined text (e.g. a model's held-out
// essays); a range past the end or cutting a UTF-8 character throws. Throws
// std::invalid_argument starting with `who` when `data` is empty, unreadable, larger than 64 MiB,
// not UTF-8 (naming the file and byte offset) or holds no words.
std::shared_ptr<const EssayCorpus> load_essays(const std::string& data, const std::string& who);

}  // namespace accel::ruler
