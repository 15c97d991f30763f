#include "eval/gallery.h"

#include <fmt/core.h>

#include <algorithm>

#include "chess/notation.h"
#include "encode/encode.h"
#include "eval/picture.h"

namespace legalnet::eval {
namespace {

constexpr double SQUARE = 34;               // pixels a square in the grid
constexpr double CELL_W = 8 * SQUARE + 76;  // a board, its labels and some air
constexpr double CELL_H = 8 * SQUARE + 92;  // and its four caption lines
constexpr int COLUMNS = 3;

bool less_mass(const Mistake& a, const Mistake& b) { return a.illegal_mass > b.illegal_mass; }

std::string file_stem(std::string text) {
  std::string stem;
  for (char c : text) {
    if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))
      stem += c;
    else if (!stem.empty() && stem.back() != '-')
      stem += '-';
  }
  while (!stem.empty() && stem.back() == '-') stem.pop_back();
  return stem;
}

std::string escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '<')
      out += "&lt;";
    else if (c == '>')
      out += "&gt;";
    else if (c == '&')
      out += "&amp;";
    else
      out += c;
  }
  return out;
}

}  // namespace

Mistake Gallery::describe(const chess::Position& pos, const chess::MoveList& legal, int index, const float* probs,
                          const std::string& where) const {
  Mistake m;
  m.fen = pos.fen();
  m.move = index;
  m.probability = probs[index];
  m.reason = reason_illegal(pos, index);
  m.illegal_mass = encode::illegal_share(probs, encode::LegalMask(legal));
  for (chess::Move lm : legal)
    if (probs[encode::move_index(lm)] < threshold_) m.missed.push_back(encode::move_index(lm));
  m.where = where;
  return m;
}

void Gallery::add_position(const chess::Position& pos, const chess::MoveList& legal, const float* probs,
                           const std::string& where) {
  const encode::LegalMask is_legal(legal);
  int worst = -1;
  for (int k = 0; k < encode::MOVE_INDICES; ++k)
    if (!is_legal[k] && (worst < 0 || probs[k] > probs[worst])) worst = k;
  const double mass = encode::illegal_share(probs, is_legal);
  if (worst < 0 || (by_mass_.size() == per_group_ && mass <= by_mass_.front().illegal_mass)) return;
  if (by_mass_.size() == per_group_) {
    std::pop_heap(by_mass_.begin(), by_mass_.end(), less_mass);
    by_mass_.pop_back();
  }
  by_mass_.push_back(describe(pos, legal, worst, probs, where));
  std::push_heap(by_mass_.begin(), by_mass_.end(), less_mass);
}

void Gallery::add_illegal_pick(const chess::Position& pos, int index, const float* probs, const std::string& where) {
  const int reason = reason_illegal(pos, index);
  if (picks_[size_t(reason)].size() >= per_group_) return;
  picks_[size_t(reason)].push_back(describe(pos, chess::MoveList(pos), index, probs, where));
}

namespace {
constexpr const char* MOST_ILLEGAL_MASS = "most-illegal-mass";
std::string picks_group_name(int reason) { return "illegal-picks-" + file_stem(reason_name(reason)); }
}  // namespace

std::vector<std::string> gallery_file_names() {
  std::vector<std::string> names{std::string(MOST_ILLEGAL_MASS) + ".svg"};
  for (int reason = 0; reason < REASON_NB; ++reason) names.push_back(picks_group_name(reason) + ".svg");
  return names;
}

std::vector<MistakeGroup> Gallery::groups() const {
  std::vector<MistakeGroup> groups;
  if (!by_mass_.empty()) {
    MistakeGroup g{MOST_ILLEGAL_MASS, "Held-out positions with the most probability on illegal moves", by_mass_};
    std::sort(g.mistakes.begin(), g.mistakes.end(), less_mass);
    groups.push_back(std::move(g));
  }
  for (int reason = 0; reason < REASON_NB; ++reason) {
    if (picks_[size_t(reason)].empty()) continue;
    groups.push_back({picks_group_name(reason), std::string("Illegal picks in games: ") + reason_name(reason),
                      picks_[size_t(reason)]});
  }
  return groups;
}

std::string gallery_svg(const MistakeGroup& group) {
  const size_t n = group.mistakes.size();
  const size_t rows = (n + COLUMNS - 1) / COLUMNS;
  const double width = COLUMNS * CELL_W + 20, height = 40 + double(rows) * CELL_H;
  std::string svg = fmt::format(
      R"svg(<svg xmlns="http://www.w3.org/2000/svg" width="{}" height="{}" viewBox="0 0 {} {}"><rect width="100%" height="100%" fill="white"/>)svg",
      width, height, width, height);
  svg += arrow_markers();
  svg += fmt::format(R"svg(<text x="20" y="26" font-size="18" font-family="sans-serif">{}</text>)svg",
                     escape(group.title));
  for (size_t i = 0; i < n; ++i) {
    const Mistake& m = group.mistakes[i];
    const double x = 40 + double(i % COLUMNS) * CELL_W, y = 50 + double(i / COLUMNS) * CELL_H;
    const chess::Position pos(m.fen);
    svg += board_svg(pos, x, y, SQUARE);
    for (int missed : m.missed) svg += arrow_svg(missed, x, y, SQUARE, BLUE, "b", 2.5, true);
    svg += arrow_svg(m.move, x, y, SQUARE, RED, "r", 4);
    const double text_y = y + 8 * SQUARE + 30;
    svg += fmt::format(
        R"svg(<text x="{}" y="{}" font-size="12" font-family="sans-serif"><tspan font-weight="bold">{}</tspan> p={:.3f}, {:.0f}% of the mass on illegal moves</text>)svg",
        x, text_y, encode::index_name(m.move), m.probability, 100 * m.illegal_mass);
    svg += fmt::format(R"svg(<text x="{}" y="{}" font-size="11" font-family="sans-serif" fill="{}">{}</text>)svg", x,
                       text_y + 15, RED, escape(reason_name(m.reason)));
    svg += fmt::format(R"svg(<text x="{}" y="{}" font-size="8.5" font-family="monospace">{}</text>)svg", x, text_y + 29,
                       escape(m.fen));
    svg += fmt::format(R"svg(<text x="{}" y="{}" font-size="10" font-family="sans-serif" fill="#555">{}{}</text>)svg",
                       x, text_y + 43, escape(m.where),
                       m.missed.empty() ? "" : fmt::format("; {} legal moves missed (blue)", m.missed.size()));
  }
  svg += "</svg>\n";
  return svg;
}

}  // namespace legalnet::eval
