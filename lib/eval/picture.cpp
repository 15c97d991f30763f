#include "eval/picture.h"

#include <fmt/core.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <numeric>
#include <vector>

#include "chess/movegen.h"
#include "encode/encode.h"
#include "util/error.h"
#include "util/files.h"
#include "util/process.h"

namespace legalnet::eval {
namespace {

constexpr int SQ = 60;    // pixels per square on the main board
constexpr int HEAT = 24;  // pixels per square on the heat maps
constexpr int MARGIN = 24;

// Unicode chess glyphs, white then black, pawn..king.
const char* GLYPHS[2][7] = {{"", "\u2659", "\u2658", "\u2657", "\u2656", "\u2655", "\u2654"},
                            {"", "\u265F", "\u265E", "\u265D", "\u265C", "\u265B", "\u265A"}};

// Board pixel centre of a square seen from white (a1 bottom left).
std::pair<double, double> centre(int sq, double x0, double y0, double square) {
  return {x0 + (sq % 8 + 0.5) * square, y0 + (7 - sq / 8 + 0.5) * square};
}

void heat_map(std::string& svg, const std::vector<double>& heat, int x0, int y0, const char* title) {
  const double top = std::max(1e-9, *std::max_element(heat.begin(), heat.end()));
  svg +=
      fmt::format(R"svg(<text x="{}" y="{}" font-size="14" font-family="sans-serif">{}</text>)svg", x0, y0 - 6, title);
  for (int sq = 0; sq < 64; ++sq) {
    const double v = heat[size_t(sq)] / top;
    svg += fmt::format(
        R"svg(<rect x="{}" y="{}" width="{}" height="{}" fill="rgb({},{},{})" stroke="#999" stroke-width="0.5"/>)svg",
        x0 + (sq % 8) * HEAT, y0 + (7 - sq / 8) * HEAT, HEAT, HEAT, 255, int(255 * (1 - v)), int(255 * (1 - v)));
  }
}

}  // namespace

std::string arrow_markers() {
  std::string defs = "<defs>";
  for (const auto& [id, colour] : {std::pair{"g", GREEN}, std::pair{"r", RED}, std::pair{"b", BLUE}})
    defs += fmt::format(
        R"svg(<marker id="{}" markerWidth="4" markerHeight="4" refX="2" refY="2" orient="auto"><path d="M0,0 L4,2 L0,4 z" fill="{}"/></marker>)svg",
        id, colour);
  return defs + "</defs>";
}

std::string board_svg(const chess::Position& pos, double x0, double y0, double square) {
  std::string svg;
  for (int sq = 0; sq < 64; ++sq) {
    const bool light = (sq / 8 + sq % 8) % 2 == 1;
    svg += fmt::format(R"svg(<rect x="{}" y="{}" width="{}" height="{}" fill="{}"/>)svg", x0 + (sq % 8) * square,
                       y0 + (7 - sq / 8) * square, square, square, light ? "#f0d9b5" : "#b58863");
    const chess::Piece p = pos.piece_on(chess::Square(sq));
    if (p != chess::NO_PIECE) {
      const auto [x, y] = centre(sq, x0, y0, square);
      svg += fmt::format(
          R"svg(<text x="{}" y="{}" font-size="{}" text-anchor="middle" dominant-baseline="central">{}</text>)svg", x,
          y + square / 30, square * 0.8, GLYPHS[chess::color_of(p)][chess::type_of(p)]);
    }
  }
  const double label = std::max(9.0, square / 4.3);
  for (int f = 0; f < 8; ++f)
    svg += fmt::format(
        R"svg(<text x="{}" y="{}" font-size="{:.0f}" text-anchor="middle" font-family="sans-serif">{}</text>)svg",
        x0 + (f + 0.5) * square, y0 + 8 * square + label * 1.2, label, char('a' + f));
  for (int r = 0; r < 8; ++r)
    svg += fmt::format(
        R"svg(<text x="{}" y="{}" font-size="{:.0f}" text-anchor="middle" font-family="sans-serif">{}</text>)svg",
        x0 - label * 0.7, y0 + (7.5 - r) * square + label * 0.35, label, r + 1);
  return svg;
}

std::string arrow_svg(int index, double x0, double y0, double square, const char* colour, const char* marker,
                      double width, bool dashed) {
  const auto [x1, y1] = centre(index / 64, x0, y0, square);
  const auto [x2, y2] = centre(index % 64, x0, y0, square);
  return fmt::format(
      R"svg(<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="{}" stroke-width="{:.1f}" stroke-opacity="0.8" marker-end="url(#{})"{}/>)svg",
      x1, y1, x2, y2, colour, width, marker, dashed ? R"svg( stroke-dasharray="6,4")svg" : "");
}

std::string position_svg(const chess::Position& pos, const float* probs, int top_k) {
  const int board = 8 * SQ, width = 2 * MARGIN + board + MARGIN + 8 * HEAT + MARGIN, height = 2 * MARGIN + board;
  std::string svg = fmt::format(
      R"svg(<svg xmlns="http://www.w3.org/2000/svg" width="{}" height="{}" viewBox="0 0 {} {}"><rect width="100%" height="100%" fill="white"/>)svg",
      width, height, width, height);
  svg += arrow_markers();
  svg += board_svg(pos, MARGIN, MARGIN, SQ);

  const encode::LegalMask legal{chess::MoveList(pos)};
  const std::vector<int> order = encode::top_indices(probs, top_k);
  for (auto it = order.rbegin(); it != order.rend(); ++it) {  // the likeliest drawn last, on top
    const int index = *it;
    svg += arrow_svg(index, MARGIN, MARGIN, SQ, legal[index] ? GREEN : RED, legal[index] ? "g" : "r",
                     2 + 10 * probs[index]);
  }
  std::vector<double> from(64, 0.0), to(64, 0.0);
  for (int i = 0; i < encode::MOVE_INDICES; ++i) {
    from[size_t(i / 64)] += probs[i];
    to[size_t(i % 64)] += probs[i];
  }
  const int hx = 2 * MARGIN + board;
  heat_map(svg, from, hx, MARGIN + 20, "from-square probability");
  heat_map(svg, to, hx, MARGIN + 20 + 8 * HEAT + 50, "to-square probability");
  svg += "</svg>\n";
  return svg;
}

void write_picture(const std::string& path, const std::string& svg, Outputs& outputs) {
  const bool png = path.size() > 4 && path.substr(path.size() - 4) == ".png";
  if (!png) {
    auto out = std::make_unique<OutputFile>(path);
    out->write(svg);
    outputs.add(std::move(out));
    return;
  }
  // rsvg-convert reads the SVG from an unnamed file and writes the PNG to its stdout, the
  // temporary this tool created (new, not through a link): it opens no file by name, so a link
  // planted under a predictable name is never written through. No shell, no file names at all.
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> svg_file(std::tmpfile(), std::fclose);
  if (!svg_file || std::fwrite(svg.data(), 1, svg.size(), svg_file.get()) != svg.size() ||
      std::fflush(svg_file.get()) != 0 || std::fseek(svg_file.get(), 0, SEEK_SET) != 0)
    throw Error("cannot write '" + path +
                "': cannot make an unnamed temporary file for the SVG: " + std::strerror(errno));
  auto target = std::make_unique<AtomicPath>(path);
  if (run_program({"rsvg-convert", "-f", "png"}, fileno(svg_file.get()), target->create()) != 0)
    throw Error("cannot write '" + path +
                "': rsvg-convert (Debian package librsvg2-bin) failed or is missing; use .svg");
  outputs.add(std::move(target));
}

}  // namespace legalnet::eval
