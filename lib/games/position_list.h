// Lists of positions as text: one FEN or EPD record a line (plain, gzip or zstd), the form in which
// gen_moves takes start positions (--start FILE) and evaluate takes sets to measure (--positions).
#pragma once

#include <string>
#include <vector>

namespace legalnet {

// At most this many positions a list, and this many bytes a line: a list is read whole (about
// 80 bytes a position in memory). Room for every legal position of the two kings and one more
// piece (1,945,584: gen_moves positions --start exhaustive --material ?) and more.
constexpr size_t MAX_LISTED_POSITIONS = 4'000'000;
constexpr size_t MAX_POSITION_LINE = 4096;

// Reads every position of the list at `path` and returns each as its canonical FEN (a Position
// reserves room for a game's history: a list of them would cost kilobytes a line). A line holds a FEN (6 fields), a FEN
// without its counters (4 fields), or an EPD record (4 fields then operations such as `bm e4; id "x";`, which are
// ignored); blank lines and lines starting with '#' are skipped. Castling rights whose king or rook is not at home are
// dropped, as python-chess reads them. Throws legalnet::Error naming the file and line of the first bad record, or an
// empty list.
std::vector<std::string> read_position_list(const std::string& path);

}  // namespace legalnet
