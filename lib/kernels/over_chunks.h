// The board kernels' split of a batch over the threads, where a weight gradient is summed: one
// chunk a thread, the chunks depending on the thread count only, so that the chunks' partial
// sums are added in a fixed order (the same run twice gives the same bytes).
#pragma once

#include <ATen/Parallel.h>

#include <algorithm>
#include <cstdint>

namespace legalnet::nn {

// Runs f(chunk, first item, end item) over `items`, chunk < min(items, threads), at least one.
template <typename F>
void over_chunks(int64_t items, F f) {
  const int64_t chunks = std::max<int64_t>(1, std::min<int64_t>(items, at::get_num_threads()));
  at::parallel_for(0, chunks, 1, [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c) f(c, items * c / chunks, items * (c + 1) / chunks);
  });
}

}  // namespace legalnet::nn
