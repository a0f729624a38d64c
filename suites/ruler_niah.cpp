// niah.py, transcribed (ruler_niah.h). Python names are kept where they help to compare.
#include "suites/ruler_niah.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>

#include "suites/ruler_random.h"
#include "suites/ruler_sentences.h"
#include "suites/ruler_text.h"

namespace accel::ruler {

namespace {

constexpr std::string_view kNoise =
    "The grass is green. The sky is blue. The sun is yellow. Here we go. There and back again.";
constexpr std::string_view kNeedle =
    "One of the special magic {type_needle_v} for {key} is: {value}.";

std::string plural(NeedleType t) {
  switch (t) {
    case NeedleType::Words:
      return "words";
    case NeedleType::Numbers:
      return "numbers";
    case NeedleType::Uuids:
      return "uuids";
  }
  return "?";
}

struct Generated {
  std::string full;  // input text with its answer prefix
  std::vector<std::string> answers;
  nlohmann::json meta;
};

class Niah {
 public:
  Niah(const TaskConfig& t, const RulerArgs& a, const NiahInputs& in)
      : t_(t),
        a_(a),
        in_(in),
        rng_(a.random_seed),
        num_k_(std::max(t.num_needle_k, t.num_needle_q)) {
    if ((t.key_type == NeedleType::Words || t.value_type == NeedleType::Words) &&
        (!in.words || in.words->n_keys() == 0))
      throw std::invalid_argument(a.who + ": word keys need the essay word lists");
    if (t.haystack == Haystack::Essay && (!in.essay || in.essay->empty()))
      throw std::invalid_argument(a.who + ": the essay haystack needs the essays");
  }

  size_t needles() const { return size_t(num_k_ * t_.num_needle_v); }
  PyRandom& rng() { return rng_; }

  // generate_input_output(num_haystack); nullopt where Python raises (a sample larger than its
  // population).
  std::optional<Generated> generate(int num_haystack) {
    std::vector<std::string> keys, needles;
    std::vector<std::vector<std::string>> values;
    std::set<std::string> used_keys, used_values;
    for (int k = 0; k < num_k_; ++k) {
      keys.push_back(draw_avoiding(t_.key_type, used_keys, used_values));
      used_keys.insert(keys.back());
      std::vector<std::string> value;
      for (int v = 0; v < t_.num_needle_v; ++v) {
        value.push_back(draw_avoiding(t_.value_type, used_values, used_keys));
        used_values.insert(value.back());
        needles.push_back(py_format(kNeedle, {{"type_needle_v", plural(t_.value_type)},
                                              {"key", keys.back()},
                                              {"value", value.back()}}));
      }
      values.push_back(std::move(value));
    }
    PyRandom(a_.random_seed).shuffle(needles);

    Generated g;
    g.meta = {{"haystack", num_haystack}, {"needles", needles}, {"keys", keys}, {"values", values}};
    std::string context;
    if (t_.haystack == Haystack::Essay) {
      const std::vector<std::string>& hay = *in_.essay;
      std::string text;
      if (size_t(num_haystack) <= hay.size()) {
        text = join(hay, " ", 0, size_t(num_haystack));
      } else {
        std::vector<std::string> rep;
        rep.reserve(size_t(num_haystack));
        while (rep.size() < size_t(num_haystack))
          for (size_t i = 0; i < hay.size() && rep.size() < size_t(num_haystack); ++i)
            rep.push_back(hay[i]);
        text = join(rep, " ");
      }
      const std::vector<std::string_view> sents = split_sentences(py_strip(text));
      const std::vector<int>& depths_all = niah_depths();
      if (needles.size() > depths_all.size()) return std::nullopt;
      std::vector<int> depths;
      for (size_t i : rng_.sample_indices(depths_all.size(), needles.size()))
        depths.push_back(depths_all[i]);
      std::vector<size_t> pos;
      for (int d : depths) pos.push_back(size_t(double(sents.size()) * (double(d) / 100.0)));
      std::sort(pos.begin(), pos.end());
      std::sort(depths.begin(), depths.end());
      pos.insert(pos.begin(), 0);
      pos.push_back(sents.size());
      std::vector<std::string> parts;
      for (size_t i = 1; i < pos.size(); ++i) {
        std::string part;
        for (size_t s = pos[i - 1]; s < pos[i]; ++s) {
          if (s > pos[i - 1]) part += ' ';
          part.append(sents[s]);
        }
        parts.push_back(std::move(part));
        if (i - 1 < needles.size()) parts.push_back(needles[i - 1]);
      }
      context = join(parts, " ");
      g.meta["sentences"] = sents.size();
      g.meta["depths"] = depths;
      g.meta["needle_sentence"] = std::vector<size_t>(pos.begin() + 1, pos.end() - 1);
    } else {
      std::vector<std::string> sentences;
      sentences.reserve(size_t(num_haystack) + needles.size());
      if (t_.haystack == Haystack::Noise) {
        sentences.assign(size_t(num_haystack), std::string(kNoise));
      } else {
        for (int i = 0; i < num_haystack; ++i) {
          const std::string key = draw_avoiding(t_.key_type, used_keys, used_values);
          const std::string value = draw_avoiding(t_.value_type, used_values, used_keys);
          sentences.push_back(py_format(
              kNeedle, {{"type_needle_v", plural(t_.value_type)}, {"key", key}, {"value", value}}));
        }
      }
      if (needles.size() > size_t(num_haystack)) return std::nullopt;
      std::vector<size_t> idx = rng_.sample_indices(size_t(num_haystack), needles.size());
      std::sort(idx.rbegin(), idx.rend());
      std::vector<size_t> line(needles.size());
      for (size_t j = 0; j < needles.size(); ++j) {
        sentences.insert(sentences.begin() + ptrdiff_t(idx[j]), needles[j]);
        line[j] = idx[j] + (needles.size() - 1 - j);  // later inserts land before it
      }
      context = join(sentences, "\n");
      g.meta["needle_line"] = line;
    }

    // Query and answer.
    std::vector<std::string> queries;
    for (size_t i : rng_.sample_indices(size_t(num_k_), size_t(t_.num_needle_q))) {
      queries.push_back(keys[i]);
      for (const auto& v : values[i]) g.answers.push_back(v);
    }
    std::string query = queries.back();
    if (queries.size() > 1) {
      query.clear();
      for (size_t i = 0; i + 1 < queries.size(); ++i) query += (i ? ", " : "") + queries[i];
      query += ", and " + queries.back();
    }
    std::string tmpl = a_.template_text;
    std::string type_needle_v = plural(t_.value_type);
    if (t_.num_needle_q * t_.num_needle_v == 1) {
      tmpl = py_replace(tmpl, "Some", "A");
      tmpl = py_replace(tmpl, "are all", "is");
      tmpl = py_replace(tmpl, "are", "is");
      tmpl = py_replace(tmpl, "answers", "answer");
      type_needle_v.pop_back();
    }
    g.full =
        py_format(tmpl, {{"type_needle_v", type_needle_v}, {"context", context}, {"query", query}});
    g.meta["queries"] = queries;
    return g;
  }

 private:
  std::string draw(NeedleType type) {
    switch (type) {
      case NeedleType::Numbers:
        return std::to_string(rng_.randint(1000000, 9999999));
      case NeedleType::Words:
        return in_.words->key(rng_.choice_index(in_.words->n_keys()));
      case NeedleType::Uuids:
        return rng_.uuid4();
    }
    return {};
  }
  // Our addition to RULER (ruler_niah.h): draw again while the draw is in either set.
  std::string draw_avoiding(NeedleType type, const std::set<std::string>& a,
                            const std::set<std::string>& b) {
    std::string s = draw(type);
    while (a.count(s) || b.count(s)) s = draw(type);
    return s;
  }

  const TaskConfig& t_;
  const RulerArgs& a_;
  NiahInputs in_;
  PyRandom rng_;
  int num_k_;
};

}  // namespace

const std::vector<int>& niah_depths() {
  static const std::vector<int> d = [] {
    std::vector<int> v;
    const double step = 100.0 / 39.0;
    for (int i = 0; i < 40; ++i) v.push_back(int(std::nearbyint(i == 39 ? 100.0 : i * step)));
    return v;
  }();
  return d;
}

RulerRecord generate_niah(const TaskConfig& t, const RulerArgs& a, const NiahInputs& in) {
  Niah gen(t, a, in);
  const int ttg = a.tokens_to_generate;
  const int max_seq = a.max_seq_length - a.model_template_token;
  int incremental = t.haystack == Haystack::Essay ? 500 : 25;
  if (t.haystack != Haystack::Essay && is_short_context(a)) incremental = 5;
  const int min_size = t.haystack == Haystack::Essay ? 1 : int(gen.needles());

  const auto probe = gen.generate(incremental);
  if (!probe) throw std::logic_error(a.who + ": the size estimate failed");
  const double per_unit = double(a.count_tokens(probe->full)) / incremental;
  const int estimated = int((max_seq / per_unit) * 3);
  const auto fits = [&](const Generated& g) {
    return int(a.count_tokens(g.full)) + ttg <= max_seq;
  };
  const auto size =
      search_size(incremental, std::max(estimated, incremental * 2), min_size, [&](int mid) {
        const auto g = gen.generate(mid);
        return g && fits(*g);
      });
  if (!size) throw too_short(a, "not even the smallest haystack fits");

  return fit_sample(
      *size, incremental, min_size,
      [&](int n) -> std::optional<RulerRecord> {
        auto g = gen.generate(n);
        if (!g) return std::nullopt;
        const int length = int(a.count_tokens(g->full)) + ttg;
        if (length > max_seq) return std::nullopt;
        RulerRecord r;
        cut_answer_prefix(r, g->full, Generator::Niah);
        r.outputs = std::move(g->answers);
        r.length = length;
        r.meta = std::move(g->meta);
        const size_t at = r.input.find(r.outputs.front());
        const std::string before = at == std::string::npos
                                       ? r.input.substr(0, r.input.empty() ? 0 : r.input.size() - 1)
                                       : r.input.substr(0, at);
        r.meta["answer_char_offset"] =
            at == std::string::npos ? -1 : int64_t(utf8_code_points(before));
        r.meta["token_position_answer"] = a.count_tokens(before);
        return r;
      },
      a);
}

}  // namespace accel::ruler
