// The dashboard's grouping, labels and order (dashboard_groups.h).
#include "reports/dashboard_groups.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <tuple>

#include "reports/tables.h"

namespace accel::reports {

int verdict_rank(bool judged, Verdict v) {
  if (!judged) return 4;
  switch (v) {
    case Verdict::Regressed:
      return 0;
    case Verdict::Improved:
      return 1;
    case Verdict::Ok:
      return 2;
    case Verdict::TooFewTrials:
      return 3;
  }
  return 2;
}

bool natural_less(const std::string& a, const std::string& b) {
  const auto digit = [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; };
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (digit(a[i]) && digit(b[j])) {
      size_t ie = i, je = j;
      while (ie < a.size() && digit(a[ie])) ++ie;
      while (je < b.size() && digit(b[je])) ++je;
      // Compare digit runs as numbers of any length: strip leading zeros, then length, then text.
      size_t is = i, js = j;
      while (is + 1 < ie && a[is] == '0') ++is;
      while (js + 1 < je && b[js] == '0') ++js;
      const auto x = std::make_tuple(ie - is, a.substr(is, ie - is));
      const auto y = std::make_tuple(je - js, b.substr(js, je - js));
      if (x != y) return x < y;
      i = ie;
      j = je;
    } else {
      if (a[i] != b[j]) return static_cast<unsigned char>(a[i]) < static_cast<unsigned char>(b[j]);
      ++i;
      ++j;
    }
  }
  return a.size() - i < b.size() - j;
}

namespace {

// Whatever can tell two cases of a group apart besides their context length: parameters (with
// draft and input files), KV type, workload and sample.
nlohmann::json identity(const CaseHistory& c) {
  nlohmann::json p = c.config;
  p["KV"] = c.kv_dtype;
  p["workload"] = c.workload;
  p["sample"] = c.sample_id;
  return p;
}

// Parameter values in their natural order: numbers by value, text naturally.
bool value_less(const nlohmann::json& a, const nlohmann::json& b) {
  if (a.is_string() && b.is_string())
    return natural_less(a.get<std::string>(), b.get<std::string>());
  return a < b;
}

std::string lower(std::string s) {
  for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

CaseGroup make_group(const History& h, const std::vector<size_t>& members,
                     const std::vector<int>& ranks) {
  CaseGroup g;
  const CaseHistory& first = h.cases[members.front()];
  g.method = first.method;
  g.model = first.model;
  g.title = g.method + " · " + g.model;
  std::vector<ConfigRow> ids;  // one per case, so the shared rule finds what varies
  for (size_t i : members) ids.push_back(ConfigRow{g.method, identity(h.cases[i])});
  const std::vector<std::string> varying = varying_params(ids).at(g.method);
  std::vector<std::string> fixed;
  for (const auto& [k, v] : ids.front().params.items())
    if (std::find(varying.begin(), varying.end(), k) == varying.end()) fixed.push_back(k);
  g.fixed = fixed.empty() ? "" : params_label(ids.front().params, fixed);
  for (size_t m = 0; m < members.size(); ++m) {
    const CaseHistory& c = h.cases[members[m]];
    GroupedCase gc;
    gc.index = members[m];
    gc.label = varying.empty() ? "" : params_label(ids[m].params, varying);
    gc.full_text = lower(g.title + " " + params_label(ids[m].params) +
                         " ctx=" + std::to_string(c.context_len) + " " + c.case_key);
    g.worst_rank = std::min(g.worst_rank, ranks[members[m]]);
    g.cases.push_back(std::move(gc));
  }
  const auto key_of = [&](const GroupedCase& gc) { return identity(h.cases[gc.index]); };
  std::stable_sort(g.cases.begin(), g.cases.end(), [&](const GroupedCase& a, const GroupedCase& b) {
    const CaseHistory &ca = h.cases[a.index], &cb = h.cases[b.index];
    if (ca.context_len != cb.context_len) return ca.context_len < cb.context_len;
    const nlohmann::json ia = key_of(a), ib = key_of(b);
    for (const auto& k : varying) {
      const nlohmann::json va = ia.value(k, nlohmann::json()), vb = ib.value(k, nlohmann::json());
      // Equality by the order itself (natural order ties "a01" with "a1"): a strict weak order.
      if (value_less(va, vb) || value_less(vb, va)) return value_less(va, vb);
    }
    return ca.case_key < cb.case_key;
  });
  return g;
}

}  // namespace

std::vector<CaseGroup> group_cases(const History& h, const std::vector<int>& ranks) {
  std::map<std::pair<std::string, std::string>, std::vector<size_t>> members;
  for (size_t i = 0; i < h.cases.size(); ++i)
    members[{h.cases[i].method, h.cases[i].model}].push_back(i);
  std::vector<CaseGroup> groups;
  for (const auto& [key, idx] : members) groups.push_back(make_group(h, idx, ranks));
  std::stable_sort(groups.begin(), groups.end(), [](const CaseGroup& a, const CaseGroup& b) {
    if (a.worst_rank != b.worst_rank) return a.worst_rank < b.worst_rank;
    if (a.method != b.method) return natural_less(a.method, b.method);
    return natural_less(a.model, b.model);
  });
  return groups;
}

}  // namespace accel::reports
