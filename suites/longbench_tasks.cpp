// The task table (longbench_tasks.h). Templates and generation budgets are THUDM/LongBench's
// config/dataset2prompt.json and config/dataset2maxlen.json (LongBench/ folder, commit 2e00731),
// character for character, typos included ("asconcisely" in narrativeqa).
#include "suites/longbench_tasks.h"

#include <array>

namespace accel::longbench {

namespace {

// clang-format off
constexpr std::array<TaskInfo, 21> kTasks = {{
    {"narrativeqa", "Single-Doc QA", "en",
     "You are given a story, which can be either a novel or a movie script, and a question. Answer the question asconcisely as you can, using a single phrase if possible. Do not provide any explanation.\n\nStory: {context}\n\nNow, answer the question based on the story asconcisely as you can, using a single phrase if possible. Do not provide any explanation.\n\nQuestion: {input}\n\nAnswer:",
     128, Metric::QaF1, false, false, false},
    {"qasper", "Single-Doc QA", "en",
     "You are given a scientific article and a question. Answer the question as concisely as you can, using a single phrase or sentence if possible. If the question cannot be answered based on the information in the article, write \"unanswerable\". If the question is a yes/no question, answer \"yes\", \"no\", or \"unanswerable\". Do not provide any explanation.\n\nArticle: {context}\n\n Answer the question based on the above article as concisely as you can, using a single phrase or sentence if possible. If the question cannot be answered based on the information in the article, write \"unanswerable\". If the question is a yes/no question, answer \"yes\", \"no\", or \"unanswerable\". Do not provide any explanation.\n\nQuestion: {input}\n\nAnswer:",
     128, Metric::QaF1, true, false, false},
    {"multifieldqa_en", "Single-Doc QA", "en",
     "Read the following text and answer briefly.\n\n{context}\n\nNow, answer the following question based on the above text, only give me the answer and do not output any other words.\n\nQuestion: {input}\nAnswer:",
     64, Metric::QaF1, true, false, false},
    {"multifieldqa_zh", "Single-Doc QA", "zh",
     "阅读以下文字并用中文简短回答：\n\n{context}\n\n现在请基于上面的文章回答下面的问题，只告诉我答案，不要输出任何其他字词。\n\n问题：{input}\n回答：",
     64, Metric::QaF1Zh, false, false, false},
    {"hotpotqa", "Multi-Doc QA", "en",
     "Answer the question based on the given passages. Only give me the answer and do not output any other words.\n\nThe following are given passages.\n{context}\n\nAnswer the question based on the given passages. Only give me the answer and do not output any other words.\n\nQuestion: {input}\nAnswer:",
     32, Metric::QaF1, true, false, false},
    {"2wikimqa", "Multi-Doc QA", "en",
     "Answer the question based on the given passages. Only give me the answer and do not output any other words.\n\nThe following are given passages.\n{context}\n\nAnswer the question based on the given passages. Only give me the answer and do not output any other words.\n\nQuestion: {input}\nAnswer:",
     32, Metric::QaF1, true, false, false},
    {"musique", "Multi-Doc QA", "en",
     "Answer the question based on the given passages. Only give me the answer and do not output any other words.\n\nThe following are given passages.\n{context}\n\nAnswer the question based on the given passages. Only give me the answer and do not output any other words.\n\nQuestion: {input}\nAnswer:",
     32, Metric::QaF1, false, false, false},
    {"dureader", "Multi-Doc QA", "zh",
     "请基于给定的文章回答下述问题。\n\n文章：{context}\n\n请基于上述文章回答下面的问题。\n\n问题：{input}\n回答：",
     128, Metric::RougeZh, false, false, false},
    {"gov_report", "Summarization", "en",
     "You are given a report by a government agency. Write a one-page summary of the report.\n\nReport:\n{context}\n\nNow, write a one-page summary of the report.\n\nSummary:",
     512, Metric::Rouge, true, false, false},
    {"qmsum", "Summarization", "en",
     "You are given a meeting transcript and a query containing a question or instruction. Answer the query in one or more sentences.\n\nTranscript:\n{context}\n\nNow, answer the query based on the above meeting transcript in one or more sentences.\n\nQuery: {input}\nAnswer:",
     512, Metric::Rouge, false, false, false},
    {"multi_news", "Summarization", "en",
     "You are given several news passages. Write a one-page summary of all news. \n\nNews:\n{context}\n\nNow, write a one-page summary of all the news.\n\nSummary:",
     512, Metric::Rouge, true, false, false},
    {"vcsum", "Summarization", "zh",
     "下面有一段会议记录，请你阅读后，写一段总结，总结会议的内容。\n会议记录：\n{context}\n\n会议总结：",
     512, Metric::RougeZh, false, false, false},
    {"trec", "Few-shot Learning", "en",
     "Please determine the type of the question below. Here are some examples of questions.\n\n{context}\n{input}",
     64, Metric::Classification, true, true, true},
    {"triviaqa", "Few-shot Learning", "en",
     "Answer the question based on the given passage. Only give me the answer and do not output any other words. The following are some examples.\n\n{context}\n\n{input}",
     32, Metric::QaF1, true, true, true},
    {"samsum", "Few-shot Learning", "en",
     "Summarize the dialogue into a few short sentences. The following are some examples.\n\n{context}\n\n{input}",
     128, Metric::Rouge, true, true, true},
    {"lsht", "Few-shot Learning", "zh",
     "请判断给定新闻的类别，下面是一些例子。\n\n{context}\n{input}",
     64, Metric::Classification, false, true, true},
    {"passage_count", "Synthetic Tasks", "en",
     "There are some paragraphs below sourced from Wikipedia. Some of them may be duplicates. Please carefully read these paragraphs and determine how many unique paragraphs there are after removing duplicates. In other words, how many non-repeating paragraphs are there in total?\n\n{context}\n\nPlease enter the final count of unique paragraphs after removing duplicates. The output format should only contain the number, such as 1, 2, 3, and so on.\n\nThe final answer is: ",
     32, Metric::Count, true, false, false},
    {"passage_retrieval_en", "Synthetic Tasks", "en",
     "Here are 30 paragraphs from Wikipedia, along with an abstract. Please determine which paragraph the abstract is from.\n\n{context}\n\nThe following is an abstract.\n\n{input}\n\nPlease enter the number of the paragraph that the abstract is from. The answer format must be like \"Paragraph 1\", \"Paragraph 2\", etc.\n\nThe answer is: ",
     32, Metric::Retrieval, true, false, false},
    {"passage_retrieval_zh", "Synthetic Tasks", "zh",
     "以下是若干段落文字，以及其中一个段落的摘要。请确定给定的摘要出自哪一段。\n\n{context}\n\n下面是一个摘要\n\n{input}\n\n请输入摘要所属段落的编号。答案格式必须是\"段落1\"，\"段落2\"等格式\n\n答案是：",
     32, Metric::RetrievalZh, false, false, false},
    {"lcc", "Code Completion", "code",
     "Please complete the code given below. \n{context}Next line of code:\n",
     64, Metric::CodeSim, true, false, true},
    {"repobench-p", "Code Completion", "code",
     "Please complete the code given below. \n{context}{input}Next line of code:\n",
     64, Metric::CodeSim, true, false, true},
}};
// clang-format on

}  // namespace

const char* metric_function_name(Metric m) {
  switch (m) {
    case Metric::QaF1:
      return "qa_f1_score";
    case Metric::QaF1Zh:
      return "qa_f1_zh_score";
    case Metric::Rouge:
      return "rouge_score";
    case Metric::RougeZh:
      return "rouge_zh_score";
    case Metric::Classification:
      return "classification_score";
    case Metric::Retrieval:
      return "retrieval_score";
    case Metric::RetrievalZh:
      return "retrieval_zh_score";
    case Metric::Count:
      return "count_score";
    case Metric::CodeSim:
      return "code_sim_score";
  }
  return "?";
}

std::span<const TaskInfo> all_tasks() {
  return kTasks;
}

const TaskInfo* find_task(std::string_view name) {
  for (const TaskInfo& t : kTasks)
    if (t.name == name) return &t;
  return nullptr;
}

std::string format_prompt(const TaskInfo& t, std::string_view context, std::string_view input) {
  std::string out;
  out.reserve(t.prompt.size() + context.size() + input.size());
  const std::string_view p = t.prompt;
  size_t i = 0;
  while (i < p.size()) {
    if (p.substr(i, 9) == "{context}") {
      out += context;
      i += 9;
    } else if (p.substr(i, 7) == "{input}") {
      out += input;
      i += 7;
    } else {
      out += p[i++];
    }
  }
  return out;
}

std::string_view length_bucket(long long length) {
  if (length < 4000) return "0-4k";
  if (length < 8000) return "4-8k";
  return "8k+";
}

}  // namespace accel::longbench
