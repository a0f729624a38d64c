// The slice of Python's `str` semantics that LongBench's metrics depend on, over code points:
// lossy UTF-8 decoding (what a tokenizer's decode gives Python), `str.isspace` (what `split()`
// and regex `\s` use), regex `\d` and `\w` for str patterns, and `str.lower()` with its full
// mappings and the final-sigma rule. Tables are Python 3.11's unicodedata (Unicode 14.0.0).
#pragma once
#include <string>
#include <string_view>

namespace accel::longbench {

using U32 = std::u32string;

// UTF-8 to code points; every maximal ill-formed subsequence becomes one U+FFFD (what
// `bytes.decode("utf-8", errors="replace")` and Rust's from_utf8_lossy give, and so what a
// Hugging Face tokenizer's decode hands to Python).
U32 utf8_decode_lossy(std::string_view s);
// True when `s` is well-formed UTF-8 (no surrogates, no overlongs, nothing above U+10FFFF);
// otherwise *bad_offset is the byte offset of the first ill-formed sequence.
bool utf8_valid(std::string_view s, size_t* bad_offset = nullptr);
std::string utf8_encode(std::u32string_view s);
// Lossy round trip: valid UTF-8 with U+FFFD where `s` was ill-formed.
std::string utf8_sanitize(std::string_view s);

bool py_isspace(char32_t c);    // str.isspace(): what str.split() and re `\s` split on
bool py_isdecimal(char32_t c);  // re `\d` in a str pattern (category Nd)
bool py_isword(char32_t c);     // re `\w` in a str pattern: str.isalnum() or '_'
// str.lower(): full lowercase mappings (U+0130 gives two code points) and U+03A3 as final sigma
// (U+03C2) where Unicode's Final_Sigma context holds, as CPython does.
U32 py_lower(std::u32string_view s);

}  // namespace accel::longbench
