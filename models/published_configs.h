// Named cache layouts for sizing KV caches without a model file: published models whose
// figures the project reproduces (`kvcalc --config NAME`), and the synthetic families' members as
// "family/role". Owns the table and the name lookup; the arithmetic is in kv_memory.h.
#pragma once
#include <string>
#include <vector>

#include "models/kv_memory.h"

namespace accel {

// The published models' layouts, in table order: llama-3.1-70b, gemma-4-31b, gemma-3-27b,
// gpt-oss-20b, gpt-oss-120b, and the hybrids qwen3.5-122b-a10b, qwen3.5-2b, nemotron-h-120b,
// nemotron-h-nano-4b.
const std::vector<AttentionLayout>& published_layouts();

// A published layout by name, or a synthetic family member as "family/role" (e.g. small/target).
// Throws std::invalid_argument naming what is unknown and listing what is known.
AttentionLayout find_attention_layout(const std::string& name);

// Names find_attention_layout accepts: the published ones, then every family/role.
std::vector<std::string> attention_layout_names();

}  // namespace accel
