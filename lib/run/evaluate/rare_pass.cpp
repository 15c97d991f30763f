// The rare pass (run/evaluate/dataset_pass.h): castling and en passant are a few rows in a
// hundred, too few in the first --max-positions rows to measure, so they are counted over all.
#include "data/dataset_reader.h"
#include "encode/encode.h"
#include "run/evaluate/dataset_pass.h"

namespace legalnet::run {

void count_rare_moves(const EvaluatedNet& net, const EvaluateOptions& o, DatasetFigures& r) {
  std::vector<chess::Position> pending;
  auto flush = [&] {
    const std::vector<float> probs = net.predict(pending);
    for (size_t i = 0; i < pending.size(); ++i)
      r.rare.add(pending[i], chess::MoveList(pending[i]), &probs[i * encode::MOVE_INDICES], o.threshold);
    pending.clear();
  };
  data::for_each_row_slice(o.data, [&](const data::RowSlice& s) {
    for (auto& pos : s.reader.read_board_positions(s.start, s.count)) {
      ++r.scanned;
      if (!encode::has_rare_move(chess::MoveList(pos))) continue;
      pending.push_back(std::move(pos));
      if (pending.size() == size_t(o.batch_size)) flush();
    }
    return true;
  });
  if (!pending.empty()) flush();
}

}  // namespace legalnet::run
