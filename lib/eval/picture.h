// A picture of a model's view of one position: the board with its top moves as arrows
// (green legal, red illegal, width by probability) and heat maps of from- and to-squares.
#pragma once

#include <string>

#include "chess/position.h"

namespace legalnet {
class Outputs;
}

namespace legalnet::eval {

inline constexpr const char* GREEN = "#1a8f3a";  // a legal move
inline constexpr const char* RED = "#d42a2a";    // an illegal move
inline constexpr const char* BLUE = "#2a5fd4";   // a legal move the model missed

// The pieces of a board picture, shared by the position picture and the gallery: arrow-head
// markers "g", "r" and "b" (a <defs> element), a board seen from white with its top-left
// corner at (x, y) and `square` pixels a square, and an arrow for a move index on it.
std::string arrow_markers();
std::string board_svg(const chess::Position& pos, double x, double y, double square);
std::string arrow_svg(int index, double x, double y, double square, const char* colour, const char* marker,
                      double width, bool dashed = false);

// SVG text for pos and the model's probabilities (4096 sigmoid outputs), with top_k arrows.
std::string position_svg(const chess::Position& pos, const float* probs, int top_k);

// Writes the picture as .svg, or as .png through rsvg-convert (librsvg2-bin), complete under
// a temporary name, into `outputs`: it takes its name with the run's other outputs.
void write_picture(const std::string& path, const std::string& svg, Outputs& outputs);

}  // namespace legalnet::eval
