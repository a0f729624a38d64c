// The registry of suites and suite parameter resolution (see suite.h). Adding a suite: write its
// pair of files and add one line to the table in all_suites().
#include <stdexcept>

#include "suites/agreement.h"
#include "suites/longbench.h"
#include "suites/niah.h"
#include "suites/parity.h"
#include "suites/perplexity.h"
#include "suites/probes.h"
#include "suites/ruler.h"
#include "suites/suite.h"
#include "suites/synthetic.h"

namespace accel {

std::vector<const Suite*> all_suites() {
  static const SyntheticSuite synthetic;
  static const AgreementSuite agreement;
  static const ParitySuite parity;
  static const RulerSuite ruler;
  static const LongBenchSuite longbench;
  static const NiahSuite niah;
  static const ProbesSuite probes;
  static const PerplexitySuite perplexity;
  return {&synthetic, &agreement, &parity, &ruler, &longbench, &niah, &probes, &perplexity};
}

const Suite& find_suite(const std::string& name) {
  std::string known;
  for (const Suite* s : all_suites()) {
    if (s->name() == name) return *s;
    known += (known.empty() ? "" : ", ") + s->name();
  }
  throw std::invalid_argument("unknown suite '" + name + "' (known: " + known + ")");
}

nlohmann::json resolve_suite_params(const Suite& s, const nlohmann::json& given) {
  return resolve_param_specs("suite '" + s.name() + "'", s.params(), given);
}

nlohmann::json to_json(const TaskSummary& t) {
  nlohmann::json groups = nlohmann::json::array();
  for (const auto& [label, tasks] : t.groups)
    groups.push_back({{"label", label}, {"tasks", tasks}});
  return {{"task_metric", t.task_metric},
          {"round_decimals", t.round_decimals},
          {"tasks", t.tasks},
          {"overall", t.overall},
          {"groups", groups},
          {"length_weighted", t.length_weighted}};
}

std::string aggregation_name(Aggregation a) {
  switch (a) {
    case Aggregation::Mean:
      return "mean";
    case Aggregation::Sum:
      return "sum";
    case Aggregation::Min:
      return "min";
    case Aggregation::Max:
      return "max";
  }
  return "?";
}

}  // namespace accel
