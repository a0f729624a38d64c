// PldMethod::run (see pld.h). Phases: prefill, first_token, decode; the decode phase is split in
// the stats into drafter_s (indexing + drafting) and verify_s (target forward, argmax, rollback).
// Verify/accept/rollback follow specs/methods.md §3.2 step for step.
#include "methods/pld.h"

#include <algorithm>
#include <stdexcept>

#include "methods/baseline.h"
#include "methods/phase_timer.h"
#include "models/generation.h"

namespace accel {

std::vector<ParamSpec> PldMethod::params() const {
  using K = ParamSpec::Kind;
  return {
      {"preset", K::Choice, "hf", 0, 0, false, pld_preset_names(),
       "drafter of one implementation (specs/methods.md §3.1); the switches below override it"},
      {"match",
       K::Choice,
       "preset",
       0,
       0,
       false,
       {"preset", "first", "most_recent", "longest"},
       "which occurrence of the trailing n-gram is copied from"},
      {"n_max", K::Int, 0, 0, 64, false, {}, "largest n-gram size tried (0 = preset)"},
      {"n_min", K::Int, 0, 0, 64, false, {}, "smallest n-gram size tried (0 = preset)"},
      {"k", K::Int, 0, 0, 1024, false, {}, "most tokens drafted per step (0 = preset)"},
      {"continuation",
       K::Choice,
       "preset",
       0,
       0,
       false,
       {"preset", "short_ok", "exact_k", "at_least_n"},
       "short_ok: copy what follows (>= 1 token); exact_k: only occurrences followed by k tokens; "
       "at_least_n: no draft if fewer than n tokens follow the chosen occurrence"},
      {"self_match",
       K::Choice,
       "preset",
       0,
       0,
       false,
       {"preset", "allow", "exclude_self", "exclude_overlap"},
       "allow: the trailing n-gram may match itself; exclude_self: occurrences followed by >= 1 "
       "token; exclude_overlap: the copy must start before the trailing n-gram"},
      {"truncate_at_eos",
       K::Choice,
       "preset",
       0,
       0,
       false,
       {"preset", "true", "false"},
       "cut the draft before its first EOS (HF)"},
      {"llamacpp_bounds",
       K::Choice,
       "preset",
       0,
       0,
       false,
       {"preset", "true", "false"},
       "llama.cpp ngram-simple bounds: position 0 never matches, the newest token is never copied, "
       "no draft unless the context exceeds n + k + 2 tokens"},
  };
}

namespace {

PldMatch parse_match(const std::string& s) {
  if (s == "first") return PldMatch::First;
  if (s == "most_recent") return PldMatch::MostRecent;
  return PldMatch::Longest;
}
PldContinuation parse_continuation(const std::string& s) {
  if (s == "short_ok") return PldContinuation::ShortOk;
  if (s == "exact_k") return PldContinuation::ExactK;
  return PldContinuation::AtLeastN;
}
PldSelf parse_self(const std::string& s) {
  if (s == "allow") return PldSelf::Allow;
  if (s == "exclude_self") return PldSelf::ExcludeSelf;
  return PldSelf::ExcludeOverlap;
}

// Per-request counters of the decode loop.
struct Counters {
  size_t steps = 0, draft_steps = 0, drafted = 0, accepted = 0, committed = 0;
  size_t eos_in_draft = 0;    // drafts (after the budget clamp) holding the EOS token
  size_t budget_clamped = 0;  // drafts the remaining token budget shortened
  std::vector<size_t> slot_drafted, slot_accepted;  // [draft slot i]
  double drafter_s = 0, verify_s = 0, index_s = 0;

  void record(size_t gamma, size_t n, size_t kept) {
    ++steps;
    draft_steps += gamma > 0;
    drafted += gamma;
    accepted += n;
    committed += kept;
    if (slot_drafted.size() < gamma) {
      slot_drafted.resize(gamma, 0);
      slot_accepted.resize(gamma, 0);
    }
    for (size_t i = 0; i < gamma; ++i) slot_drafted[i] += 1;
    for (size_t i = 0; i < n; ++i) slot_accepted[i] += 1;
  }

  void write(nlohmann::json& s) const {
    s["verify_steps"] = steps;
    s["draft_steps"] = draft_steps;  // verify steps that carried >= 1 draft token
    s["drafted_tokens"] = drafted;
    s["accepted_tokens"] = accepted;
    // Undefined when nothing was drafted: null, not 0.
    s["acceptance_rate"] = drafted ? nlohmann::json(double(accepted) / double(drafted)) : nullptr;
    // Tokens committed by verify steps (accepted + bonus/correction, after the EOS cut) per step;
    // the first token (from the prefill) is not a verify step's.
    s["tokens_per_step"] = steps ? nlohmann::json(double(committed) / double(steps)) : nullptr;
    s["eos_in_draft"] = eos_in_draft;
    s["budget_clamped"] = budget_clamped;
    s["slot_drafted"] = slot_drafted;
    s["slot_accepted"] = slot_accepted;
    std::vector<double> curve(slot_drafted.size());
    for (size_t i = 0; i < curve.size(); ++i)
      curve[i] = double(slot_accepted[i]) / double(slot_drafted[i]);
    s["slot_acceptance"] = curve;  // P(draft slot i accepted | slot i drafted)
    s["drafter_s"] = drafter_s;    // includes index_s
    s["drafter_index_s"] = index_s;
    s["verify_s"] = verify_s;
  }
};

double seconds_since(PhaseTimer::Clock::time_point t0) {
  return std::chrono::duration<double>(PhaseTimer::Clock::now() - t0).count();
}

// One verify step (specs §3.2 steps 2-5): forward [y, d_1..d_gamma] at positions pos..pos+gamma
// with logits for every row, accept the longest prefix with d_i == argmax(row i-1), return the
// committed tokens d_1..d_n, g_n, and trim the gamma - n rejected entries. `rows_out` receives
// the logits of the committed tokens' rows (0..n) when asked.
std::vector<int32_t> verify(const Model& m, int32_t y, const std::vector<int32_t>& draft,
                            int32_t pos, KVCache& cache, size_t* n_accepted,
                            std::vector<float>* rows_out) {
  const size_t gamma = draft.size();
  std::vector<int32_t> batch(gamma + 1), rows(gamma + 1);
  batch[0] = y;
  std::copy(draft.begin(), draft.end(), batch.begin() + 1);
  for (size_t i = 0; i <= gamma; ++i) rows[i] = int32_t(i);
  const std::vector<float> lg = m.forward(batch, iota_positions(pos, gamma + 1), cache, rows);
  const size_t V = size_t(m.config().n_vocab);
  auto row = [&](size_t i) { return std::span<const float>(lg).subspan(i * V, V); };
  std::vector<int32_t> committed;
  size_t n = 0;
  int32_t g = argmax(row(0));
  while (n < gamma && draft[n] == g) {
    committed.push_back(g);
    ++n;
    g = argmax(row(n));
  }
  committed.push_back(g);  // bonus (n == gamma) or correction
  cache.trim(gamma - n);   // keep y, d_1..d_n; g is the next y and not in the cache
  if (rows_out) rows_out->assign(lg.begin(), lg.begin() + ptrdiff_t((n + 1) * V));
  *n_accepted = n;
  return committed;
}

// The decode loop after the first token: draft, clamp to the budget, verify, commit, stop at EOS.
void decode(const Model& m, const Request& r, const PldDrafterConfig& cfg, KVCache& cache,
            Outcome& out, Counters& st) {
  const size_t budget = size_t(r.max_new_tokens);
  if (out.tokens.back() == r.eos || out.tokens.size() >= budget) return;
  auto t0 = PhaseTimer::Clock::now();
  PldDrafter drafter(cfg, r.eos);
  drafter.append(r.prompt);
  drafter.append(out.tokens.back());
  st.index_s = seconds_since(t0);
  st.drafter_s += st.index_s;

  const size_t V = size_t(m.config().n_vocab);
  int32_t pos = int32_t(r.prompt.size());  // position of y, the last committed token
  std::vector<int32_t> draft;
  std::vector<float> rows;
  const bool want_rows = r.keep_logits > 0;
  while (out.tokens.size() < budget && out.tokens.back() != r.eos) {
    t0 = PhaseTimer::Clock::now();
    drafter.draft(draft);
    // A step commits gamma + 1 tokens: never more than the budget has left.
    const size_t room = budget - out.tokens.size() - 1;
    if (draft.size() > room) {
      draft.resize(room);
      ++st.budget_clamped;
    }
    st.drafter_s += seconds_since(t0);
    st.eos_in_draft += r.eos >= 0 && std::find(draft.begin(), draft.end(), r.eos) != draft.end();

    t0 = PhaseTimer::Clock::now();
    size_t n = 0;
    std::vector<int32_t> committed =
        verify(m, out.tokens.back(), draft, pos, cache, &n, want_rows ? &rows : nullptr);
    // Stop at EOS inside the committed tokens; drop the cache entries of tokens fed after it so
    // the cache ends as the baseline's does (every emitted token but the last).
    size_t kept = committed.size();
    if (r.eos >= 0) {
      const auto it = std::find(committed.begin(), committed.end(), r.eos);
      if (it != committed.end()) kept = size_t(it - committed.begin()) + 1;
    }
    cache.trim(committed.size() - kept);
    st.verify_s += seconds_since(t0);

    committed.resize(kept);
    for (size_t i = 0; i < kept && int(out.logits.size()) < r.keep_logits; ++i)
      out.logits.emplace_back(rows.begin() + ptrdiff_t(i * V),
                              rows.begin() + ptrdiff_t((i + 1) * V));
    st.record(draft.size(), n, kept);
    out.tokens.insert(out.tokens.end(), committed.begin(), committed.end());
    if (r.on_token)
      for (int32_t t : committed) r.on_token(t);
    pos += int32_t(kept);

    t0 = PhaseTimer::Clock::now();
    drafter.append(committed);
    st.drafter_s += seconds_since(t0);
  }
}

void write_config(const nlohmann::json& params, const PldDrafterConfig& c, nlohmann::json& s) {
  s["preset"] = params["preset"];
  s["match"] = to_string(c.match);
  s["n_max"] = c.n_max;
  s["n_min"] = c.n_min;
  s["k"] = c.k;
  s["continuation"] = to_string(c.continuation);
  s["self_match"] = to_string(c.self);
  s["truncate_at_eos"] = c.truncate_at_eos;
  s["llamacpp_bounds"] = c.llamacpp_bounds;
}

}  // namespace

PldDrafterConfig pld_config(const nlohmann::json& p) {
  PldDrafterConfig c = pld_preset(p["preset"].get<std::string>());
  auto given = [&](const char* key) {
    return p.contains(key) && p[key] != "preset" && p[key] != 0;
  };
  if (given("match")) c.match = parse_match(p["match"]);
  if (given("n_min")) c.n_min = p["n_min"];
  if (given("n_max"))
    c.n_max = p["n_max"];
  else
    c.n_max = std::max(c.n_max, c.n_min);  // e.g. hf (2 -> 1) swept at n_min 3 becomes 3 -> 3
  if (given("k")) c.k = p["k"];
  if (given("continuation")) c.continuation = parse_continuation(p["continuation"]);
  if (given("self_match")) c.self = parse_self(p["self_match"]);
  if (given("truncate_at_eos")) c.truncate_at_eos = p["truncate_at_eos"] == "true";
  if (given("llamacpp_bounds")) c.llamacpp_bounds = p["llamacpp_bounds"] == "true";
  validate(c);
  return c;
}

Outcome PldMethod::run(const Engine& e, const Request& r, const nlohmann::json& params) const {
  const PldDrafterConfig cfg = pld_config(params);
  if (!r.forced_tokens.empty()) {
    // Teacher forcing (agreement scoring) feeds the reference's tokens whatever the draft says:
    // nothing to speculate on, so decode step by step as the baseline does, and say so.
    Outcome out = BaselineMethod().run(e, r, nlohmann::json::object());
    write_config(params, cfg, out.stats);
    out.stats["fallback"] = "forced_tokens";
    return out;
  }
  const Model& m = *e.target;
  PhaseTimer timer;
  Outcome out;
  // Any storage type: trim() is the cache's business. A verify rejects at most its k drafts.
  KVCache cache = e.make_target_cache(size_t(std::max(cfg.k, 1)));
  // Peak entries: prompt + (emitted - 1) + the gamma + 1 of a verify step <= prompt + budget - 1.
  cache.reserve(r.prompt.size() + size_t(r.max_new_tokens));
  std::vector<float> last =
      prefill(m, r.prompt, iota_positions(0, r.prompt.size()), cache, e.prefill_chunk);
  timer.lap("prefill");
  out.prompt_tokens = out.kept_tokens = r.prompt.size();
  out.tokens.push_back(argmax(last));  // the first token ends TTFT, as in the baseline
  timer.lap("first_token");
  out.ttft_s = timer.elapsed();
  if (r.keep_logits > 0) out.logits.push_back(std::move(last));
  if (r.on_token) r.on_token(out.tokens.back());

  const auto t_decode = PhaseTimer::Clock::now();
  Counters st;
  decode(m, r, cfg, cache, out, st);
  timer.lap("decode");
  out.decode_s = seconds_since(t_decode);
  out.phases = timer.phases();
  out.kv_bytes = cache.bytes();
  write_config(params, cfg, out.stats);
  st.write(out.stats);
  return out;
}

}  // namespace accel
