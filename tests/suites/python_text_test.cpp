// Python str semantics (python_text.h) on hand-worked cases whose expected values CPython 3.11
// prints, and the generated tables: running gen_python_text_tables.py must reproduce the
// committed python_text_tables.inc byte for byte.
#include "suites/python_text.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "tests/support/python_reference.h"

namespace accel::pytext {
namespace {

const std::string R = "\xef\xbf\xbd";  // U+FFFD

std::string s8(const U32& s) {
  return utf8_encode(s);
}

TEST(PythonText, LossyDecodingReplacesEachMaximalIllFormedSubpart) {
  EXPECT_EQ(s8(utf8_decode_lossy("a\xC3\xA9z")), "a\xC3\xA9z");
  // A truncated 3-byte sequence is one U+FFFD; a lone continuation byte is another.
  EXPECT_EQ(utf8_decode_lossy("\xE4\xB8x\x80"), (U32{0xFFFD, U'x', 0xFFFD}));
  // Overlong, surrogate and out-of-range encodings are ill-formed byte by byte.
  EXPECT_EQ(utf8_decode_lossy("\xC0\xAF"), (U32{0xFFFD, 0xFFFD}));
  EXPECT_EQ(utf8_decode_lossy("\xED\xA0\x80"), (U32{0xFFFD, 0xFFFD, 0xFFFD}));
  EXPECT_EQ(utf8_decode_lossy("\xF4\x90\x80\x80"), (U32{0xFFFD, 0xFFFD, 0xFFFD, 0xFFFD}));
  EXPECT_EQ(utf8_decode_lossy("\xF0\x9F\x98\x80"), (U32{0x1F600}));
  EXPECT_EQ(utf8_sanitize("a\xff"), "a" + R);
  EXPECT_EQ(utf8_sanitize("\xe2\x82"), R);
  EXPECT_EQ(utf8_sanitize("\xe2\x82x"), R + "x");
  EXPECT_EQ(utf8_sanitize("\xed\xa0\x80"), R + R + R);  // a surrogate
  EXPECT_EQ(utf8_sanitize("\xf0\x9f\x98"), R);
  EXPECT_EQ(utf8_sanitize("\xc0\xaf"), R + R);
  EXPECT_EQ(utf8_sanitize("\xf4\x90\x80\x80"), R + R + R + R);
  EXPECT_EQ(utf8_sanitize("ok \xc3\xa9"), "ok \xc3\xa9");
}

TEST(PythonText, InvalidAtNamesTheFirstIllFormedByte) {
  EXPECT_EQ(utf8_invalid_at("ok\xFF"), 2u);
  EXPECT_EQ(utf8_invalid_at("ok \xc3\xa9 \xff"), 6u);
  EXPECT_EQ(utf8_invalid_at("ok \xc3\xa9"), std::string::npos);
  EXPECT_EQ(utf8_invalid_at("中文 \xF0\x9F\x98\x80"), std::string::npos);
  EXPECT_EQ(utf8_invalid_at(""), std::string::npos);
  const Utf8Step st = utf8_step("\xe2\x82x", 0);
  EXPECT_FALSE(st.valid);
  EXPECT_EQ(st.len, 2u);  // the maximal subpart stops before 'x'
}

TEST(PythonText, CharacterClassesArePythons) {
  for (char32_t c :
       {U' ', U'\t', U'\n', U'\x0b', U'\x0c', U'\r', U'\x1c', U'\x1f', U'\x85', U'\xa0', U'\u1680',
        U'\u2000', U'\u200a', U'\u2028', U'\u2029', U'\u202f', U'\u205f', U'\u3000'})
    EXPECT_TRUE(py_isspace(c)) << uint32_t(c);
  for (char32_t c : {U'\u200b', U'\ufeff', U'x', U'\u180e'}) EXPECT_FALSE(py_isspace(c));
  EXPECT_TRUE(py_isdecimal(U'7'));
  EXPECT_TRUE(py_isdecimal(U'\u0663'));   // ARABIC-INDIC DIGIT THREE
  EXPECT_TRUE(py_isdecimal(U'\uff12'));   // FULLWIDTH DIGIT TWO
  EXPECT_FALSE(py_isdecimal(U'\u00b2'));  // superscript two: a digit, not decimal
  EXPECT_TRUE(py_isword(U'_'));
  EXPECT_TRUE(py_isword(U'é'));
  EXPECT_TRUE(py_isword(U'中'));
  EXPECT_TRUE(py_isword(U'\u00b2'));  // isnumeric
  EXPECT_FALSE(py_isword(U'-'));
  EXPECT_FALSE(py_isword(U'\u201c'));
}

TEST(PythonText, LowerIsPythonsFullMappingWithFinalSigma) {
  EXPECT_EQ(s8(py_lower(U"ÀÉÎ Straße ǅ")), "àéî straße ǆ");
  EXPECT_EQ(py_lower(U"\u0130"), (U32{U'i', 0x307}));  // İ -> i + combining dot above
  EXPECT_EQ(s8(py_lower(U"ＡＢＣ")), "ａｂｃ");
  // Σ is final (ς) after a cased letter and not before one; case-ignorable characters between
  // are skipped.
  EXPECT_EQ(s8(py_lower(U"ΟΔΟΣ")), "οδος");
  EXPECT_EQ(s8(py_lower(U"ΣΑΣ ΑΣ. Σ")), "σας ας. σ");
  EXPECT_EQ(s8(py_lower(U"ΑΣ'Α")), "ασ'α");  // apostrophe is case-ignorable: not final
  EXPECT_EQ(s8(py_lower(U"ΑΣ'")), "ας'");
}

TEST(PythonText, LowerOfUtf8DecodesLowersAndEncodes) {
  EXPECT_EQ(py_lower("ABC xyz 123"), "abc xyz 123");
  EXPECT_EQ(py_lower("FRÉDÉRIC São"), "frédéric são");
  EXPECT_EQ(py_lower("İ"), "i\xcc\x87");     // one code point lowercases to two
  EXPECT_EQ(py_lower("ǅemal"), "ǆemal");     // titlecase digraph
  EXPECT_EQ(py_lower("\xe2\x84\xaa"), "k");  // KELVIN SIGN
  EXPECT_EQ(py_lower("straße STRASSE"), "straße strasse");
  EXPECT_EQ(py_lower("ΑΣ ΣΑ Σ AΣ. xΣy"), "ας σα σ aς. xσy");  // 'ΑΣ ΣΑ Σ AΣ. xΣy'.lower()
  EXPECT_EQ(py_lower("A\xe2\x82"
                     "B"),
            "a" + R + "b");  // decode(errors="replace") first
  // Stride-2 runs map only their even offsets: U+0100 -> U+0101, U+0101 stays.
  EXPECT_EQ(py_lower("\xc4\x80\xc4\x81"), "\xc4\x81\xc4\x81");
}

TEST(PythonText, GeneratorReproducesTheCommittedTables) {
  ACCEL_REQUIRE_PYTHON("unicodedata");
  const std::string src = ACCELBENCH_SOURCE_DIR;
  std::string out, err;
  const int code = test::run_python(src + "/suites/gen_python_text_tables.py", &out, &err);
  if (code != 0 && !test::in_ci())  // another Unicode version: the script says which
    GTEST_SKIP() << "gen_python_text_tables.py refused: " << err;
  ASSERT_EQ(code, 0) << err;
  std::ifstream f(src + "/suites/python_text_tables.inc", std::ios::binary);
  std::ostringstream committed;
  committed << f.rdbuf();
  EXPECT_TRUE(out == committed.str())
      << "suites/python_text_tables.inc differs from what its generator writes (" << out.size()
      << " bytes against " << committed.str().size() << "); regenerate it";
}

}  // namespace
}  // namespace accel::pytext
