#include "games/position_list.h"

#include <fmt/core.h>

#include "chess/position.h"
#include "util/error.h"
#include "util/files.h"
#include "util/text.h"

namespace legalnet {
namespace {

// The FEN part of a line: the first six fields when the fifth and sixth are counters, else the
// first four (EPD: operations follow the en-passant field).
std::string fen_fields(std::string_view line) {
  std::vector<std::string_view> fields;
  size_t i = 0;
  while (i < line.size() && fields.size() < 6) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    const size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
    if (i > start) fields.push_back(line.substr(start, i - start));
  }
  auto is_number = [](std::string_view f) {
    return !f.empty() && f.find_first_not_of("0123456789") == std::string_view::npos;
  };
  size_t keep = std::min<size_t>(fields.size(), 4);
  if (fields.size() >= 6 && is_number(fields[4]) && is_number(fields[5])) keep = 6;
  std::string fen;
  for (size_t f = 0; f < keep; ++f) fen += fmt::format("{}{}", f ? " " : "", fields[f]);
  return fen;
}

}  // namespace

std::vector<std::string> read_position_list(const std::string& path) {
  InputFile in(path, InputKind::REGULAR);
  std::vector<std::string> positions;
  std::string line, buffer(1 << 16, '\0');
  uint64_t line_number = 0;
  auto take_line = [&] {
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const size_t first = line.find_first_not_of(" \t");
    if (first == std::string::npos || line[first] == '#') return;
    if (positions.size() == MAX_LISTED_POSITIONS)
      throw Error(fmt::format("{}: more than {} positions", printable(path), MAX_LISTED_POSITIONS));
    std::string dropped;
    try {
      positions.push_back(chess::Position(fen_fields(line), &dropped).fen());
    } catch (const Error& e) {
      throw Error(fmt::format("{}:{}: {}", printable(path), line_number, e.what()));
    }
  };
  for (size_t n; (n = in.read(buffer.data(), buffer.size())) > 0;) {
    for (size_t i = 0; i < n; ++i) {
      if (buffer[i] == '\n') {
        take_line();
        line.clear();
      } else if (line.size() < MAX_POSITION_LINE) {
        line += buffer[i];
      } else {  // refused at once: a stream without line ends (/dev/zero) must not be read for ever
        throw Error(fmt::format("{}:{}: line longer than {} bytes: not a FEN", printable(path), line_number + 1,
                                MAX_POSITION_LINE));
      }
    }
  }
  if (!line.empty()) take_line();
  if (positions.empty()) throw Error(printable(path) + ": no positions (one FEN or EPD record a line)");
  return positions;
}

}  // namespace legalnet
