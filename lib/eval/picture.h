// A picture of a model's view of one position: the board with its top moves as arrows
// (green legal, red illegal, width by probability) and heat maps of from- and to-squares.
#pragma once

#include <string>

#include "chess/position.h"

namespace legalnet::eval {

// SVG text for pos and the model's probabilities (4096 sigmoid outputs), with top_k arrows.
std::string position_svg(const chess::Position& pos, const float* probs, int top_k);

// Writes the picture as .svg, or as .png through rsvg-convert (librsvg2-bin); atomically.
void write_picture(const std::string& path, const std::string& svg);

}  // namespace legalnet::eval
