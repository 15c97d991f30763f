#include "run/tensorize/dataset_outputs.h"

#include <sys/stat.h>

#include "util/files.h"
#include "util/thread_pool.h"

namespace legalnet::run {
namespace {

std::vector<std::string> part_names_of(const TensorizeOptions& o) {
  return o.split.empty() ? std::vector<std::string>{"all"} : split_part_names(o.split.size());
}

uint64_t file_size(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 ? uint64_t(st.st_size) : 0;
}

}  // namespace

std::vector<std::string> split_part_names(size_t n) {
  if (n == 2) return {"train", "val"};
  if (n == 3) return {"train", "val", "test"};
  std::vector<std::string> names;
  for (size_t i = 0; i < n; ++i) names.push_back("part" + std::to_string(i));
  return names;
}

std::string split_output_path(const std::string& out, const std::string& part) {
  const size_t slash = out.find_last_of('/');
  const size_t dot = out.find_last_of('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return out + "." + part + ".h5";
  return out.substr(0, dot) + "." + part + out.substr(dot);
}

std::vector<std::string> dataset_paths(const TensorizeOptions& o) {
  std::vector<std::string> paths;
  for (const std::string& part : part_names_of(o))
    paths.push_back(o.split.empty() ? o.out : split_output_path(o.out, part));
  return paths;
}

DatasetOutputs::DatasetOutputs(const TensorizeOptions& o, ThreadPool& pool) : part_names_(part_names_of(o)) {
  for (const std::string& path : dataset_paths(o))
    writers_.push_back(std::make_unique<data::DatasetWriter>(path, pool));
}

void DatasetOutputs::finish(const TensorizeOptions& o, TensorizeReport& report) {
  data::DatasetProvenance provenance;
  provenance.command_line = o.command_line;
  provenance.sources = o.pgn_files;
  provenance.split_seed = o.split_seed;
  provenance.include_final = o.include_final;
  provenance.dedupe = o.dedupe;
  for (size_t i = 0; i < writers_.size(); ++i) {
    provenance.split = part_names_[i];
    writers_[i]->finish(provenance);
    report.outputs.push_back(writers_[i]->path());
    report.output_positions.push_back(writers_[i]->rows());
    report.bytes += file_size(writers_[i]->finished_path());
  }
}

void DatasetOutputs::commit(AtomicPath* report) {
  std::vector<AtomicPath*> all{report};
  for (auto& writer : writers_) all.push_back(&writer->temporary());
  commit_together(all);
}

}  // namespace legalnet::run
