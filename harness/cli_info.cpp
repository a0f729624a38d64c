// `accelbench info MODEL`: architecture, hyper-parameters, parameter count, tensor types, bytes,
// tokenizer, and what loading it cost (seconds, resident memory), as text or JSON.
#include <chrono>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>

#include "harness/cli.h"
#include "harness/model_session.h"
#include "harness/process_memory.h"

namespace accel {

void register_info_command(CLI::App& app, CliCommands& out) {
  struct Args {
    std::string model;
    bool json = false;
  };
  auto a = std::make_shared<Args>();
  CLI::App* sub = app.add_subcommand("info", "Describe a GGUF model file");
  sub->add_option("model", a->model, "GGUF file")->required();
  sub->add_flag("--json", a->json, "Print one JSON object");
  out.push_back({sub, [a] {
                   reset_peak_rss();
                   const int64_t rss_before = current_rss_bytes();
                   const auto t0 = std::chrono::steady_clock::now();
                   ModelSession s = ModelSession::open(a->model);
                   const double load_s =
                       std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
                   const Model& m = *s.model;
                   const ModelConfig& c = m.config();
                   std::map<std::string, uint64_t> types;
                   for (const auto& t : m.file().tensors())
                     types[std::string(dtype_name(t.type))]++;
                   // The hyper-parameters as the results store records them, plus the rest.
                   nlohmann::json j = config_json(c);
                   j.update({
                       {"path", m.path()},
                       {"architecture", c.arch_name},
                       {"name", m.file().get_string_opt("general.name").value_or("")},
                       {"context_length", c.n_ctx},
                       {"rope_freq_base", c.rope.freq_base},
                       {"rope_freq_scale", c.rope.freq_scale},
                       {"rope_dims", c.rope.n_rot},
                       {"rms_eps", c.rms_eps},
                       {"attention_scale", attention_scale(c)},
                       {"n_params", m.n_params()},
                       {"n_tensors", m.file().tensors().size()},
                       {"tensor_types", types},
                       {"file_bytes", m.file().file_size()},
                       {"packed_weight_bytes", m.weight_bytes()},
                       // Loading measured here: the file is mapped, each matrix packed and its
                       // file pages dropped, so resident growth should be about the packed bytes.
                       {"load_seconds", load_s},
                       {"resident_bytes_added_by_load", current_rss_bytes() - rss_before},
                       {"peak_resident_bytes", peak_rss_bytes()},
                       {"resident_file_pages_bytes", status_field_bytes("RssFile:")},
                       {"resident_anon_bytes", status_field_bytes("RssAnon:")},
                   });
                   if (s.tokenizer)
                     j["tokenizer"] = {{"model", s.tokenizer->spec().model},
                                       {"pre", s.tokenizer->spec().pre},
                                       {"n_vocab", s.tokenizer->n_vocab()},
                                       {"bos", s.tokenizer->bos()},
                                       {"eos", s.tokenizer->eos()}};
                   else
                     j["tokenizer"] = {{"unsupported", s.tokenizer_error}};
                   if (a->json) {
                     std::printf("%s\n", j.dump(2).c_str());
                     return 0;
                   }
                   for (auto& [k, v] : j.items())
                     std::printf("%-20s %s\n", k.c_str(),
                                 v.is_string() ? v.get<std::string>().c_str() : v.dump().c_str());
                   return 0;
                 }});
}

}  // namespace accel
