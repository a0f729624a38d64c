// RULER's task table and templates, copied from NVIDIA/RULER c3f5e3b (ruler_tasks.h), and the
// shared sizing loops.
#include "suites/ruler_tasks.h"

#include <cmath>
#include <stdexcept>

namespace accel::ruler {

const std::vector<TaskConfig>& ruler_tasks() {
  using G = Generator;
  using H = Haystack;
  using N = NeedleType;
  static const std::vector<TaskConfig> t = [] {
    std::vector<TaskConfig> v;
    const auto make = [](std::string_view name, G g) {
      TaskConfig c;
      c.name = name, c.generator = g;
      return c;
    };
    const auto niah = [&](std::string_view name, H h, N k, N val, int nk, int nv, int nq) {
      TaskConfig c = make(name, G::Niah);
      c.haystack = h, c.key_type = k, c.value_type = val;
      c.num_needle_k = nk, c.num_needle_v = nv, c.num_needle_q = nq;
      v.push_back(c);
    };
    niah("niah_single_1", H::Noise, N::Words, N::Numbers, 1, 1, 1);
    niah("niah_single_2", H::Essay, N::Words, N::Numbers, 1, 1, 1);
    niah("niah_single_3", H::Essay, N::Words, N::Uuids, 1, 1, 1);
    niah("niah_multikey_1", H::Essay, N::Words, N::Numbers, 4, 1, 1);
    niah("niah_multikey_2", H::Needle, N::Words, N::Numbers, 1, 1, 1);
    niah("niah_multikey_3", H::Needle, N::Uuids, N::Uuids, 1, 1, 1);
    niah("niah_multivalue", H::Essay, N::Words, N::Numbers, 1, 4, 1);
    niah("niah_multiquery", H::Essay, N::Words, N::Numbers, 1, 1, 4);
    TaskConfig vt = make("vt", G::VariableTracking);
    vt.haystack = H::Noise, vt.num_chains = 1, vt.num_hops = 4;
    v.push_back(vt);
    TaskConfig cwe = make("cwe", G::CommonWords);
    cwe.freq_cw = 30, cwe.freq_ucw = 3, cwe.num_cw = 10;
    v.push_back(cwe);
    TaskConfig fwe = make("fwe", G::FreqWords);
    fwe.alpha = 2.0;
    v.push_back(fwe);
    TaskConfig qa1 = make("qa_1", G::Qa);
    qa1.dataset = "squad";
    v.push_back(qa1);
    TaskConfig qa2 = make("qa_2", G::Qa);
    qa2.dataset = "hotpotqa";
    v.push_back(qa2);
    return v;
  }();
  return t;
}

const TaskConfig* find_ruler_task(std::string_view name) {
  for (const auto& t : ruler_tasks())
    if (t.name == name) return &t;
  return nullptr;
}

bool needs_essays(const TaskConfig& t) {
  if (t.generator == Generator::CommonWords) return true;
  if (t.generator != Generator::Niah) return false;
  return t.haystack == Haystack::Essay || t.key_type == NeedleType::Words ||
         t.value_type == NeedleType::Words;
}

const GeneratorTemplate& generator_template(Generator g) {
  // clang-format off
  static const GeneratorTemplate niah{128,
      "Some special magic {type_needle_v} are hidden within the following text. Make sure to "
      "memorize it. I will quiz you about the {type_needle_v} afterwards.\n{context}\nWhat are all "
      "the special magic {type_needle_v} for {query} mentioned in the provided text?",
      " The special magic {type_needle_v} for {query} mentioned in the provided text are"};
  static const GeneratorTemplate vt{30,
      "Memorize and track the chain(s) of variable assignment hidden in the following text.\n\n"
      "{context}\nQuestion: Find all variables that are assigned the value {query} in the text "
      "above.",
      " Answer: According to the chain(s) of variable assignment in the text above, {num_v} "
      "variables are assigned the value {query}, they are: "};
  static const GeneratorTemplate cwe{120,
      "Below is a numbered list of words. In these words, some appear more often than others. "
      "Memorize the ones that appear most often.\n{context}\nQuestion: What are the 10 most common "
      "words in the above list?",
      " Answer: The top 10 words that appear most often in the list are:"};
  static const GeneratorTemplate fwe{50,
      "Read the following coded text and track the frequency of each coded word. Find the three "
      "most frequently appeared coded words. {context}\nQuestion: Do not provide any explanation. "
      "Please ignore the dots '....'. What are the three most frequently appeared words in the "
      "above coded text?",
      " Answer: According to the coded text above, the three most frequently appeared words are:"};
  static const GeneratorTemplate qa{32,
      "Answer the question based on the given documents. Only give me the answer and do not output "
      "any other words.\n\nThe following are given documents.\n\n{context}\n\nAnswer the question "
      "based on the given documents. Only give me the answer and do not output any other words."
      "\n\nQuestion: {query}",
      " Answer:"};
  // clang-format on
  switch (g) {
    case Generator::Niah:
      return niah;
    case Generator::VariableTracking:
      return vt;
    case Generator::CommonWords:
      return cwe;
    case Generator::FreqWords:
      return fwe;
    case Generator::Qa:
      return qa;
  }
  throw std::logic_error("generator_template: unknown generator");
}

const std::vector<std::pair<std::string_view, std::string_view>>& model_templates() {
  // clang-format off
  static const std::vector<std::pair<std::string_view, std::string_view>> t = {
      {"base", "{task_template}"},
      {"meta-chat", "[INST] {task_template} [/INST]"},
      {"vicuna-chat", "A chat between a curious user and an artificial intelligence assistant. The "
                      "assistant gives helpful, detailed, and polite answers to the user's "
                      "questions. USER: {task_template} ASSISTANT:"},
      {"lwm-chat", "You are a helpful assistant. USER: {task_template} ASSISTANT: "},
      {"command-r-chat", "<BOS_TOKEN><|START_OF_TURN_TOKEN|><|USER_TOKEN|>{task_template}"
                         "<|END_OF_TURN_TOKEN|><|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>"},
      {"chatglm-chat", "[gMASK]sop<|user|> \n {task_template}<|assistant|> \n "},
      {"RWKV", "User: hi\n\nAssistant: Hi. I am your assistant and I will provide expert full "
               "response in full details. Please feel free to ask any question and I will always "
               "answer it\n\nUser: {task_template}\n\nAssistant:"},
      {"Phi3", "<|user|>\n{task_template}<|end|>\n<|assistant|>\n"},
      {"meta-llama3", "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\n{task_template}"
                      "<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n"},
      {"jamba", "<|startoftext|><|bom|><|system|> <|eom|><|bom|><|user|> {task_template}<|eom|>"
                "<|bom|><|assistant|>"},
      {"nemotron5-instruct", "<SPECIAL_10>System\n\n<SPECIAL_11>User\n{task_template}\n"
                             "<SPECIAL_11>Assistant\n"},
  };
  // clang-format on
  return t;
}

void cut_answer_prefix(RulerRecord& r, const std::string& full, Generator g) {
  const std::string_view probe = generator_template(g).answer_prefix.substr(0, 10);
  const size_t at = full.rfind(probe);
  if (at == std::string::npos) throw std::logic_error("ruler: answer prefix not found");
  r.input = full.substr(0, at);
  r.answer_prefix = full.substr(at);
}

std::optional<int> search_size(int lower, int upper, int min_size,
                               const std::function<bool(int)>& fits) {
  std::optional<int> best;
  const auto search = [&](int lo, int hi) {
    while (lo <= hi) {
      const int mid = lo + (hi - lo) / 2;  // (lo + hi) // 2 for non-negative bounds
      if (fits(mid)) {
        best = mid;
        lo = mid + 1;
      } else {
        hi = mid - 1;
      }
    }
  };
  search(lower, upper);
  if (!best && min_size < lower) search(min_size, lower - 1);
  return best;
}

std::invalid_argument too_short(const RulerArgs& args, const std::string& detail) {
  return std::invalid_argument(args.who + ": context " + std::to_string(args.max_seq_length) +
                               " is too short (" + detail + ")");
}

RulerRecord fit_sample(int size, int incremental, int min_size,
                       const std::function<std::optional<RulerRecord>(int)>& attempt,
                       const RulerArgs& args) {
  // RULER retries forever at a size that never fits; every step here lowers the size, so the loop
  // ends after at most size - min_size + 1 attempts.
  for (;;) {
    if (size < min_size)
      throw too_short(args, "the smallest haystack with its template and " +
                                std::to_string(args.tokens_to_generate) +
                                " generated tokens does not fit");
    if (auto r = attempt(size)) return std::move(*r);
    size = size > incremental ? size - incremental : size - 1;
  }
}

double py_floordiv(double a, double b) {
  double mod = std::fmod(a, b);
  double div = (a - mod) / b;
  if (mod != 0.0) {
    if ((b < 0) != (mod < 0)) div -= 1.0;
  }
  if (div != 0.0) {
    double fl = std::floor(div);
    if (div - fl > 0.5) fl += 1.0;
    return fl;
  }
  return std::copysign(0.0, a / b);
}

bool is_short_context(const RulerArgs& a) {
  return a.max_seq_length < 4096;
}

}  // namespace accel::ruler
