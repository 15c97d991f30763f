#include "run/evaluate/gallery.h"

#include <filesystem>

#include "util/error.h"

namespace legalnet::run {

std::vector<NamedPath> gallery_outputs(const std::string& dir) {
  std::vector<NamedPath> outputs;
  for (const std::string& name : eval::gallery_file_names())
    outputs.push_back({"--gallery", dir + "/" + name, Links::REPLACE});
  return outputs;
}

void write_gallery(const std::vector<eval::MistakeGroup>& groups, const std::string& dir, Outputs& outputs) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw Error("--gallery: cannot create '" + dir + "': " + ec.message());
  for (const auto& g : groups) {
    auto out = std::make_unique<OutputFile>(dir + "/" + g.name + ".svg", Links::REPLACE);
    out->write(eval::gallery_svg(g));
    outputs.add(std::move(out));
  }
}

}  // namespace legalnet::run
