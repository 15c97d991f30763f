#pragma once
// A raw deflate stream (RFC 1951) of a buffer of zeros with a few ones, made from the offsets of
// the ones alone. The legal-move masks are such buffers: a 1 MiB chunk holds ~8,000 ones, and
// zlib spent 78% of tensorize's time scanning the zeros. The stream is one block with its own
// Huffman codes: a literal 0, then copies of the previous byte (distance 1) up to 258 long for
// each run of zeros, a literal 1 for each one. Any inflater reads it (HDF5's deflate filter,
// h5py, zlib); the same offsets always give the same bytes.

#include <cstdint>
#include <vector>

namespace legalnet::data {

// Appends to `out` the raw deflate stream of `size` bytes, all 0 but for a 1 at each offset in
// `ones`. `ones` must be sorted, distinct and below `size`; `size` must be at least 1.
void deflate_ones(uint64_t size, const std::vector<uint32_t>& ones, std::vector<unsigned char>& out);

}  // namespace legalnet::data
