// LongBench JSONL loading and validation (longbench_data.h).
#include "suites/longbench_data.h"

#include <cstring>
#include <fstream>
#include <map>
#include <mutex>

#include "suites/longbench_metrics.h"
#include "suites/longbench_unicode.h"

namespace accel::longbench {

namespace fs = std::filesystem;

namespace {

[[noreturn]] void fail(const std::string& file, size_t line, const std::string& what) {
  throw DatasetError("[longbench] " + file + ":" + std::to_string(line) + ": " + what);
}

[[noreturn]] void fail_field(const std::string& file, size_t line, const std::string& field,
                             const std::string& what) {
  fail(file, line, "field '" + field + "': " + what);
}

std::string type_of(const nlohmann::json& v) {
  return v.type_name();
}

const nlohmann::json& required(const nlohmann::json& obj, const char* key, const std::string& file,
                               size_t line) {
  const auto it = obj.find(key);
  if (it == obj.end()) fail_field(file, line, key, "missing");
  return *it;
}

std::string string_field(const nlohmann::json& obj, const char* key, const std::string& file,
                         size_t line) {
  const nlohmann::json& v = required(obj, key, file, line);
  if (!v.is_string()) fail_field(file, line, key, "expected a string, got " + type_of(v));
  return v.get<std::string>();
}

std::vector<std::string> string_list(const nlohmann::json& v, const char* key, size_t max_items,
                                     const std::string& file, size_t line) {
  if (!v.is_array()) fail_field(file, line, key, "expected an array of strings, got " + type_of(v));
  if (v.size() > max_items)
    fail_field(file, line, key,
               std::to_string(v.size()) + " items (at most " + std::to_string(max_items) + ")");
  std::vector<std::string> out;
  for (size_t i = 0; i < v.size(); ++i) {
    if (!v[i].is_string())
      fail_field(file, line, std::string(key) + "[" + std::to_string(i) + "]",
                 "expected a string, got " + type_of(v[i]));
    out.push_back(v[i].get<std::string>());
    if (out.back().size() > kMaxAnswerBytes)
      fail_field(file, line, std::string(key) + "[" + std::to_string(i) + "]",
                 std::to_string(out.back().size()) + " bytes (at most " +
                     std::to_string(kMaxAnswerBytes) + ")");
  }
  return out;
}

}  // namespace

fs::path task_file(const fs::path& data_dir, const TaskInfo& t, bool e) {
  return data_dir / (std::string(t.name) + (e ? "_e" : "") + ".jsonl");
}

Record parse_record(std::string_view line, const std::string& file, size_t line_no,
                    const TaskInfo& task) {
  if (line.size() > kMaxLineBytes)
    fail(file, line_no,
         "line of " + std::to_string(line.size()) + " bytes (at most " +
             std::to_string(kMaxLineBytes) + ")");
  if (const size_t bad = utf8_invalid_at(line); bad != std::string_view::npos)
    fail(file, line_no, "invalid UTF-8 at byte " + std::to_string(bad + 1) + " of the line");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(line);
  } catch (
      const nlohmann::json::exception& e) {  // parse_error, or out_of_range (a number overflows)
    fail(file, line_no, std::string("invalid JSON (truncated line?): ") + e.what());
  }
  if (!j.is_object()) fail(file, line_no, "expected a JSON object, got " + type_of(j));
  Record r;
  r.input = string_field(j, "input", file, line_no);
  r.context = string_field(j, "context", file, line_no);
  r.answers =
      string_list(required(j, "answers", file, line_no), "answers", kMaxAnswers, file, line_no);
  const nlohmann::json& len = required(j, "length", file, line_no);
  if (!len.is_number_integer() || !len.is_number_unsigned())
    fail_field(file, line_no, "length", "expected a non-negative integer, got " + len.dump());
  if (len.get<unsigned long long>() > (1ull << 40))
    fail_field(file, line_no, "length", "implausibly large: " + len.dump());
  r.length = len.get<long long>();
  const nlohmann::json& classes = required(j, "all_classes", file, line_no);
  if (!classes.is_null())
    r.all_classes = string_list(classes, "all_classes", kMaxClasses, file, line_no);
  r.id = string_field(j, "_id", file, line_no);
  if (j.contains("dataset")) r.dataset = string_field(j, "dataset", file, line_no);
  if (j.contains("language")) r.language = string_field(j, "language", file, line_no);
  // What eval.py / metrics.py would crash on, refused here with the record's position.
  if (task.metric == Metric::Classification && !r.all_classes)
    fail_field(file, line_no, "all_classes",
               "null, but task '" + std::string(task.name) + "' is scored by classification");
  if (task.metric == Metric::Retrieval || task.metric == Metric::RetrievalZh) {
    const bool zh = task.metric == Metric::RetrievalZh;
    for (size_t i = 0; i < r.answers.size(); ++i)
      if (!gold_paragraph_id(utf8_decode_lossy(r.answers[i]), zh))
        fail_field(file, line_no, "answers[" + std::to_string(i) + "]",
                   std::string("no '") + (zh ? "段落N" : "Paragraph N") +
                       "' paragraph id for retrieval scoring");
  }
  return r;
}

std::shared_ptr<const DataFile> index_file(const fs::path& path, const TaskInfo& task) {
  const std::string file = path.string();
  std::error_code ec;
  if (!fs::is_regular_file(path, ec))
    throw DatasetError("[longbench] " + file + ": no such file (task '" + std::string(task.name) +
                       "'; data_dir must hold LongBench's <task>.jsonl files)");
  auto out = std::make_shared<DataFile>();
  out->path = path;
  out->size = fs::file_size(path, ec);
  out->mtime = fs::last_write_time(path, ec);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw DatasetError("[longbench] " + file + ": cannot be read");
  size_t line_no = 0;
  // One line: its bytes (without '\n') and the offset of its first byte.
  const auto take_line = [&](std::string_view body, uint64_t start) {
    ++line_no;
    if (!body.empty() && body.back() == '\r') body.remove_suffix(1);
    if (body.find_first_not_of(" \t") == std::string_view::npos) return;  // blank line
    const Record r = parse_record(body, file, line_no, task);
    if (out->records.size() >= kMaxRecords)
      fail(file, line_no, "more than " + std::to_string(kMaxRecords) + " records");
    out->records.push_back({start, body.size(), line_no});
    out->last_all_classes = r.all_classes ? nlohmann::json(*r.all_classes) : nullptr;
  };
  // Scans in blocks, holding at most one (bounded) line, so a file without newlines cannot
  // exhaust memory.
  std::string line;
  std::vector<char> buf(size_t(1) << 16);
  uint64_t pos = 0, line_start = 0;
  while (in.read(buf.data(), std::streamsize(buf.size())) || in.gcount() > 0) {
    const size_t n = size_t(in.gcount());
    size_t k = 0;
    while (k < n) {
      const void* nl = std::memchr(buf.data() + k, '\n', n - k);
      const size_t take = nl ? size_t(static_cast<const char*>(nl) - (buf.data() + k)) : n - k;
      line.append(buf.data() + k, take);
      if (line.size() > kMaxLineBytes)
        fail(file, line_no + 1, "line longer than " + std::to_string(kMaxLineBytes) + " bytes");
      k += take;
      if (nl) {
        take_line(line, line_start);
        line.clear();
        ++k;
        line_start = pos + k;
      }
    }
    pos += n;
  }
  if (!line.empty()) take_line(line, line_start);  // a last line without its newline
  if (out->records.empty()) throw DatasetError("[longbench] " + file + ": no records");
  return out;
}

std::shared_ptr<const DataFile> cached_index(const fs::path& path, const TaskInfo& task) {
  static std::mutex mu;
  static std::map<std::string, std::shared_ptr<const DataFile>> cache;
  std::error_code ec;
  const uintmax_t size = fs::file_size(path, ec);
  const auto mtime = fs::last_write_time(path, ec);
  const std::string key = path.string() + "\n" + std::string(task.name);
  {
    std::lock_guard<std::mutex> lock(mu);
    const auto it = cache.find(key);
    if (it != cache.end() && it->second->size == size && it->second->mtime == mtime)
      return it->second;
  }
  auto f = index_file(path, task);  // outside the lock: files can be large
  std::lock_guard<std::mutex> lock(mu);
  return cache[key] = std::move(f);
}

Record read_record(const DataFile& f, size_t i, const TaskInfo& task) {
  const std::string file = f.path.string();
  if (i >= f.records.size())
    throw DatasetError("[longbench] " + file + ": record " + std::to_string(i) + " of " +
                       std::to_string(f.records.size()));
  std::error_code ec;
  if (fs::file_size(f.path, ec) != f.size || fs::last_write_time(f.path, ec) != f.mtime)
    throw DatasetError("[longbench] " + file + ": changed since it was indexed");
  const DataFile::Line& l = f.records[i];
  std::ifstream in(f.path, std::ios::binary);
  std::string line(l.bytes, '\0');
  in.seekg(std::streamoff(l.offset));
  if (!in.read(line.data(), std::streamsize(l.bytes)))
    throw DatasetError("[longbench] " + file + ":" + std::to_string(l.line_no) +
                       ": cannot be read again");
  return parse_record(line, file, l.line_no, task);
}

}  // namespace accel::longbench
