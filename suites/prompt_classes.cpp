// Prompt classes (prompt_classes.h). Each class is a TextSource: a header (unit 0), an endless,
// seeded sequence of body units (records, sentences, functions, essay lines), and a tail. Units
// are encoded one by one so that filling a long context costs one pass over its text, and the
// body is cut in tokens so that the prompt length is exact for any tokenizer. The RNG is our own
// splitmix64: the standard distributions are not portable across library versions.
#include "suites/prompt_classes.h"

#include <algorithm>
#include <array>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string_view>

#include "suites/synthetic_prompt.h"

namespace accel {

namespace {

uint64_t mix(uint64_t a, uint64_t b) {
  uint64_t z = a + 0x9e3779b97f4a7c15ull * (b + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// A seeded stream of draws for one unit: unit i of a prompt depends only on (seed, i).
struct Draws {
  uint64_t state;
  uint64_t next() { return state = mix(state, 0x5851f42d4c957f2dull); }
  template <size_t N>
  std::string_view pick(const std::array<std::string_view, N>& a) {
    return a[next() % N];
  }
  int in(int lo, int hi) { return lo + int(next() % uint64_t(hi - lo + 1)); }
};

// clang-format off
constexpr std::array<std::string_view, 16> kFirst = {
    "Ada", "Bruno", "Chen", "Dara", "Elif", "Farid", "Greta", "Hugo",
    "Ines", "Jonas", "Kenji", "Lena", "Mateo", "Nadia", "Omar", "Priya"};
constexpr std::array<std::string_view, 16> kLast = {
    "Moreno", "Okafor", "Lindqvist", "Tanaka", "Novak", "Haddad", "Silva", "Kowalski",
    "Berg", "Rossi", "Nguyen", "Petrov", "Mensah", "Dubois", "Ibrahim", "Keller"};
constexpr std::array<std::string_view, 12> kCity = {
    "Lisbon", "Accra", "Osaka", "Tallinn", "Quito", "Lyon", "Pune", "Bergen",
    "Cork", "Tunis", "Perth", "Graz"};
constexpr std::array<std::string_view, 12> kAdj = {
    "quiet", "old", "narrow", "bright", "heavy", "distant", "small", "patient",
    "restless", "careful", "silver", "early"};
constexpr std::array<std::string_view, 12> kNoun = {
    "keeper", "river", "lantern", "engine", "garden", "traveler", "archive", "bridge",
    "market", "signal", "harbor", "orchard"};
constexpr std::array<std::string_view, 10> kVerb = {
    "watched", "crossed", "repaired", "followed", "described", "carried", "measured",
    "ignored", "remembered", "opened"};
constexpr std::array<std::string_view, 8> kPlace = {
    "station", "hill", "square", "coast", "library", "valley", "workshop", "gate"};
constexpr std::array<std::string_view, 8> kAction = {
    "scale", "merge", "count", "clamp", "rotate", "filter", "encode", "sum"};
constexpr std::array<std::string_view, 8> kThing = {
    "buffer", "rows", "weights", "tokens", "bins", "window", "offsets", "samples"};
// clang-format on

class TextSource {
 public:
  virtual ~TextSource() = default;
  virtual std::string unit(size_t i) const = 0;  // i == 0: the header
  virtual bool quotes_unit() const { return false; }
  virtual std::string tail(size_t quoted) const = 0;
  virtual nlohmann::json meta() const { return nlohmann::json::object(); }
};

class JsonRag : public TextSource {
 public:
  explicit JsonRag(uint64_t seed) : seed_(seed) {}
  std::string unit(size_t i) const override {
    if (i == 0) return "Records (JSON):\n[\n";
    const Record r = record(i);
    std::ostringstream o;
    o << "  {\"id\": " << r.id << ", \"name\": \"" << r.name << "\", \"city\": \"" << r.city
      << "\", \"age\": " << r.age << ", \"email\": \"" << r.email << "\", \"score\": " << r.score
      << "},\n";
    return o.str();
  }
  bool quotes_unit() const override { return true; }
  std::string tail(size_t q) const override {
    const Record r = record(q);
    return "]\n\nQuestion: what are the \"city\" and \"email\" of the record with \"id\": " +
           std::to_string(r.id) + " and \"name\": \"" + r.name + "\"?\nAnswer: ";
  }

 private:
  struct Record {
    int id = 0, age = 0;
    std::string name, city, email, score;
  };
  Record record(size_t i) const {
    Draws d{mix(seed_, i)};
    Record r;
    r.id = 1000 + int(i);
    const std::string first(d.pick(kFirst)), last(d.pick(kLast));
    r.name = first + " " + last;
    r.city = d.pick(kCity);
    r.age = d.in(18, 79);
    r.email = first + "." + last + std::to_string(i) + "@example.com";
    std::transform(r.email.begin(), r.email.end(), r.email.begin(),
                   [](unsigned char c) { return char(std::tolower(c)); });
    r.score = std::to_string(d.in(0, 99)) + "." + std::to_string(d.in(0, 9));
    return r;
  }
  uint64_t seed_;
};

class Passage : public TextSource {
 public:
  explicit Passage(uint64_t seed) : seed_(seed), restate_(mix(seed, 1) % 2 == 0) {}
  std::string unit(size_t i) const override {
    if (i == 0) return "Passage:\n";
    Draws d{mix(seed_, i)};
    std::string s = "The " + std::string(d.pick(kAdj)) + " " + std::string(d.pick(kNoun)) + " " +
                    std::string(d.pick(kVerb)) + " the " + std::string(d.pick(kAdj)) + " " +
                    std::string(d.pick(kNoun)) + " near the " + std::string(d.pick(kPlace)) + ".";
    return s + (i % 5 == 0 ? "\n" : " ");  // a paragraph every five sentences
  }
  std::string tail(size_t) const override {
    return restate_ ? "\n\nRestate the passage above word for word.\n"
                    : "\n\nContinue the passage above in the same style.\n";
  }
  nlohmann::json meta() const override {
    return {{"instruction", restate_ ? "restate" : "continue"}};
  }

 private:
  uint64_t seed_;
  bool restate_;
};

class Code : public TextSource {
 public:
  explicit Code(uint64_t seed) : seed_(seed), python_(mix(seed, 2) % 2 == 0) {}
  std::string unit(size_t i) const override {
    if (i == 0)
      return python_ ? "# file: util.py\nimport math\n\n"
                     : "// file: util.c\n#include <stdio.h>\n\n";
    Draws d{mix(seed_, i)};
    const std::string a = std::to_string(d.in(2, 9)), b = std::to_string(d.in(2, 9)),
                      m = std::to_string(d.in(11, 97));
    const std::string f = name(i);
    if (python_)
      return "def " + f + "(x, y):\n    acc = x * " + a + " + y\n    for i in range(" + b +
             "):\n        acc = (acc ^ i) + " + a + "\n    return acc % " + m + "\n\n\n";
    return "static int " + f + "(int x, int y) {\n  int acc = x * " + a +
           " + y;\n  for (int i = 0; i < " + b + "; ++i) acc = (acc ^ i) + " + a +
           ";\n  return acc % " + m + ";\n}\n\n";
  }
  bool quotes_unit() const override { return true; }
  std::string tail(size_t q) const override {
    return "\nChange the function `" + name(q) +
           "` so that it returns twice its current result, and print the whole updated "
           "function.\n";
  }
  nlohmann::json meta() const override { return {{"language", python_ ? "python" : "c"}}; }

 private:
  std::string name(size_t i) const {
    Draws d{mix(seed_ ^ 0xc0de, i)};
    return std::string(d.pick(kAction)) + "_" + std::string(d.pick(kThing)) + "_" +
           std::to_string(i);
  }
  uint64_t seed_;
  bool python_;
};

class Essay : public TextSource {
 public:
  Essay(uint64_t seed, std::vector<std::string> lines)
      : lines_(std::move(lines)),
        start_(mix(seed, 3) % lines_.size()),
        summarize_(mix(seed, 4) % 2 == 0) {}
  std::string unit(size_t i) const override {
    if (i == 0) return "Essay:\n";
    return lines_[(start_ + i - 1) % lines_.size()] + "\n";
  }
  std::string tail(size_t) const override {
    return summarize_ ? "\n\nSummarize the essay above in three sentences.\n"
                      : "\n\nContinue the essay above in the same voice.\n";
  }
  nlohmann::json meta() const override {
    return {{"start_line", start_}, {"instruction", summarize_ ? "summarize" : "continue"}};
  }

 private:
  std::vector<std::string> lines_;
  size_t start_;
  bool summarize_;
};

// The non-empty lines of `data`: one text file, or every .txt file of a directory in name order.
std::vector<std::string> essay_lines(const std::string& data, const std::string& who) {
  namespace fs = std::filesystem;
  if (data.empty())
    throw std::invalid_argument(who +
                                ": prompt_class 'essay' needs the suite parameter 'data' (a text "
                                "file or a directory of .txt files, e.g. ../shared/data/niah)");
  std::vector<fs::path> files;
  std::error_code ec;
  if (fs::is_directory(data, ec)) {
    for (const auto& e : fs::directory_iterator(data, ec))
      if (e.is_regular_file() && e.path().extension() == ".txt") files.push_back(e.path());
    std::sort(files.begin(), files.end());
  } else if (fs::is_regular_file(data, ec)) {
    files.push_back(data);
  }
  std::vector<std::string> lines;
  for (const auto& f : files) {
    std::ifstream in(f, std::ios::binary);
    for (std::string l; std::getline(in, l);)
      if (l.find_first_not_of(" \t\r") != std::string::npos) lines.push_back(l);
  }
  if (lines.empty())
    throw std::invalid_argument(who + ": prompt_class 'essay': no text in data '" + data +
                                "' (need a text file or a directory of .txt files)");
  return lines;
}

std::unique_ptr<TextSource> text_source(const std::string& cls, uint64_t seed,
                                        const std::string& data, const std::string& who) {
  if (cls == "json_rag") return std::make_unique<JsonRag>(seed);
  if (cls == "passage") return std::make_unique<Passage>(seed);
  if (cls == "code") return std::make_unique<Code>(seed);
  if (cls == "essay") return std::make_unique<Essay>(seed, essay_lines(data, who));
  throw std::invalid_argument(who + ": unknown prompt_class '" + cls + "'");
}

std::invalid_argument too_short(const std::string& who, const std::string& cls, int context_len,
                                size_t need) {
  return std::invalid_argument(who + ": prompt_class '" + cls + "': context " +
                               std::to_string(context_len) + " is too short (its tail" +
                               " and quoted unit need " + std::to_string(need) + " tokens)");
}

// Encodes units 0, 1, ... until they hold at least `budget` tokens.
std::vector<std::vector<int32_t>> encode_units(const TextSource& src, const Tokenizer& tok,
                                               size_t budget) {
  std::vector<std::vector<int32_t>> units;
  size_t total = 0;
  while (total < budget) {
    // Every unit is non-empty text, so a unit is at least one token; the cap guards a tokenizer
    // that maps text to nothing.
    if (units.size() > budget + 16)
      throw std::logic_error("prompt classes: units encode to no tokens");
    units.push_back(tok.encode(src.unit(units.size()), false, false));
    total += units.back().size();
  }
  return units;
}

ClassPrompt text_prompt(const std::string& cls, const TextSource& src, int context_len,
                        uint64_t seed, const SuiteContext& ctx, const std::string& who) {
  const Tokenizer& tok = *ctx.tokenizer;
  const size_t n_bos = ctx.bos >= 0 ? 1 : 0;
  const size_t budget = size_t(std::max(context_len, 0)) - std::min<size_t>(n_bos, context_len);
  const auto units = encode_units(src, tok, budget);
  // The quoted record/function lies in the first half of the units, so a tail of up to half
  // the context still leaves it whole.
  size_t q = 0;
  if (src.quotes_unit()) q = 1 + mix(seed, 5) % std::max<size_t>(1, (units.size() - 1) / 2);
  const std::vector<int32_t> tail = tok.encode(src.tail(q), false, false);
  size_t quoted_end = 1;  // the body must hold at least one token
  if (src.quotes_unit()) {
    quoted_end = 0;
    for (size_t i = 0; i <= q; ++i) quoted_end += i < units.size() ? units[i].size() : budget;
  }
  if (tail.size() + quoted_end > budget)
    throw too_short(who, cls, context_len, n_bos + tail.size() + quoted_end);
  const size_t body_budget = budget - tail.size();
  ClassPrompt p;
  if (n_bos) p.tokens.push_back(ctx.bos);
  size_t whole = 0;
  for (const auto& u : units) {
    const size_t room = body_budget - (p.tokens.size() - n_bos);
    if (room == 0) break;
    const size_t take = std::min(room, u.size());
    p.tokens.insert(p.tokens.end(), u.begin(), u.begin() + ptrdiff_t(take));
    whole += take == u.size() ? 1 : 0;
  }
  p.tokens.insert(p.tokens.end(), tail.begin(), tail.end());
  p.meta = src.meta();
  p.meta["whole_units"] = whole;
  p.meta["tail_tokens"] = tail.size();
  if (src.quotes_unit()) p.meta["quoted_unit"] = q;
  return p;
}

}  // namespace

const std::vector<std::string>& prompt_class_names() {
  static const std::vector<std::string> n = {"passage", "json_rag", "code", "essay",
                                             "random_tokens"};
  return n;
}

ClassPrompt make_class_prompt(const std::string& cls, int context_len, uint64_t seed,
                              const SuiteContext& ctx, const std::string& data,
                              const std::string& who) {
  if (context_len < 1)
    throw std::invalid_argument(who + ": context length " + std::to_string(context_len) +
                                " must be at least 1");
  ClassPrompt p;
  if (cls == "random_tokens") {
    const std::vector<int32_t> exclude =
        ctx.eos >= 0 ? std::vector<int32_t>{ctx.eos} : std::vector<int32_t>{};
    p.tokens = synthetic_prompt(ctx.n_vocab, ctx.bos, exclude, size_t(context_len), seed);
    p.meta = nlohmann::json::object();
  } else {
    if (!ctx.tokenizer)
      throw std::invalid_argument(who + ": prompt_class '" + cls +
                                  "' is text and the model has no tokenizer (use "
                                  "prompt_class random_tokens)");
    const auto src = text_source(cls, seed, data, who);
    p = text_prompt(cls, *src, context_len, seed, ctx, who);
  }
  p.meta["prompt_class"] = cls;
  return p;
}

}  // namespace accel
