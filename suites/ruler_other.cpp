// variable_tracking.py, common_words_extraction.py and freq_words_extraction.py, transcribed
// (ruler_other.h).
#include "suites/ruler_other.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>

#include "suites/ruler_random.h"
#include "suites/ruler_text.h"

namespace accel::ruler {

namespace {

constexpr std::string_view kNoise =
    "The grass is green. The sky is blue. The sun is yellow. Here we go. There and back again.";
constexpr std::string_view kUpper = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
constexpr std::string_view kLower = "abcdefghijklmnopqrstuvwxyz";

// ''.join(random.choices(letters, k=k))
std::string random_letters(PyRandom& rng, std::string_view letters, size_t k) {
  std::string s;
  for (size_t i : rng.choices_indices(letters.size(), k)) s += letters[i];
  return s;
}

// RULER's scripts crash where a sizing probe raises; we draw that probe again (bounded).
template <class F>
auto retry_probe(F&& f, const RulerArgs& a) {
  for (int i = 0; i < 10000; ++i)
    if (auto r = f()) return *r;
  throw std::logic_error(a.who + ": a sizing probe kept failing");
}

// --- variable tracking ---------------------------------------------------------------------

struct VtGenerated {
  std::string full;
  std::vector<std::string> answer;
  std::vector<std::string> chain;
};

class Vt {
 public:
  Vt(const TaskConfig& t, const RulerArgs& a)
      : t_(t), a_(a), rng_(a.random_seed), np_(uint32_t(a.random_seed)) {}

  PyRandom& rng() { return rng_; }
  NumpyLegacy& np() { return np_; }

  // generate_chains + generate_input_output (noise haystack); nullopt where Python raises.
  std::optional<VtGenerated> generate(int num_noises, bool is_icl) {
    const size_t k = is_icl ? 3 : 5;
    const int hops = is_icl ? std::min(10, t_.num_hops) : t_.num_hops;
    const size_t want = size_t((hops + 1) * t_.num_chains);
    std::vector<std::string> vars_all;
    for (size_t i = 0; i < want; ++i) vars_all.push_back(random_letters(rng_, kUpper, k));
    for (;;) {
      std::set<std::string> distinct(vars_all.begin(), vars_all.end());
      if (distinct.size() >= want) break;
      vars_all.push_back(random_letters(rng_, kUpper, k));
    }
    std::vector<std::vector<std::string>> vars, chains;
    for (size_t i = 0; i < vars_all.size(); i += size_t(hops + 1)) {
      std::vector<std::string> these(
          vars_all.begin() + ptrdiff_t(i),
          vars_all.begin() + ptrdiff_t(std::min(vars_all.size(), i + size_t(hops + 1))));
      std::vector<std::string> chain = {
          "VAR " + these[0] + " = " +
          (is_icl ? std::string("12345") : std::to_string(np_.randint(10000, 99999)))};
      if (these.size() < size_t(hops + 1)) return std::nullopt;  // IndexError in RULER
      for (int j = 0; j < hops; ++j)
        chain.push_back("VAR " + these[size_t(j + 1)] + " = VAR " + these[size_t(j)] + " ");
      vars.push_back(std::move(these));
      chains.push_back(std::move(chain));
    }
    const std::string& first = chains[0][0];
    const std::string value(py_strip(std::string_view(first).substr(first.rfind('=') + 1)));

    std::vector<std::string> sentences(size_t(num_noises), std::string{kNoise});
    for (const auto& chain : chains) {
      if (chain.size() > sentences.size()) return std::nullopt;
      std::vector<size_t> pos = rng_.sample_indices(sentences.size(), chain.size());
      std::sort(pos.begin(), pos.end());
      for (size_t j = 0; j < chain.size(); ++j)
        sentences.insert(sentences.begin() + ptrdiff_t(pos[j] + j), chain[j]);
    }
    const std::string context = py_replace(join(sentences, "\n"), ". \n", ".\n");
    const GeneratorTemplate& gt = generator_template(Generator::VariableTracking);
    std::string tmpl = a_.template_text;
    const std::string bare = std::string(gt.task_template) + std::string(gt.answer_prefix);
    if (is_icl && tmpl != bare) tmpl = bare;
    VtGenerated g;
    g.full = py_format(
        tmpl, {{"context", context}, {"query", value}, {"num_v", std::to_string(hops + 1)}});
    g.answer = vars[0];
    g.chain = chains[0];
    return g;
  }

  std::string randomize_icl(std::string icl) {
    const auto toks = py_split(py_strip(icl));
    const size_t n = size_t(t_.num_hops + 1);
    std::vector<std::string> targets;
    for (size_t i = toks.size() > n ? toks.size() - n : 0; i < toks.size(); ++i)
      targets.emplace_back(toks[i]);
    for (const auto& item : targets)
      icl = py_replace(icl, item, random_letters(rng_, kUpper, utf8_code_points(item)));
    return py_replace(icl, "12345", std::to_string(np_.randint(10000, 99999)));
  }

 private:
  const TaskConfig& t_;
  const RulerArgs& a_;
  PyRandom rng_;
  NumpyLegacy np_;
};

}  // namespace

RulerRecord generate_vt(const TaskConfig& t, const RulerArgs& a) {
  Vt gen(t, a);
  const GeneratorTemplate& gt = generator_template(Generator::VariableTracking);

  // main(): the one-shot example, sys_vartrack_w_noise_random(num_samples=1, max_seq_length=500).
  std::string icl;
  {
    const int max_seq = 500 - a.model_template_token;
    const int incremental = 5;
    const auto probe = retry_probe([&] { return gen.generate(incremental, true); }, a);
    const double per_unit = double(a.count_tokens(probe.full)) / incremental;
    const int estimated = int((max_seq / per_unit) * 3);
    const auto size =
        search_size(incremental, std::max(estimated, incremental * 2), incremental, [&](int mid) {
          const auto g = gen.generate(mid, true);
          return g && int(a.count_tokens(g->full)) <= max_seq;
        });
    int used = size.value_or(incremental);
    std::optional<VtGenerated> ex;
    for (;;) {
      ex = gen.generate(used, true);
      if (ex && int(a.count_tokens(ex->full)) <= max_seq) break;
      if (used > incremental) {
        used -= incremental;
      } else if (ex) {
        break;  // RULER loops forever here; we keep the smallest example (ruler_other.h)
      }
    }
    icl = ex->full + " " + join(ex->answer, " ") + "\n";
  }

  // The samples: sys_vartrack_w_noise_random(icl_example=..., final_output=True).
  const int ttg = a.tokens_to_generate;
  const int max_seq = a.max_seq_length - a.model_template_token;
  const int incremental = is_short_context(a) ? 5 : 10;
  const int example_tokens = int(a.count_tokens(icl));
  const int min_size = t.num_hops + 1;
  const auto probe = retry_probe([&] { return gen.generate(incremental, false); }, a);
  const double per_unit = double(a.count_tokens(probe.full)) / incremental;
  const int estimated = int((max_seq / per_unit) * 3);
  const auto size =
      search_size(incremental, std::max(estimated, incremental * 2), min_size, [&](int mid) {
        const auto g = gen.generate(mid, false);
        return g && int(a.count_tokens(g->full)) + example_tokens + ttg <= max_seq;
      });
  if (!size) throw too_short(a, "not even the smallest haystack fits beside the example");
  const std::string cut_probe(gt.task_template.substr(0, 20));
  return fit_sample(
      *size, incremental, min_size,
      [&](int n) -> std::optional<RulerRecord> {
        auto g = gen.generate(n, false);
        if (!g) return std::nullopt;
        const size_t cutoff = g->full.find(cut_probe);
        if (cutoff == std::string::npos) return std::nullopt;  // ValueError of str.index
        const std::string full =
            g->full.substr(0, cutoff) + gen.randomize_icl(icl) + "\n" + g->full.substr(cutoff);
        const int length = int(a.count_tokens(full)) + ttg;
        if (length > max_seq) return std::nullopt;
        RulerRecord r;
        cut_answer_prefix(r, full, Generator::VariableTracking);
        r.outputs = g->answer;
        r.length = length;
        r.meta = {{"noise", n}, {"chain", g->chain}};
        return r;
      },
      a);
}

// --- common words extraction ---------------------------------------------------------------

RulerRecord generate_cwe(const TaskConfig& t, const RulerArgs& a, const WordLists& wl) {
  PyRandom rng(a.random_seed);
  std::vector<std::string> words = wl.common;  // sorted(set(nouns + adjs + verbs))
  PyRandom(a.random_seed).shuffle(words);
  const size_t n_fallback = wl.n_keys();  // english_words.json's place (ruler_corpus.h)

  struct Example {
    std::string context;
    std::vector<std::string> common;
    bool fallback = false;
  };
  const auto get_example = [&](size_t num_words, int common_repeats, int uncommon_repeats,
                               size_t common_nums) -> std::optional<Example> {
    std::vector<std::string> full;
    Example e;
    if (num_words <= words.size()) {
      for (size_t i : rng.sample_indices(words.size(), num_words)) full.push_back(words[i]);
    } else {
      if (num_words > n_fallback) return std::nullopt;  // ValueError in random.sample
      for (size_t i : rng.sample_indices(n_fallback, num_words)) full.push_back(wl.key(i));
      e.fallback = true;
    }
    const size_t nc = std::min(common_nums, full.size());
    e.common.assign(full.begin(), full.begin() + ptrdiff_t(nc));
    std::vector<std::string> list;
    for (int r = 0; r < common_repeats; ++r)
      list.insert(list.end(), full.begin(), full.begin() + ptrdiff_t(nc));
    for (int r = 0; r < uncommon_repeats; ++r)
      list.insert(list.end(), full.begin() + ptrdiff_t(nc), full.end());
    PyRandom(a.random_seed).shuffle(list);
    for (size_t i = 0; i < list.size(); ++i)
      e.context += (i ? " " : "") + std::to_string(i + 1) + ". " + list[i];
    return e;
  };
  const auto numbered = [](const std::vector<std::string>& w) {
    std::string s;
    for (size_t i = 0; i < w.size(); ++i) s += (i ? " " : "") + std::to_string(i + 1) + ". " + w[i];
    return s;
  };
  struct Generated {
    std::string full;
    std::vector<std::string> answer;
    bool fallback = false;
  };
  const size_t num_cw = size_t(t.num_cw);
  const auto generate = [&](int num_words) -> std::optional<Generated> {
    std::optional<Example> shot, main;
    if (is_short_context(a)) {
      shot = get_example(20, 3, 1, num_cw);
      if (!shot) return std::nullopt;
      main = get_example(size_t(num_words), 6, 1, num_cw);
    } else {
      shot = get_example(40, 10, 3, num_cw);
      if (!shot) return std::nullopt;
      main = get_example(size_t(num_words), t.freq_cw, t.freq_ucw, num_cw);
    }
    if (!main) return std::nullopt;
    const std::map<std::string, std::string> kw_shot = {
        {"num_cw", std::to_string(t.num_cw)}, {"context", shot->context}, {"query", ""}};
    const std::string few_shots =
        py_format(a.template_text, kw_shot) + " " + numbered(shot->common);
    const std::string input = py_format(
        a.template_text,
        {{"num_cw", std::to_string(t.num_cw)}, {"context", main->context}, {"query", ""}});
    return Generated{few_shots + "\n" + input, main->common, main->fallback};
  };

  const int ttg = a.tokens_to_generate;
  const int max_seq = a.max_seq_length - a.model_template_token;
  const int incremental = 10;
  const auto probe = generate(4096);
  if (!probe) throw std::logic_error(a.who + ": the size estimate failed");
  const double per_word = double(a.count_tokens(probe->full)) / 4096;
  const int estimated = int(py_floordiv(max_seq, per_word)) * 2;
  const auto size =
      search_size(incremental, std::max(estimated, incremental * 2), incremental, [&](int mid) {
        const auto g = generate(mid);
        return g && int(a.count_tokens(g->full)) + ttg <= max_seq;
      });
  if (!size) throw too_short(a, "not even " + std::to_string(incremental) + " words fit");
  return fit_sample(
      *size, incremental, incremental,
      [&](int n) -> std::optional<RulerRecord> {
        auto g = generate(n);
        if (!g) return std::nullopt;
        const int length = int(a.count_tokens(g->full)) + ttg;
        if (length > max_seq) return std::nullopt;
        RulerRecord r;
        cut_answer_prefix(r, g->full, Generator::CommonWords);
        r.outputs = std::move(g->answer);
        r.length = length;
        r.meta = {{"words", n},
                  {"list_source", g->fallback ? "adjective-noun keys (fallback)" : "essay words"}};
        return r;
      },
      a);
}

// --- frequent words extraction -------------------------------------------------------------

RulerRecord generate_fwe(const TaskConfig& t, const RulerArgs& a) {
  PyRandom rng(a.random_seed);
  const int coded_wordlen = 6;
  const int ttg = a.tokens_to_generate;
  const int max_len = a.max_seq_length - (a.model_template_token + ttg);
  const int vocab_size = max_len / 50;  // floor division of non-negative ints
  const int incremental = max_len / 32;
  if (max_len <= 0 || vocab_size < 4 || incremental <= 0)
    throw too_short(a, "coded text needs at least 4 words and a 32nd of the budget to step by");

  struct Text {
    std::string full;
    std::vector<std::string> answer;
  };
  // generate_input_output(max_len, num_words, ...): a fresh vocabulary, then the sizing loop.
  const auto generate = [&](int num_words, int& out_words) -> Text {
    std::vector<std::string> vocab;
    for (int i = 0; i < vocab_size; ++i)
      vocab.push_back(random_letters(rng, kLower, size_t(coded_wordlen)));
    for (;;) {
      std::set<std::string> distinct(vocab.begin(), vocab.end());
      if (distinct.size() >= size_t(vocab_size)) {
        vocab.assign(distinct.begin(), distinct.end());  // sorted(list(set(vocab)))
        break;
      }
      vocab.push_back(random_letters(rng, kLower, size_t(coded_wordlen)));
    }
    PyRandom(a.random_seed).shuffle(vocab);
    vocab[0] = "...";
    const auto gen_text = [&](int n) {
      std::vector<std::string> sampled;
      for (size_t k = 0; k < vocab.size(); ++k) {
        const double cnt = double(n) * std::pow(double(k + 1), -t.alpha) / kZeta2;
        const int64_t zi = int64_t(cnt);  // astype(int): toward zero
        for (int64_t i = 0; i < zi; ++i) sampled.push_back(vocab[k]);
      }
      PyRandom(a.random_seed).shuffle(sampled);
      return Text{py_format(a.template_text, {{"context", join(sampled, " ")}, {"query", ""}}),
                  std::vector<std::string>(vocab.begin() + 1, vocab.begin() + 4)};
    };
    const auto too_long = [&](const Text& x) { return int(a.count_tokens(x.full)) > max_len; };
    Text text;
    if (num_words > 0) {
      text = gen_text(num_words);
      while (too_long(text)) {
        num_words -= incremental;
        if (num_words <= 0 && too_long(gen_text(num_words)))
          throw too_short(a, "the template alone is longer than the budget");
        text = gen_text(num_words);
      }
    } else {
      num_words = max_len / coded_wordlen;
      text = gen_text(num_words);
      while (int(a.count_tokens(text.full)) < max_len) {
        num_words += incremental;
        text = gen_text(num_words);
      }
      num_words -= incremental;
    }
    out_words = num_words;
    return gen_text(num_words);
  };

  int example_words = 0;
  generate(-1, example_words);
  int words = 0;
  const Text text = generate(example_words, words);
  RulerRecord r;
  cut_answer_prefix(r, text.full, Generator::FreqWords);
  r.outputs = text.answer;
  r.length = int(a.count_tokens(text.full)) + ttg;
  r.meta = {{"words", words}, {"vocab_size", vocab_size}};
  return r;
}

}  // namespace accel::ruler
