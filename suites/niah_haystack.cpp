// Needle placement on token ids (niah_haystack.h), after gkamradt's tester.
#include "suites/niah_haystack.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace accel::niah {

namespace {

bool is_space(char c) {
  return c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

}  // namespace

uint64_t mix(uint64_t a, uint64_t b) {
  uint64_t z = a + 0x9e3779b97f4a7c15ull * (b + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

std::vector<int> depth_grid(int n) {
  if (n < 1) throw std::invalid_argument("niah: the depth grid needs at least one depth");
  // numpy's linspace: k * step, the last element set to the stop; np.round rounds half to even
  // (nearbyint in the default rounding mode).
  std::vector<int> out;
  const double step = n > 1 ? 100.0 / double(n - 1) : 0.0;
  for (int k = 0; k < n; ++k) {
    const double y = k == n - 1 && n > 1 ? 100.0 : double(k) * step;
    out.push_back(int(std::nearbyint(y)));
  }
  return out;
}

size_t haystack_start(std::string_view text, uint64_t seed, int rep) {
  if (rep == 0 || text.empty()) return 0;
  const size_t from = size_t(mix(seed, uint64_t(rep)) % text.size());
  for (size_t i = from; i + 1 < text.size(); ++i) {
    if (text[i] != '.' || (text[i + 1] != ' ' && text[i + 1] != '\n')) continue;
    size_t s = i + 1;
    while (s < text.size() && is_space(text[s])) ++s;
    return s < text.size() ? s : 0;
  }
  return 0;
}

std::vector<int32_t> essay_tokens(std::string_view text, size_t start, size_t n,
                                  const Tokenizer& tok, const std::string& who) {
  if (n == 0) return {};
  if (text.empty() || start >= text.size())
    throw std::invalid_argument(who + ": the essay text is empty");
  // A margin of tokens past the n kept, so that the cut cannot change them.
  const size_t want = n + 32;
  for (size_t len = 2 * n + 256;; len *= 2) {
    std::string chunk;
    chunk.reserve(len + 64);
    size_t pos = start;
    const auto take = [&](size_t k) {
      while (k > 0) {
        const size_t m = std::min(k, text.size() - pos);
        chunk.append(text.substr(pos, m));
        k -= m;
        pos += m;
        if (pos == text.size()) pos = 0;
      }
    };
    take(len);
    // End at whitespace (ASCII, so never inside a UTF-8 sequence), within one text's length.
    for (size_t extra = 0; !is_space(chunk.back()) && extra < text.size(); ++extra) take(1);
    std::vector<int32_t> ids = tok.encode(chunk, false, false);
    if (ids.size() >= want) {
      ids.resize(n);
      return ids;
    }
    if (ids.empty()) throw std::invalid_argument(who + ": the essay text encodes to no tokens");
  }
}

bool ends_sentence(const Tokenizer& tok, int32_t id) {
  const std::string s = tok.decode(std::span<const int32_t>(&id, 1));
  size_t e = s.size();
  while (e > 0 && is_space(s[e - 1])) --e;
  return e > 0 && s[e - 1] == '.';
}

Placement insert_needle(std::span<const int32_t> context, std::span<const int32_t> needle,
                        int depth_percent, const Tokenizer& tok) {
  Placement p;
  if (depth_percent == 100) {
    p.at = p.target = context.size();
  } else {
    // int(len(tokens_context) * (depth_percent / 100)) in float64, truncated.
    p.target = size_t(double(context.size()) * (double(depth_percent) / 100.0));
    p.at = std::min(p.target, context.size());
    while (p.at > 0 && !ends_sentence(tok, context[p.at - 1])) --p.at;
  }
  p.tokens.reserve(context.size() + needle.size());
  p.tokens.insert(p.tokens.end(), context.begin(), context.begin() + ptrdiff_t(p.at));
  p.tokens.insert(p.tokens.end(), needle.begin(), needle.end());
  p.tokens.insert(p.tokens.end(), context.begin() + ptrdiff_t(p.at), context.end());
  return p;
}

HaystackPrompt haystack_prompt(std::string_view essays, size_t start, const std::string& head,
                               const std::string& needle, const std::string& tail,
                               int depth_percent, int budget, const SuiteContext& ctx,
                               const std::string& who, bool chat_text) {
  if (!ctx.tokenizer)
    throw std::invalid_argument(who + ": the model has no tokenizer (the haystack is text)");
  const Tokenizer& tok = *ctx.tokenizer;
  const std::vector<int32_t> head_ids = tok.encode(head, false, chat_text);
  const std::vector<int32_t> tail_ids = tok.encode(tail, false, chat_text);
  const bool head_has_bos = chat_text && !head_ids.empty() && head_ids.front() == ctx.bos;
  const size_t n_bos = ctx.bos >= 0 && !head_has_bos ? 1 : 0;
  const std::vector<int32_t> needle_ids = tok.encode(needle, false, false);
  const size_t fixed = n_bos + head_ids.size() + tail_ids.size() + needle_ids.size();
  if (budget < 0 || size_t(budget) < fixed + 1)
    throw std::invalid_argument(who + ": context too short: the template and the needle take " +
                                std::to_string(fixed) + " tokens and the haystack none of " +
                                std::to_string(std::max(budget, 0)) +
                                " (context length minus the generation budget)");
  const std::vector<int32_t> context =
      essay_tokens(essays, start, size_t(budget) - fixed, tok, who);
  Placement pl = insert_needle(context, needle_ids, depth_percent, tok);

  HaystackPrompt h;
  h.prompt.reserve(size_t(budget));
  if (n_bos) h.prompt.push_back(ctx.bos);
  h.prompt.insert(h.prompt.end(), head_ids.begin(), head_ids.end());
  h.haystack_begin = h.prompt.size();
  h.needle_at = h.haystack_begin + pl.at;
  h.prompt.insert(h.prompt.end(), pl.tokens.begin(), pl.tokens.end());
  h.prompt.insert(h.prompt.end(), tail_ids.begin(), tail_ids.end());
  h.needle_tokens = needle_ids.size();
  h.context_tokens = context.size();
  h.target = pl.target;
  h.depth_actual = 100.0 * double(pl.at) / double(context.size());
  return h;
}

std::string generated_text(const std::vector<int32_t>& tokens, const SuiteContext& ctx,
                           const std::string& who) {
  if (!ctx.tokenizer)
    throw std::invalid_argument(who + ": the model has no tokenizer to decode the generation with");
  size_t end = 0;
  while (end < tokens.size() && !(ctx.eos >= 0 && tokens[end] == ctx.eos)) ++end;
  return ctx.tokenizer->decode(std::span<const int32_t>(tokens.data(), end));
}

}  // namespace accel::niah
