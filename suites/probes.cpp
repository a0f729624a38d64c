// The adversarial probes (probes.h): UUID needles at fixed depths and JSON field extraction.
#include "suites/probes.h"

#include <array>
#include <map>
#include <set>
#include <stdexcept>

#include "suites/niah_haystack.h"
#include "suites/ruler_corpus.h"
#include "suites/ruler_random.h"
#include "suites/ruler_tasks.h"
#include "suites/ruler_text.h"

namespace accel {

namespace {

const std::string kWho = "suite 'probes'";
constexpr std::array<int, 3> kDepths = {10, 50, 90};

// clang-format off
constexpr std::array<const char*, 24> kFirst = {
    "Ada", "Bruno", "Chen", "Dara", "Elif", "Farid", "Greta", "Hugo", "Ines", "Jonas", "Kenji",
    "Lena", "Mateo", "Nadia", "Omar", "Priya", "Quinn", "Rosa", "Sven", "Tariq", "Uma", "Viktor",
    "Wen", "Yara"};
constexpr std::array<const char*, 24> kLast = {
    "Moreno", "Okafor", "Lindqvist", "Tanaka", "Novak", "Haddad", "Silva", "Kowalski", "Berg",
    "Rossi", "Nguyen", "Petrov", "Mensah", "Dubois", "Ibrahim", "Keller", "Costa", "Fischer",
    "Larsen", "Moreau", "Sato", "Walsh", "Yilmaz", "Zamora"};
constexpr std::array<const char*, 16> kCity = {
    "Lisbon", "Accra", "Osaka", "Tallinn", "Quito", "Lyon", "Pune", "Bergen", "Cork", "Tunis",
    "Perth", "Graz", "Leeds", "Busan", "Porto", "Malmo"};
constexpr std::array<const char*, 6> kDomain = {
    "example.com", "example.org", "mail.test", "post.test", "inbox.test", "corp.test"};
constexpr std::array<const char*, 3> kAsked = {"email", "phone", "account"};
constexpr std::string_view kAccountChars = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789";
// clang-format on

struct Record {
  int64_t id = 0;
  std::string name, city, email, phone, account;
  std::string line() const {
    return "{\"id\": " + std::to_string(id) + ", \"name\": \"" + name + "\", \"city\": \"" + city +
           "\", \"email\": \"" + email + "\", \"phone\": \"" + phone + "\", \"account\": \"" +
           account + "\"}";
  }
  std::string& field(const std::string& f) {
    return f == "email" ? email : f == "phone" ? phone : account;
  }
};

std::string lower(std::string s) {
  for (char& c : s)
    if (c >= 'A' && c <= 'Z') c = char(c - 'A' + 'a');
  return s;
}

std::string digits(ruler::PyRandom& r, int n) {
  std::string s;
  for (int i = 0; i < n; ++i) s += char('0' + r.randbelow(10));
  return s;
}

void draw_fields(ruler::PyRandom& r, Record& rec, const std::string& first,
                 const std::string& last) {
  rec.email = lower(first) + "." + lower(last) + digits(r, 2) + "@" +
              kDomain[r.choice_index(kDomain.size())];
  rec.phone = "+1-555-" + digits(r, 3) + "-" + digits(r, 4);
  rec.account.clear();
  for (int i = 0; i < 10; ++i) rec.account += kAccountChars[r.choice_index(kAccountChars.size())];
}

size_t occurrences(const std::string& text, const std::string& v) {
  size_t n = 0;
  for (size_t at = text.find(v); at != std::string::npos; at = text.find(v, at + 1)) ++n;
  return n;
}

// What sample `index` probes: a depth for uuid (0 for json) and the repetition.
struct Probe {
  bool uuid = true;
  int depth = 0;
  int rep = 0;
};
Probe probe_of(const std::string& task, int index) {
  if (task == "json") return {false, 0, index};
  if (task == "uuid") return {true, kDepths[size_t(index % 3)], index / 3};
  const int k = index % 4;
  return {k < 3, k < 3 ? kDepths[size_t(k)] : 0, index / 4};
}

}  // namespace

namespace probes {

double exact_score(const std::string& prediction, const std::string& value) {
  return !value.empty() && prediction.find(value) != std::string::npos ? 100.0 : 0.0;
}

JsonProbe json_probe(uint64_t seed) {
  ruler::PyRandom r(seed);
  std::vector<Record> recs(kJsonRecords);
  std::vector<std::pair<std::string, std::string>> names(kJsonRecords);
  std::set<int64_t> ids;
  for (int i = 0; i < kJsonRecords; ++i) {
    Record& rec = recs[size_t(i)];
    do rec.id = r.randint(10000, 99999);
    while (!ids.insert(rec.id).second);
    names[size_t(i)] = {kFirst[r.choice_index(kFirst.size())], kLast[r.choice_index(kLast.size())]};
    rec.name = names[size_t(i)].first + " " + names[size_t(i)].second;
    rec.city = kCity[r.choice_index(kCity.size())];
    draw_fields(r, rec, names[size_t(i)].first, names[size_t(i)].second);
  }
  JsonProbe p;
  p.position = int(r.randbelow(kJsonRecords));
  p.twin = int(r.randbelow(kJsonRecords - 1));
  if (p.twin >= p.position) ++p.twin;
  p.field = kAsked[r.choice_index(kAsked.size())];
  Record& target = recs[size_t(p.position)];
  Record& twin = recs[size_t(p.twin)];
  twin.name = target.name;  // the adversarial distractor: same name, other id and values
  draw_fields(r, twin, names[size_t(p.position)].first, names[size_t(p.position)].second);
  p.id = target.id;

  const auto render = [&] {
    std::string t = "Below are " + std::to_string(kJsonRecords) +
                    " records in JSON, one per line. Answer the question about them.\n[\n";
    for (size_t i = 0; i < recs.size(); ++i)
      t += recs[i].line() + (i + 1 < recs.size() ? ",\n" : "\n");
    t += "]\nQuestion: What is the \"" + p.field +
         "\" of the record with \"id\": " + std::to_string(p.id) +
         "? Answer with the value only.\nAnswer:";
    return t;
  };
  // The asked value must occur once, in the target record: redraw it while it is anywhere else.
  p.text = render();
  while (occurrences(p.text, target.field(p.field)) != 1) {
    draw_fields(r, target, names[size_t(p.position)].first, names[size_t(p.position)].second);
    p.text = render();
  }
  p.value = target.field(p.field);
  return p;
}

}  // namespace probes

std::string ProbesSuite::summary() const {
  return "adversarial probes of the seed study: a UUID needle (RULER niah_single_3 wording) at "
         "depths 10/50/90% of the essays, and one field of one of 80 JSON records (a same-name "
         "distractor); exact (verbatim) containment of the value";
}

std::vector<ParamSpec> ProbesSuite::params() const {
  return {{"task",
           ParamSpec::Kind::Choice,
           "all",
           0,
           0,
           false,
           {"all", "uuid", "json"},
           "all: sample i takes uuid at 10, 50, 90% and json in turn; uuid: the three depths in "
           "turn; json: every sample"},
          {"data",
           ParamSpec::Kind::Text,
           "",
           0,
           0,
           false,
           {},
           "Paul Graham essays (file or directory of .txt files, e.g. ../shared/data/niah): the "
           "UUID probe's haystack and its keys' word lists"},
          {"max_new_tokens",
           ParamSpec::Kind::Int,
           64,
           1,
           4096,
           false,
           {},
           "generation budget; the UUID prompt fills the context minus this"}};
}

std::vector<MetricSpec> ProbesSuite::metrics() const {
  const auto m = [](const char* name, const char* help) {
    return MetricSpec{name, true, Aggregation::Mean, help};
  };
  return {m("probes.exact", "every probe: 100 when the value appears verbatim in the generation"),
          m("probes.uuid", "UUID needle probes (all depths): 100 when the UUID appears verbatim"),
          m("probes.uuid.d10", "UUID needle at depth 10%"),
          m("probes.uuid.d50", "UUID needle at depth 50%"),
          m("probes.uuid.d90", "UUID needle at depth 90%"),
          m("probes.json",
            "JSON field extraction from 80 records: 100 when the asked value "
            "appears verbatim")};
}

Sample ProbesSuite::make_sample(int context_len, int index, uint64_t seed, const SuiteContext& ctx,
                                const nlohmann::json& params) const {
  if (index < 0) throw std::invalid_argument(kWho + ": negative sample index");
  if (!ctx.tokenizer)
    throw std::invalid_argument(kWho + ": the model has no tokenizer (the probes are text)");
  const Tokenizer& tok = *ctx.tokenizer;
  const int max_new = params.at("max_new_tokens").get<int>();
  const Probe pr = probe_of(params.at("task").get<std::string>(), index);
  const uint64_t sample_seed = niah::mix(seed, uint64_t(index));
  Sample s;
  s.max_new_tokens = max_new;
  if (pr.uuid) {
    const auto essays = ruler::load_essays(params.at("data").get<std::string>(), kWho + ": uuid");
    ruler::PyRandom r(sample_seed);
    const std::string key = essays->words.key(r.choice_index(essays->words.n_keys()));
    const std::string value = r.uuid4();
    // RULER's niah template with its singular rewrite (one query, one value).
    const ruler::GeneratorTemplate& g = ruler::generator_template(ruler::Generator::Niah);
    std::string tmpl = std::string(g.task_template) + std::string(g.answer_prefix);
    tmpl = ruler::py_replace(tmpl, "Some", "A");
    tmpl = ruler::py_replace(tmpl, "are all", "is");
    tmpl = ruler::py_replace(tmpl, "are", "is");
    tmpl = ruler::py_replace(tmpl, "answers", "answer");
    const size_t cut = tmpl.find("{context}");
    const std::map<std::string, std::string> kw = {{"type_needle_v", "uuid"}, {"query", key}};
    const std::string head = ruler::py_format(tmpl.substr(0, cut), kw);
    const std::string tail = ruler::py_format(tmpl.substr(cut + 9), kw);
    const std::string needle = " One of the special magic uuids for " + key + " is: " + value + ".";
    const size_t start = niah::haystack_start(essays->text, seed, pr.rep);
    const niah::HaystackPrompt h = niah::haystack_prompt(
        essays->text, start, head, needle, tail, pr.depth, context_len - max_new, ctx, kWho);
    s.id = "uuid-d" + std::to_string(pr.depth) + "-" + std::to_string(pr.rep);
    s.prompt = h.prompt;
    s.reference = nlohmann::json::array({value});
    s.meta = {{"task", "uuid"},
              {"depth_percent", pr.depth},
              {"key", key},
              {"repetition", pr.rep},
              {"haystack_start_byte", start},
              {"needle_token", h.needle_at},
              {"needle_tokens", h.needle_tokens},
              {"haystack_token", h.haystack_begin},
              {"context_tokens", h.context_tokens},
              {"depth_actual", h.depth_actual}};
    return s;
  }
  const probes::JsonProbe p = probes::json_probe(sample_seed);
  if (ctx.bos >= 0) s.prompt.push_back(ctx.bos);
  const std::vector<int32_t> body = tok.encode(p.text, false, false);
  s.prompt.insert(s.prompt.end(), body.begin(), body.end());
  if (s.prompt.size() + size_t(max_new) > size_t(std::max(context_len, 0)))
    throw std::invalid_argument(
        kWho + ": json: the " + std::to_string(probes::kJsonRecords) + " records take " +
        std::to_string(s.prompt.size()) + " tokens and the generation " + std::to_string(max_new) +
        ": context length " + std::to_string(context_len) + " is too short");
  s.id = "json-" + std::to_string(pr.rep);
  s.reference = nlohmann::json::array({p.value});
  s.meta = {{"task", "json"},         {"field", p.field},        {"id", p.id},
            {"position", p.position}, {"twin_position", p.twin}, {"repetition", pr.rep}};
  return s;
}

Scores ProbesSuite::score(const Sample& s, const Generation& out, const Generation*,
                          const SuiteContext& ctx, const nlohmann::json&) const {
  const std::string text = niah::generated_text(out.tokens, ctx, kWho + ": sample '" + s.id + "'");
  const double v = probes::exact_score(text, s.reference.at(0).get<std::string>());
  const std::string task = s.meta.at("task").get<std::string>();
  Scores sc = {{"probes.exact", v}, {"probes." + task, v}};
  if (task == "uuid")
    sc["probes.uuid.d" + std::to_string(s.meta.at("depth_percent").get<int>())] = v;
  return sc;
}

}  // namespace accel
