// The NIAH grid suite (niah.h): gkamradt's needle, question and plain-text template around the
// haystack of niah_haystack.h; exact containment scoring.
#include "suites/niah.h"

#include <span>
#include <stdexcept>
#include <vector>

#include "suites/niah_haystack.h"
#include "suites/python_text.h"
#include "suites/ruler_corpus.h"

namespace accel {

namespace {

// needlehaystack/run.py (CommandArgs defaults).
constexpr const char* kNeedle =
    "\nThe best thing to do in San Francisco is eat a sandwich and sit in Dolores Park on a sunny "
    "day.\n";
constexpr const char* kQuestion = "What is the best thing to do in San Francisco?";
// The needle's value: what a correct answer must contain.
constexpr const char* kAnswer = "eat a sandwich and sit in Dolores Park on a sunny day";
// needlehaystack/providers/Anthropic_prompt.txt, byte for byte (no final newline).
constexpr std::string_view kTemplate =
    "You are a helpful AI bot that answers questions for a user. Keep your response short and "
    "direct\n\nHuman: <context>\n{context}\n</context>\n\n{retrieval_question} Don't give "
    "information outside the document or repeat your findings\n\nAssistant: Here is the most "
    "relevant sentence in the context:";

const std::string kWho = "suite 'niah'";

constexpr const char* kAssistantOpening = "Here is the most relevant sentence in the context:";

// kTemplate's parts as chat turns: gkamradt's system prompt as the system turn, the context and
// question (Anthropic_prompt.txt's Human part) as one user turn, and the Assistant part's opening
// as the assistant turn, which the model continues.
std::vector<ChatMessage> chat_turns(const std::string& context, const std::string& question) {
  return {{"system",
           "You are a helpful AI bot that answers questions for a user. Keep your response short "
           "and direct"},
          {"user", "<context>\n" + context + "\n</context>\n\n" + question +
                       " Don't give information outside the document or repeat your findings"},
          {"assistant", kAssistantOpening}};
}

// The chat turns rendered with the model's template (the assistant turn left open), with
// {context} and {retrieval_question} placeholders.
std::string chat_prompt_template(const SuiteContext& ctx) {
  if (!ctx.chat_template)
    throw std::invalid_argument(kWho + ": model_template 'gguf' needs the model's chat template (" +
                                ctx.chat_template_note + ")");
  const std::vector<ChatMessage> turns = chat_turns("{context}", "{retrieval_question}");
  return ctx.chat_template->apply(std::span(turns).first(2), true) + kAssistantOpening;
}

size_t occurrences(std::string_view s, std::string_view what) {
  size_t n = 0;
  for (size_t at = s.find(what); at != std::string_view::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

// The plain prompt: the plan's prompt_template when given (checked to hold each placeholder
// exactly once), else gkamradt's.
std::string plain_template(const std::string& t) {
  if (t.empty()) return std::string(kTemplate);
  for (const char* p : {"{context}", "{retrieval_question}"})
    if (occurrences(t, p) != 1)
      throw std::invalid_argument(kWho + ": prompt_template must contain " + p +
                                  " exactly once (it has " + std::to_string(occurrences(t, p)) +
                                  ")");
  return t;
}

std::string replace_all(std::string s, std::string_view from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
  return s;
}

}  // namespace

namespace niah {
double contains_answer(const std::string& prediction, const std::string& answer) {
  return pytext::py_lower(prediction).find(pytext::py_lower(answer)) != std::string::npos ? 100.0
                                                                                          : 0.0;
}
}  // namespace niah

std::string NiahSuite::summary() const {
  return "needle in a haystack grid (gkamradt 7b90d28: needle, question, Anthropic plain-text "
         "template, linear depths, insertion at a sentence end in the model's tokenizer) over "
         "the Paul Graham essays; context lengths x depths, scored by exact (case-insensitive) "
         "containment of the needle's value";
}

std::vector<ParamSpec> NiahSuite::params() const {
  const auto text = [](const char* name, const char* def, const char* help) {
    return ParamSpec{name, ParamSpec::Kind::Text, def, 0, 0, false, {}, help};
  };
  return {
      text("data", "",
           "Paul Graham essays (a file, or a directory of .txt files joined in name order, e.g. "
           "../shared/data/niah; a suffix #bytes=START:END keeps that byte range, e.g. a "
           "model's held-out essays): the haystack, repeated as needed"),
      {"depths",
       ParamSpec::Kind::Int,
       11,
       1,
       101,
       false,
       {},
       "number of needle depths, np.round(np.linspace(0, 100, depths)); sample i takes depth "
       "i % depths (11: 0, 10, ..., 100)"},
      {"max_new_tokens",
       ParamSpec::Kind::Int,
       50,
       1,
       4096,
       false,
       {},
       "generation budget (CritiPrefill's needle script: 50); prompt + budget = context length"},
      text("needle", kNeedle, "the needle text inserted into the haystack (gkamradt's default)"),
      text("retrieval_question", kQuestion, "the question after the haystack"),
      text("answer", kAnswer,
           "the needle's value: the generation scores 100 when it contains this text "
           "(case-insensitive); must occur in the needle"),
      text("prompt_template", "",
           "the plain prompt around the haystack, with {context} and {retrieval_question} once "
           "each; empty: gkamradt's Anthropic_prompt.txt. E.g. RULER's niah wording for a model "
           "trained on it (plans/capable_niah_grid.json). Not allowed with model_template gguf"),
      {"model_template",
       ParamSpec::Kind::Choice,
       "plain",
       0,
       0,
       false,
       {"plain", "gguf"},
       "plain: gkamradt's Anthropic plain-text prompt; gguf: the model's own "
       "tokenizer.chat_template (recognised families, models/chat_template.h) with gkamradt's "
       "system prompt as the system turn, the context and question as one user turn, and "
       "\"Here is the most relevant sentence in the context:\" opening the assistant turn; the "
       "family is recorded in the sample's model_template"},
  };
}

std::vector<MetricSpec> NiahSuite::metrics() const {
  return {{"niah.score", true, Aggregation::Mean,
           "100 when the generation (up to EOS) contains the needle's value, case-insensitive; "
           "else 0"},
          {"niah.depth", true, Aggregation::Mean,
           "the sample's requested needle depth in % (a coordinate: reports group by it)"},
          {"niah.depth_actual", true, Aggregation::Mean,
           "where the needle landed after moving back to a sentence end: its first token's "
           "index in the haystack tokens, in %"}};
}

Sample NiahSuite::make_sample(int context_len, int index, uint64_t seed, const SuiteContext& ctx,
                              const nlohmann::json& params) const {
  if (index < 0) throw std::invalid_argument(kWho + ": negative sample index");
  if (!ctx.tokenizer)
    throw std::invalid_argument(kWho + ": the model has no tokenizer (the haystack is text)");
  const int depths = params.at("depths").get<int>();
  const int max_new = params.at("max_new_tokens").get<int>();
  const std::string needle = params.at("needle").get<std::string>();
  const std::string question = params.at("retrieval_question").get<std::string>();
  const std::string answer = params.at("answer").get<std::string>();
  if (answer.empty() || needle.find(answer) == std::string::npos)
    throw std::invalid_argument(kWho + ": the answer '" + answer +
                                "' does not occur in the needle, so no generation could find it");
  const auto essays = ruler::load_essays(params.at("data").get<std::string>(), kWho);

  const int depth = niah::depth_grid(depths)[size_t(index % depths)];
  const int rep = index / depths;
  const size_t start = niah::haystack_start(essays->text, seed, rep);
  const bool chat = params.at("model_template").get<std::string>() == "gguf";
  const std::string custom = params.at("prompt_template").get<std::string>();
  if (chat && !custom.empty())
    throw std::invalid_argument(kWho +
                                ": prompt_template and model_template 'gguf' exclude each other");
  const std::string tmpl = chat ? chat_prompt_template(ctx) : plain_template(custom);
  const size_t cut = tmpl.find("{context}");
  const std::string head(tmpl.substr(0, cut));
  const std::string tail = replace_all(tmpl.substr(cut + 9), "{retrieval_question}", question);
  const niah::HaystackPrompt h = niah::haystack_prompt(
      essays->text, start, head, needle, tail, depth, context_len - max_new, ctx, kWho, chat);

  Sample s;
  s.id = "depth" + std::to_string(depth) + "-" + std::to_string(rep);
  s.prompt = h.prompt;
  if (chat) {
    // The haystack with its needle, as text, in the turns the prompt renders from; the tail is
    // tokenized as haystack_prompt tokenizes it, to find where the haystack ends.
    const size_t tail_tokens = ctx.tokenizer->encode(tail, false, true).size();
    const std::span<const int32_t> hay = std::span(h.prompt).subspan(
        h.haystack_begin, h.prompt.size() - h.haystack_begin - tail_tokens);
    s.messages = chat_turns(ctx.tokenizer->decode(hay), question);
  }
  s.max_new_tokens = max_new;
  s.reference = nlohmann::json::array({answer});
  s.meta = {{"depth_percent", depth},
            {"repetition", rep},
            {"haystack_start_byte", start},
            {"needle_token", h.needle_at},
            {"needle_tokens", h.needle_tokens},
            {"haystack_token", h.haystack_begin},
            {"context_tokens", h.context_tokens},
            {"target_token", h.haystack_begin + h.target},
            {"depth_actual", h.depth_actual}};
  // Recorded only for chat prompts, so plain samples keep the content hashes of earlier runs.
  if (chat)
    s.meta["model_template"] = "gguf:" + std::string(chat_family_name(ctx.chat_template->family()));
  return s;
}

Scores NiahSuite::score(const Sample& s, const Generation& out, const Generation*,
                        const SuiteContext& ctx, const nlohmann::json&) const {
  const std::string text = niah::generated_text(out.tokens, ctx, kWho + ": sample '" + s.id + "'");
  return {{"niah.score", niah::contains_answer(text, s.reference.at(0).get<std::string>())},
          {"niah.depth", s.meta.at("depth_percent").get<double>()},
          {"niah.depth_actual", s.meta.at("depth_actual").get<double>()}};
}

}  // namespace accel
