// The small dataset and model configs the torch tests share (nn, train and run suites).
#pragma once

#include <cstdint>
#include <string>

#include "nn/model_config.h"
#include "train/training_data.h"

namespace legalnet::test {

// A model on the predecessor's 7 planes unless the test asks for other inputs.
nn::ModelConfig config(const std::string& kind, int hidden, int blocks, int channels);
// A small dataset (6 random games), made once per test process.
const std::string& tiny_dataset();
// The first `max_rows` rows of the tiny dataset (0: all).
train::CompactPositions first_rows(uint64_t max_rows);
// The row weights of --check-weight, --rare-weight and --pin-weight (run::row_weights' mapping).
train::RowWeights weights_of(int check, int rare = 1, int pin = 1);

}  // namespace legalnet::test
