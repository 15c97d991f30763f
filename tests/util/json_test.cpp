// The bounded JSON reader (util/json.h) and the safetensors header it guards: deep nesting and
// oversized text refused in one line before a parser builds anything, messages that quote a
// value kept short and escaped. Torch-free, so the sanitizer build runs it.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "nn/safetensors.h"
#include "util/json.h"

namespace legalnet {
namespace {

std::string nested(int depth, char open = '[', char close = ']') {
  return std::string(size_t(depth), open) + std::string(size_t(depth), close);
}

std::string refusal(const std::string& text, const JsonLimits& limits = {}) {
  try {
    (void)parse_json(text, limits);
  } catch (const JsonError& e) {
    return e.what();
  }
  return "";
}

TEST(Json, NestingUpToTheCapIsReadAndOneLevelMoreIsRefused) {
  EXPECT_EQ(parse_json(nested(64)).dump(), nested(64));
  EXPECT_EQ(refusal(nested(65)), "JSON nested deeper than 64 levels (at byte 64)");
  EXPECT_EQ(refusal("{\"a\":" + nested(70, '{', '}') + "}"), "JSON nested deeper than 64 levels (at byte 68)");
  // A million levels, far past where a recursive walk overflows the stack: refused by the scan.
  EXPECT_NE(refusal(nested(1'000'000)).find("nested deeper than 64"), std::string::npos);
  EXPECT_NE(refusal(std::string(1'000'000, '[')).find("nested deeper than 64"), std::string::npos);
}

TEST(Json, BracketsInsideStringsAndEscapedQuotesDoNotCount) {
  const std::string brackets = "[\"" + std::string(500, '[') + "\\\"" + std::string(500, '{') + "\"]";
  EXPECT_EQ(parse_json(brackets)[0].get<std::string>().size(), 1001u);
  // An escaped backslash ends before the quote: the string closes, and the brackets after count.
  EXPECT_EQ(refusal("[\"\\\\\"," + nested(64) + "]"), "JSON nested deeper than 64 levels (at byte 69)");
}

TEST(Json, SizeCapAndSyntaxErrorsAreOneEscapedLine) {
  EXPECT_EQ(refusal(std::string(101, ' '), {.max_bytes = 100}), "JSON of 101 bytes (at most 100)");
  const std::string message = refusal("{\"a\x1b]0;owned\x07\"");
  EXPECT_EQ(message.rfind("not JSON (", 0), 0u) << message;
  EXPECT_EQ(message.find('\x1b'), std::string::npos);
  EXPECT_EQ(message.find('\n'), std::string::npos);
}

TEST(Json, ExcerptsAreShortAndEscaped) {
  nlohmann::json big = nlohmann::json::array();
  for (int i = 0; i < 100'000; ++i) big.push_back(i);
  const std::string shown = json_excerpt(big);
  EXPECT_LE(shown.size(), 203u);
  EXPECT_EQ(shown.substr(shown.size() - 3), "...");
  EXPECT_EQ(json_excerpt(nlohmann::json("\xff\x1b")), "\"\xEF\xBF\xBD\\u001b\"");
}

// A safetensors file of `header` and no tensors.
std::string file_with_header(const std::string& header) {
  const std::string path = ::testing::TempDir() + "json_test_" + std::to_string(getpid()) + ".safetensors";
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  for (int i = 0; i < 8; ++i) out.put(char(uint64_t(header.size()) >> (8 * i) & 0xff));
  out << header;
  return path;
}

TEST(Safetensors, HeaderNestedThousandsDeepIsRefusedInOneLine) {
  const std::string path = file_with_header("{\"__metadata__\":{\"config\":" + nested(100'000) + "}}");
  try {
    nn::safetensors::Reader reader(path);
    FAIL() << "read a header nested 100,000 deep";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), path + ": safetensors header is JSON nested deeper than 64 levels (at byte 88)");
  }
  std::remove(path.c_str());
}

TEST(Safetensors, AHugeShapeOrDtypeIsQuotedShort) {
  std::string shape = "[";
  for (int i = 0; i < 5000; ++i) shape += "1,";
  shape += "1]";
  const std::string path = file_with_header("{\"t\":{\"dtype\":" + shape + ",\"shape\":[],\"data_offsets\":[0,0]}}");
  try {
    nn::safetensors::Reader reader(path);
    FAIL() << "read a dtype that is a list";
  } catch (const Error& e) {
    EXPECT_LT(std::string(e.what()).size(), 400u) << e.what();
  }
  std::remove(path.c_str());
}

TEST(Safetensors, ARefusedFileLeavesNoDescriptorOpen) {
  // A constructor that throws runs no destructor: found by safetensors_fuzz, which ran out of
  // descriptors ("Too many open files") after about 22,000 refused inputs.
  auto open_descriptors = [] {
    int n = 0;
    for (int fd = 0; fd < 4096; ++fd) n += fcntl(fd, F_GETFD) != -1;
    return n;
  };
  const std::string path = file_with_header("{\"t\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,999]}}");
  const int before = open_descriptors();
  for (int i = 0; i < 100; ++i) EXPECT_THROW(nn::safetensors::Reader reader(path), Error);
  EXPECT_EQ(open_descriptors(), before);
  std::remove(path.c_str());
}

// Every file the writer makes carries the CRC-32 of its tensors' bytes (Python's zlib.crc32 of
// the data section); a flipped byte is one line naming the file, and a file without the entry
// (an older one, another writer's) still reads.
TEST(Safetensors, AFlippedByteInTheTensorsIsRefusedByItsChecksum) {
  const std::string path = testing::TempDir() + "crc.safetensors";
  const float values[4] = {1.0f, 2.0f, 3.0f, 4.0f};
  nn::safetensors::Writer writer;
  writer.add("t", nn::safetensors::Dtype::F32, {4}, values);
  writer.set_metadata("format", "test");
  writer.write(path);
  {
    nn::safetensors::Reader reader(path);
    EXPECT_EQ(reader.metadata(nn::safetensors::DATA_CRC_KEY).size(), 8u);
    float back[4];
    reader.read(*reader.find("t"), back);
    EXPECT_EQ(back[3], 4.0f);
  }
  std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
  file.seekg(-3, std::ios::end);
  const char byte = char(file.get() ^ 0x10);
  file.seekp(-3, std::ios::end);
  file.put(byte);
  file.close();
  try {
    nn::safetensors::Reader reader(path);
    ADD_FAILURE() << "a damaged file was read";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind(path + ": the tensors do not match their checksum (legalnet_data_crc32 ", 0),
              0u)
        << e.what();
  }
  std::remove(path.c_str());
  const std::string plain = file_with_header("{\"t\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}");
  std::ofstream(plain, std::ios::binary | std::ios::app).write("\0\0\0\0", 4);
  EXPECT_NO_THROW(nn::safetensors::Reader reader(plain));
  std::remove(plain.c_str());
}

}  // namespace
}  // namespace legalnet
