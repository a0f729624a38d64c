// Reading LongBench v1's official JSONL files (the `THUDM/LongBench` data: `<task>.jsonl`, and
// `<task>_e.jsonl` for LongBench-E): one record per line with input, context, answers, length,
// all_classes, _id (dataset and language optional). Files are untrusted: every line is checked
// (UTF-8, JSON, each field's type, bounded sizes) when a file is first indexed, and errors name
// the file, the line and the field. Indexes are cached by (path, size, mtime).
#pragma once
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "suites/longbench_tasks.h"

namespace accel::longbench {

class DatasetError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Bounds on untrusted files. LongBench v1's longest record is well under 4 MiB, its gold answers
// (summaries at most) a few KiB, and its largest class list (lsht) has 24 names. The answer bound
// also bounds ROUGE-L's LCS tables.
inline constexpr size_t kMaxLineBytes = size_t(64) << 20;
inline constexpr size_t kMaxRecords = 100000;
inline constexpr size_t kMaxAnswers = 4096;
inline constexpr size_t kMaxAnswerBytes = size_t(64) << 10;
inline constexpr size_t kMaxClasses = 4096;

struct Record {
  std::string id;  // _id
  std::string input, context;
  std::vector<std::string> answers;
  std::optional<std::vector<std::string>> all_classes;  // null for non-classification tasks
  long long length = 0;           // words (English, code) or characters (Chinese) of the record
  std::string dataset, language;  // empty when absent
};

// One validated file: where each record's line is, and what eval.py needs across records.
struct DataFile {
  std::filesystem::path path;
  uintmax_t size = 0;
  std::filesystem::file_time_type mtime;
  struct Line {
    uint64_t offset = 0, bytes = 0;
    size_t line_no = 0;  // 1-based line number in the file
  };
  std::vector<Line> records;
  // eval.py passes one `all_classes` to every prediction of a file: the last record's (it is
  // overwritten while the file is read). null when that record has none.
  nlohmann::json last_all_classes;
};

// "<data_dir>/<task>.jsonl", or "<task>_e.jsonl" for LongBench-E.
std::filesystem::path task_file(const std::filesystem::path& data_dir, const TaskInfo& t, bool e);

// Parses and checks one line of `task`'s file: throws DatasetError "[longbench] FILE:LINE:
// field 'F': ...". Beyond the types, what the reference would crash on is refused: a
// classification task without all_classes, a retrieval answer without its paragraph id.
Record parse_record(std::string_view line, const std::string& file, size_t line_no,
                    const TaskInfo& task);

// Reads and checks every line of `path` (blank lines are skipped; a last line without its
// newline is accepted when it is complete JSON). Throws DatasetError naming the file (missing,
// unreadable, empty, too many records) or the line and field.
std::shared_ptr<const DataFile> index_file(const std::filesystem::path& path, const TaskInfo& task);
// index_file through a process-wide cache keyed by (path, size, mtime).
std::shared_ptr<const DataFile> cached_index(const std::filesystem::path& path,
                                             const TaskInfo& task);
// Record `i` of an indexed file, read again from disk; throws DatasetError if the file changed.
Record read_record(const DataFile& f, size_t i, const TaskInfo& task);

}  // namespace accel::longbench
