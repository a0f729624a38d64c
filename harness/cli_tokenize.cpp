// `accelbench tokenize`: text -> token ids and vocabulary pieces with a model's own tokenizer,
// as a readable listing or JSON. Reads only the GGUF metadata (vocab-only files work); it must
// not load weights or carry tokenizer logic of its own.
#include <cstdio>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "harness/cli.h"
#include "models/gguf.h"
#include "models/tokenizer.h"

namespace accel {

namespace {

// A vocabulary piece made safe for one terminal line: control bytes escaped.
std::string printable(const std::string& s) {
  std::string o;
  for (unsigned char c : s) {
    if (c == '\n')
      o += "\\n";
    else if (c == '\t')
      o += "\\t";
    else if (c == '\r')
      o += "\\r";
    else if (c < 0x20 || c == 0x7F) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      o += buf;
    } else {
      o += char(c);
    }
  }
  return o;
}

}  // namespace

void register_tokenize_command(CLI::App& app, CliCommands& out) {
  struct Args {
    std::string model, text, text_file;
    bool add_special = false, parse_special = false, json = false;
  };
  auto a = std::make_shared<Args>();
  CLI::App* sub = app.add_subcommand("tokenize", "Tokenize text with a model's tokenizer");
  sub->add_option("--model", a->model, "GGUF file (a vocab-only file is enough)")->required();
  auto* text = sub->add_option("--text", a->text, "Text to tokenize");
  auto* file = sub->add_option("--text-file", a->text_file, "File whose bytes are tokenized");
  text->excludes(file);
  file->excludes(text);
  sub->add_flag("--add-special", a->add_special, "Add BOS/EOS as the model's tokenizer says");
  sub->add_flag("--parse-special", a->parse_special,
                "Match control-token texts (e.g. <s>) in the text as those tokens");
  sub->add_flag("--json", a->json, "Print {\"tokens\": [...], \"pieces\": [...]}");
  out.push_back(
      {sub, [a, text, file] {
         if (text->count() == 0 && file->count() == 0)
           throw std::runtime_error("tokenize: give --text or --text-file");
         std::string input = a->text;
         if (file->count()) {
           std::ifstream f(a->text_file, std::ios::binary);
           if (!f) throw std::runtime_error(a->text_file + ": cannot open");
           std::stringstream ss;
           ss << f.rdbuf();
           input = ss.str();
         }
         const GgufFile g = GgufFile::open(a->model);
         // TokenizerSpec::from_gguf names the file and the unsupported model/pre.
         const auto tok = Tokenizer::create(TokenizerSpec::from_gguf(g));
         const std::vector<int32_t> ids = tok->encode(input, a->add_special, a->parse_special);
         if (a->json) {
           nlohmann::ordered_json j = {{"tokens", ids},
                                       {"pieces", nlohmann::ordered_json::array()}};
           for (int32_t id : ids) j["pieces"].push_back(tok->piece(id));
           // Pieces are vocabulary strings, UTF-8 in sane vocabularies; replace rather
           // than throw if one is not.
           std::printf(
               "%s\n",
               j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace).c_str());
           return 0;
         }
         std::string line = "ids:";
         for (int32_t id : ids) line += " " + std::to_string(id);
         std::printf("%s\n", line.c_str());
         std::printf("%zu tokens (%s/%s, %zu bytes of text)\n", ids.size(),
                     tok->spec().model.c_str(), tok->spec().pre.c_str(), input.size());
         for (int32_t id : ids) std::printf("%8d  '%s'\n", id, printable(tok->piece(id)).c_str());
         return 0;
       }});
}

}  // namespace accel
