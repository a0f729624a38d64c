// Needle-in-a-haystack placement as gkamradt/LLMTest_NeedleInAHaystack 7b90d28 does it
// (needlehaystack/llm_needle_haystack_tester.py: read_context_files, encode_and_trim,
// insert_needle), on token ids of the evaluated model's tokenizer: the essays read until long
// enough, their first tokens kept, and the needle put at a depth, moved back to the nearest
// sentence end. Shared by the `niah` grid and the UUID probes; owns no prompt wording or scoring.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "suites/suite.h"

namespace accel::niah {

// A 64-bit mix of two values (splitmix64's finaliser): seeds of samples and repetitions.
uint64_t mix(uint64_t a, uint64_t b);

// The tester's linear depth grid, np.round(np.linspace(0, 100, n)).astype(int): n >= 1 depths
// from 0 to 100 (n = 11: 0, 10, ..., 100), rounded half to even as numpy does.
std::vector<int> depth_grid(int n);

// Where repetition `rep` starts reading the essays: 0 (the tester's haystack, the essays from
// their first byte) for rep 0; otherwise the first sentence start (after ". " or ".\n") at or
// after a byte offset drawn from (seed, rep), or 0 when there is none.
size_t haystack_start(std::string_view text, uint64_t seed, int rep);

// The first `n` tokens of `text` read from byte `start` on and repeated from its beginning as
// often as needed (read_context_files appends the essays until they hold enough tokens;
// encode_and_trim keeps the first ones). Encodes a prefix that ends at whitespace, with a margin,
// rather than the whole repeated text: the same first tokens, since tokens do not reach across
// that far. Throws std::invalid_argument starting with `who` when the text encodes to nothing.
std::vector<int32_t> essay_tokens(std::string_view text, size_t start, size_t n,
                                  const Tokenizer& tok, const std::string& who);

// Whether token `id` ends a sentence: its text, without trailing whitespace, ends with '.'.
// The tester asks whether the token is in encode('.'), which with tiktoken is the period token;
// with SentencePiece vocabularies encode('.') is "▁." and would match no sentence end, so every
// needle would slide to depth 0. This is the tester's intent for any vocabulary.
bool ends_sentence(const Tokenizer& tok, int32_t id);

struct Placement {
  std::vector<int32_t> tokens;  // context[:at] + needle + context[at:]
  size_t at = 0;                // index of the needle's first token
  size_t target = 0;            // int(len(context) * depth / 100): where the tester aims first
};

// insert_needle on ids: depth 100 appends the needle; otherwise the insertion point starts at
// int(len(context) * (depth / 100)) and moves back until the token before it ends a sentence (or
// it reaches 0). `context` is already trimmed to leave room for the needle.
Placement insert_needle(std::span<const int32_t> context, std::span<const int32_t> needle,
                        int depth_percent, const Tokenizer& tok);

// A prompt of exactly `budget` tokens: BOS (when ctx.bos >= 0), `head`, the essay haystack from
// byte `start` with `needle` at `depth_percent`, then `tail`. Each piece is encoded on its own
// (no special tokens parsed), so the haystack's ids are the tester's and the length is exact.
// The tester's fixed final_context_length_buffer (200 tokens for the template and the answer) is
// replaced by the measured length of the template around the context; the caller leaves the
// generation budget out of `budget`.
struct HaystackPrompt {
  std::vector<int32_t> prompt;
  size_t needle_at = 0;       // prompt index of the needle's first token
  size_t needle_tokens = 0;   // the needle's length in tokens
  size_t haystack_begin = 0;  // prompt index of the haystack's first token
  size_t context_tokens = 0;  // haystack tokens around the needle
  size_t target = 0;          // Placement::target, in haystack tokens
  double depth_actual = 0;    // 100 * (needle index in the haystack) / context_tokens
};
// chat_text: head and tail are a rendered chat template, tokenized with special tokens parsed; a
// head that starts with the BOS token gets no second BOS.
HaystackPrompt haystack_prompt(std::string_view essays, size_t start, const std::string& head,
                               const std::string& needle, const std::string& tail,
                               int depth_percent, int budget, const SuiteContext& ctx,
                               const std::string& who, bool chat_text = false);

// The generated text a suite scores: the tokens before the first EOS (ctx.eos; the harness
// generates a fixed number of tokens), decoded with ctx.tokenizer. Throws std::invalid_argument
// starting with `who` when the model has no tokenizer.
std::string generated_text(const std::vector<int32_t>& tokens, const SuiteContext& ctx,
                           const std::string& who);

}  // namespace accel::niah
