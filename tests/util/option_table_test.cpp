// The option table (util/option_table.h): one row declares the parser's option, its range for
// validate(), the JSON key it is recorded under and whether --resume keeps it.
#include "util/option_cli.h"

#include <gtest/gtest.h>

#include <array>

namespace legalnet {
namespace {

enum class Colour { RED, BLUE };
struct ColourSpec {
  Colour value;
  const char* name;
};
constexpr std::array<ColourSpec, 2> COLOURS{{{Colour::RED, "red"}, {Colour::BLUE, "blue"}}};

struct Inner {
  int width = 4;
};
struct Demo {
  double rate = 0.5;
  uint64_t count = 10;
  std::vector<std::string> files;
  Colour colour = Colour::RED;
  bool loud = false;
  bool head = true;
  Inner inner;
  uint64_t seed = 0;
};

using R = options::Rows<Demo>;
const options::Table<Demo>& table() {
  static const options::Table<Demo> t{
      "demo",
      {
          R::value(&Demo::files, "--file", "files", "Input files").required(),
          R::value(&Demo::rate, "--rate", "rate", "A rate").range(0, 1).show_default().keep_on_resume(),
          R::fact("measured").keep_on_resume("the measured value"),
          R::value(&Demo::count, "--count,-n", "count", "A count").int_range(1, 100).show_default(),
          R::choice(&Demo::colour, "--colour", "colour", COLOURS, "A colour").keep_on_resume(),
          R::flag(&Demo::loud, "--loud", "", "Not recorded"),
          R::flag(&Demo::head, "!--no-head", "head", "Sets false"),
          R::value(
              [](auto& d) -> auto& { return d.inner.width; }, "--width", "inner/width", "Nested")
              .int_range(0, 9)
              .inside_fact()
              .keep_on_resume(),
          R::alias("--old-rate", "--rate", [](const std::string& t) { return t == "half" ? "0.5" : t; }),
          R::value(&Demo::seed, "--seed", "", "Not recorded, no range"),
      }};
  return t;
}

Demo parsed(std::vector<std::string> args, int* status = nullptr) {
  Demo d;
  CLI::App app{"demo"};
  table().add_to(app, d);
  std::reverse(args.begin(), args.end());
  try {
    app.parse(args);
    if (status) *status = 0;
  } catch (const CLI::ParseError& e) {
    if (status) *status = e.get_exit_code();
  }
  return d;
}

TEST(OptionTable, ParsesEveryKindOfRow) {
  const Demo d = parsed({"--file", "a", "--file", "b", "--rate", "0.25", "-n", "7", "--colour", "blue", "--loud",
                         "--no-head", "--width", "3"});
  EXPECT_EQ(d.files, (std::vector<std::string>{"a", "b"}));
  EXPECT_DOUBLE_EQ(d.rate, 0.25);
  EXPECT_EQ(d.count, 7u);
  EXPECT_EQ(d.colour, Colour::BLUE);
  EXPECT_TRUE(d.loud);
  EXPECT_FALSE(d.head);
  EXPECT_EQ(d.inner.width, 3);
}

TEST(OptionTable, RefusesWhatIsOutOfRangeOrNotAChoice) {
  for (std::vector<std::string> bad : {std::vector<std::string>{"--file", "a", "--rate", "2"},
                                       {"--file", "a", "--rate", "nan"},
                                       {"--file", "a", "-n", "0"},
                                       {"--file", "a", "--colour", "green"},
                                       {"--rate", "0.1"}}) {
    int status = 0;
    parsed(bad, &status);
    EXPECT_NE(status, 0) << bad[bad.size() - 2] << " " << bad.back();
  }
}

// --help says the ranges as the options said them before the tables: integers as CLI11's
// "INT in [1 - 100]", numbers as "0..1".
TEST(OptionTable, HelpShowsIntegerRangesAsIntegers) {
  Demo d;
  CLI::App app{"demo"};
  table().add_to(app, d);
  const std::string help = app.help();
  EXPECT_NE(help.find("-n,--count UINT:INT in [1 - 100]=10"), std::string::npos) << help;
  EXPECT_NE(help.find("--rate FLOAT:0..1=0.5"), std::string::npos) << help;
  int status = 0;
  parsed({"--file", "a", "-n", "1000000"}, &status);
  EXPECT_NE(status, 0);
}

// What CLI11 2.1 reads wrongly without a word is refused, naming the option: a negative number
// for an unsigned field (once wrapped: -1 was 2^64-1), one beyond its type (once clamped to
// 2^64-1), an empty value (once the default), "1e3" for an integer (once "not in range").
// Hexadecimal and leading spaces read as numbers; a row's own range speaks first.
TEST(OptionTable, RefusesNumbersTheParserWouldMisread) {
  auto refusal = [](std::vector<std::string> args) {
    Demo d;
    CLI::App app{"demo"};
    table().add_to(app, d);
    args.insert(args.begin(), {"--file", "a"});
    std::reverse(args.begin(), args.end());
    try {
      app.parse(args);
      return std::string();
    } catch (const CLI::ParseError& e) {
      return std::string(e.what());
    }
  };
  EXPECT_EQ(refusal({"--seed", "-1"}), "--seed: -1 is below 0");
  EXPECT_EQ(refusal({"--seed", "18446744073709551616"}), "--seed: 18446744073709551616 is above 18446744073709551615");
  EXPECT_EQ(refusal({"--seed", ""}), "--seed: an empty value is not a number");
  EXPECT_EQ(refusal({"--seed", "1e3"}), "--seed: 1e3 is not an integer");
  EXPECT_EQ(refusal({"-n", "1e3"}), "--count: 1e3 is not an integer");
  EXPECT_EQ(refusal({"-n", "18446744073709551616"}), "--count: Value 18446744073709551616 not in range 1 to 100");
  EXPECT_EQ(refusal({"--rate", ""}), "--rate: an empty value is not a number");
  EXPECT_EQ(refusal({"--seed", "18446744073709551615", "-n", "0x10", "--width", " 5"}), "");
  const Demo d = parsed({"--file", "a", "--seed", "18446744073709551615", "-n", "0x10", "--width", " 5"});
  EXPECT_EQ(d.seed, UINT64_MAX);
  EXPECT_EQ(d.count, 16u);
  EXPECT_EQ(d.inner.width, 5);
}

TEST(OptionTable, AnAliasSetsTheFieldThroughItsConversion) {
  testing::internal::CaptureStderr();
  const Demo d = parsed({"--file", "a", "--old-rate", "half"});
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "demo: --old-rate is deprecated, use --rate\n");
  EXPECT_DOUBLE_EQ(d.rate, 0.5);
}

TEST(OptionTable, RecordsKeyedRowsInOrderWithFactsAndNothingInsideAFact) {
  Demo d;
  d.files = {"x"};
  const nlohmann::ordered_json j = table().record(d, {{"measured", 3}, {"ignored", 1}});
  EXPECT_EQ(j.dump(), R"({"files":["x"],"rate":0.5,"measured":3,"count":10,"colour":"red","head":true})");
}

TEST(OptionTable, KeptOptionsArePointersWithTheLongFlag) {
  const auto kept = table().kept();
  ASSERT_EQ(kept.size(), 4u);
  EXPECT_EQ(kept[0].pointer, "/rate");
  EXPECT_EQ(kept[0].option, "--rate");
  EXPECT_EQ(kept[1].pointer, "/measured");  // a fact: named as its row says
  EXPECT_EQ(kept[1].option, "the measured value");
  EXPECT_EQ(kept[2].pointer, "/colour");
  EXPECT_EQ(kept[3].pointer, "/inner/width");
  EXPECT_EQ(kept[3].option, "--width");
}

TEST(OptionTable, ValidateNamesTheFirstOptionOutOfRange) {
  Demo d;
  EXPECT_NO_THROW(table().validate(d));
  d.inner.width = 12;
  try {
    table().validate(d);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "--width 12 is not in 0..9");
  }
}

}  // namespace
}  // namespace legalnet
