// The texts of train's options that are read from tables (the architectures, their rates, the
// situations) and the parser's check of --situation-weight: options.cpp's rows take them.
#pragma once

#include <string>

#include "util/option_cli.h"

namespace legalnet::run {

std::string architectures_help();
std::string learning_rate_help();
std::string situation_weight_help();
// --situation-weight's text checked by the parser (the message without the option, which CLI11 adds).
CLI::Validator situation_weights();

}  // namespace legalnet::run
