// evaluate --gallery: the boards of the model's mistakes, one .svg a group, in a folder.
#pragma once

#include <string>
#include <vector>

#include "eval/gallery.h"
#include "util/files.h"

namespace legalnet::run {

// Every file a gallery in `dir` may write, as outputs for check_outputs_are_not_inputs: the
// pictures replace what lies under their names (a link itself, not what it points to).
std::vector<NamedPath> gallery_outputs(const std::string& dir);

// The pictures join `outputs`. Their names are the tool's own, inside the folder: a link planted
// under one is replaced, never written through.
void write_gallery(const std::vector<eval::MistakeGroup>& groups, const std::string& dir, Outputs& outputs);

}  // namespace legalnet::run
