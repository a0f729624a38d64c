// qa.py's readers and generator (ruler_qa.h).
#include "suites/ruler_qa.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>

#include "suites/python_text.h"
#include "suites/ruler_random.h"
#include "suites/ruler_text.h"

namespace accel::ruler {

namespace {

using json = nlohmann::json;

[[noreturn]] void fail(const std::string& source, const std::string& field,
                       const std::string& what) {
  throw std::invalid_argument(source + ": " + field + ": " + what);
}

const json& member(const json& obj, const char* key, const std::string& source,
                   const std::string& path) {
  if (!obj.is_object()) fail(source, path, "expected an object");
  const auto it = obj.find(key);
  if (it == obj.end()) fail(source, path + (path.empty() ? "" : ".") + key, "missing");
  return *it;
}

const json& array_at(const json& obj, const char* key, const std::string& source,
                     const std::string& path, std::string& child) {
  child = path + (path.empty() ? "" : ".") + key;
  const json& a = member(obj, key, source, path);
  if (!a.is_array()) fail(source, child, "expected an array");
  return a;
}

std::string string_at(const json& obj, const char* key, const std::string& source,
                      const std::string& path) {
  const json& s = member(obj, key, source, path);
  if (!s.is_string()) fail(source, path + "." + key, "expected a string");
  return s.get<std::string>();
}

std::string idx(const std::string& path, size_t i) {
  return path + "[" + std::to_string(i) + "]";
}

size_t doc_index(const std::map<std::string, size_t>& m, const std::string& doc) {
  return m.at(doc);
}

std::map<std::string, size_t> index_docs(std::vector<std::string>& docs) {
  std::sort(docs.begin(), docs.end());
  docs.erase(std::unique(docs.begin(), docs.end()), docs.end());
  std::map<std::string, size_t> m;
  for (size_t i = 0; i < docs.size(); ++i) m.emplace(docs[i], i);
  return m;
}

// The deepest bracket nesting of a JSON text (strings skipped), so a hostile file cannot make the
// recursive parser overflow the stack.
int json_depth(std::string_view s) {
  int depth = 0, worst = 0;
  bool in_string = false;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      worst = std::max(worst, ++depth);
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return worst;
}

}  // namespace

QaDataset read_squad(const json& j, const std::string& source) {
  QaDataset d;
  d.source = source;
  std::string data_path;
  const json& data = array_at(j, "data", source, "", data_path);
  // Pass 1: the documents.
  for (size_t a = 0; a < data.size(); ++a) {
    std::string pp;
    const json& paragraphs = array_at(data[a], "paragraphs", source, idx(data_path, a), pp);
    for (size_t p = 0; p < paragraphs.size(); ++p)
      d.docs.push_back(string_at(paragraphs[p], "context", source, idx(pp, p)));
  }
  const auto ids = index_docs(d.docs);
  // Pass 2: the answerable questions.
  for (size_t a = 0; a < data.size(); ++a) {
    std::string pp;
    const json& paragraphs = array_at(data[a], "paragraphs", source, idx(data_path, a), pp);
    std::vector<size_t> more_docs;
    for (const json& p : paragraphs)
      more_docs.push_back(doc_index(ids, p.at("context").get<std::string>()));
    for (size_t p = 0; p < paragraphs.size(); ++p) {
      const std::string ppath = idx(pp, p);
      const size_t self = more_docs[p];
      std::string qpath;
      const json& qas = array_at(paragraphs[p], "qas", source, ppath, qpath);
      for (size_t q = 0; q < qas.size(); ++q) {
        const std::string path = idx(qpath, q);
        const json& imp = member(qas[q], "is_impossible", source, path);
        if (!imp.is_boolean()) fail(source, path + ".is_impossible", "expected a boolean");
        if (imp.get<bool>()) continue;
        QaItem item;
        item.query = string_at(qas[q], "question", source, path);
        std::string apath;
        const json& answers = array_at(qas[q], "answers", source, path, apath);
        for (size_t k = 0; k < answers.size(); ++k)
          item.outputs.push_back(string_at(answers[k], "text", source, idx(apath, k)));
        if (item.outputs.empty())
          fail(source, apath, "an answerable question needs at least one answer");
        item.context = {self};
        for (size_t m : more_docs)
          if (m != self) item.more_context.push_back(m);
        d.qas.push_back(std::move(item));
      }
    }
  }
  if (d.qas.empty()) fail(source, "data", "no answerable question");
  return d;
}

QaDataset read_hotpotqa(const json& j, const std::string& source) {
  QaDataset d;
  d.source = source;
  if (!j.is_array()) fail(source, "(top level)", "expected an array of questions");
  const auto doc_text = [&](const json& pair, const std::string& path) {
    if (!pair.is_array() || pair.size() != 2)
      fail(source, path, "expected a [title, sentences] pair");
    if (!pair[0].is_string()) fail(source, path + "[0]", "expected a string (the title)");
    if (!pair[1].is_array()) fail(source, path + "[1]", "expected an array of sentences");
    std::string text = pair[0].get<std::string>() + "\n";
    for (size_t s = 0; s < pair[1].size(); ++s) {
      if (!pair[1][s].is_string()) fail(source, idx(path + "[1]", s), "expected a string");
      text += pair[1][s].get<std::string>();
    }
    return text;
  };
  for (size_t q = 0; q < j.size(); ++q) {
    std::string cpath;
    const json& ctx = array_at(j[q], "context", source, idx("", q), cpath);
    for (size_t c = 0; c < ctx.size(); ++c) d.docs.push_back(doc_text(ctx[c], idx(cpath, c)));
  }
  const auto ids = index_docs(d.docs);
  for (size_t q = 0; q < j.size(); ++q) {
    const std::string path = idx("", q);
    QaItem item;
    item.query = string_at(j[q], "question", source, path);
    item.outputs = {string_at(j[q], "answer", source, path)};
    std::string cpath;
    const json& ctx = array_at(j[q], "context", source, path, cpath);
    for (size_t c = 0; c < ctx.size(); ++c)
      item.context.push_back(doc_index(ids, doc_text(ctx[c], idx(cpath, c))));
    d.qas.push_back(std::move(item));
  }
  if (d.qas.empty()) fail(source, "(top level)", "no question");
  return d;
}

std::shared_ptr<const QaDataset> load_qa(const std::string& dataset, const std::string& path,
                                         const std::string& who) {
  static std::mutex mu;
  static std::map<std::pair<std::string, std::string>, std::shared_ptr<const QaDataset>> cache;
  std::lock_guard<std::mutex> lock(mu);
  auto& slot = cache[{dataset, path}];
  if (slot) return slot;
  const std::string src = who + ": " + dataset + " file '" + path + "'";
  std::error_code ec;
  const uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec) throw std::invalid_argument(src + ": cannot read it");
  if (size > kMaxQaFileBytes)
    throw std::invalid_argument(src + ": larger than the " + std::to_string(kMaxQaFileBytes >> 20) +
                                " MiB limit");
  std::ifstream in(path, std::ios::binary);
  std::string text(size_t(size), '\0');
  if (!in.read(text.data(), std::streamsize(size)))
    throw std::invalid_argument(src + ": cannot read it");
  const size_t bad = pytext::utf8_invalid_at(text);
  if (bad != std::string::npos)
    throw std::invalid_argument(src + ": invalid UTF-8 at byte " + std::to_string(bad));
  if (json_depth(text) > kMaxQaJsonDepth)
    throw std::invalid_argument(src + ": JSON nested deeper than " +
                                std::to_string(kMaxQaJsonDepth) + " levels");
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    throw std::invalid_argument(src + ": invalid JSON at byte " + std::to_string(e.byte) + ": " +
                                e.what());
  } catch (const json::exception& e) {  // out_of_range: a number overflows a double
    throw std::invalid_argument(src + ": invalid JSON: " + e.what());
  }
  text.clear();
  auto d =
      std::make_shared<QaDataset>(dataset == "squad" ? read_squad(j, src) : read_hotpotqa(j, src));
  slot = d;
  return slot;
}

RulerRecord generate_qa(const RulerArgs& a, const QaDataset& d, size_t index) {
  if (index >= d.qas.size())
    throw std::invalid_argument(a.who + ": sample " + std::to_string(index) + " needs question " +
                                std::to_string(index) + " but " + d.source + " has " +
                                std::to_string(d.qas.size()) + " (answerable) questions");
  PyRandom rng(a.random_seed);
  const auto generate = [&](size_t q, int num_docs) -> std::optional<std::string> {
    const QaItem& item = d.qas[q];
    std::vector<std::string> all_docs;
    const size_t n = size_t(num_docs);
    if (n < d.docs.size()) {
      std::vector<size_t> ids = item.context;
      if (num_docs - int(item.context.size()) > int(item.more_context.size())) {
        std::set<size_t> taken(item.context.begin(), item.context.end());
        taken.insert(item.more_context.begin(), item.more_context.end());
        std::vector<size_t> addition;
        for (size_t i = 0; i < d.docs.size(); ++i)
          if (!taken.count(i)) addition.push_back(i);
        ids.insert(ids.end(), item.more_context.begin(), item.more_context.end());
        const int want =
            std::max(0, num_docs - int(item.context.size()) - int(item.more_context.size()));
        if (size_t(want) > addition.size()) return std::nullopt;
        for (size_t j : rng.sample_indices(addition.size(), size_t(want)))
          ids.push_back(addition[j]);
      } else {
        const int want = num_docs - int(item.context.size());
        if (want < 0) return std::nullopt;  // ValueError: negative sample size
        for (size_t j : rng.sample_indices(item.more_context.size(), size_t(want)))
          ids.push_back(item.more_context[j]);
      }
      for (size_t i : ids) all_docs.push_back(d.docs[i]);
    } else {
      for (size_t i = 0; i < n; ++i) all_docs.push_back(d.docs[i % d.docs.size()]);
    }
    PyRandom(a.random_seed).shuffle(all_docs);
    std::string context;
    for (size_t i = 0; i < all_docs.size(); ++i)
      context += (i ? "\n\n" : "") + ("Document " + std::to_string(i + 1) + ":\n") + all_docs[i];
    return py_format(a.template_text, {{"context", context}, {"query", item.query}});
  };

  const int ttg = a.tokens_to_generate;
  const int max_seq = a.max_seq_length - a.model_template_token;
  const int incremental = 10;
  const auto probe = generate(0, incremental);
  if (!probe) throw std::logic_error(a.who + ": the size estimate failed");
  const double per_doc = double(a.count_tokens(*probe)) / incremental;
  const int estimated = int((max_seq / per_doc) * 3);
  const auto size = search_size(incremental, std::max(estimated, incremental * 2), 1, [&](int mid) {
    const auto g = generate(0, mid);
    return g && int(a.count_tokens(*g)) + ttg <= max_seq;
  });
  if (!size) throw too_short(a, "not even the gold documents fit");
  return fit_sample(
      *size, incremental, 1,
      [&](int n) -> std::optional<RulerRecord> {
        const auto full = generate(index, n);
        if (!full) return std::nullopt;
        const int length = int(a.count_tokens(*full)) + ttg;
        if (length > max_seq) return std::nullopt;
        RulerRecord r;
        cut_answer_prefix(r, *full, Generator::Qa);
        r.outputs = d.qas[index].outputs;
        r.length = length;
        r.meta = {{"documents", n}, {"question_index", index}};
        return r;
      },
      a);
}

}  // namespace accel::ruler
