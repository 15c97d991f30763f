// TensorBoard's event records (lib/train/tensorboard.h) against bytes made by the tensorboard
// package itself: its masked_crc32c (tensorboard.compat.tensorflow_stub.pywrap_tensorflow) and
// its protobuf Event (tensorboard.compat.proto.event_pb2) and its plugins' messages
// (tensorboard.plugins.hparams.{api,plugin_data}_pb2, tensorboard.plugins.text.plugin_data_pb2),
// serialized in Python 3.11 with tensorboard 2.21.0.
#include "train/tensorboard.h"

#include <gtest/gtest.h>

namespace legalnet::train::tensorboard {
namespace {

std::string hex(std::string_view bytes) {
  std::string out;
  for (const char c : bytes) {
    constexpr const char* DIGITS = "0123456789abcdef";
    out += DIGITS[uint8_t(c) >> 4];
    out += DIGITS[uint8_t(c) & 15];
  }
  return out;
}

TEST(TensorBoard, Crc32cIsCastagnolisAndMaskedAsTFRecordsStoreIt) {
  EXPECT_EQ(crc32c("123456789"), 0xE3069283u);  // the CRC-32C check value
  EXPECT_EQ(crc32c(""), 0u);
  EXPECT_EQ(masked_crc32c("123456789"), 0xC78AB0E5u);
  EXPECT_EQ(masked_crc32c(""), 0xA282EAD8u);
}

TEST(TensorBoard, EventsAreTheBytesOfTensorBoardsOwnProtobuf) {
  // Event(wall_time=1.5, file_version="brain.Event:2")
  EXPECT_EQ(hex(file_version_event(1.5)), "09000000000000f83f1a0d627261696e2e4576656e743a32");
  // Event(wall_time=1700000000.25, step=300, summary=Summary(value=[Value(tag="val_loss",
  // simple_value=0.125), Value(tag="lr", simple_value=0.002)])), framed as a TFRecord.
  const std::string event = scalars_event(1700000000.25, 300, {{"val_loss", 0.125f}, {"lr", 0.002f}});
  EXPECT_EQ(hex(event), "0900001040fc54d94110ac022a1c0a0f0a0876616c5f6c6f7373150000003e0a090a026c72156f12033b");
  EXPECT_EQ(hex(record(event)),
            "2a00000000000000ae8d91f5"
            "0900001040fc54d94110ac022a1c0a0f0a0876616c5f6c6f7373150000003e0a090a026c72156f12033b"
            "39c5f6f1");
}

TEST(TensorBoard, TextAndHParamsAreTheBytesOfTheirPluginsProtobufs) {
  // Summary.Value(tag="recipe", metadata=SummaryMetadata(plugin_data=PluginData(plugin_name="text",
  // content=TextPluginData(version=0).SerializeToString())), tensor=TensorProto(dtype=DT_STRING,
  // string_val=[b"`train`"], tensor_shape=TensorShapeProto(dim=[Dim(size=1)]))), as torch's text().
  const std::string text = text_value("recipe", "`train`");
  EXPECT_EQ(hex(text), "0a0672656369706542110807120412020801420760747261696e604a080a060a0474657874");
  // Event(wall_time=1.5, step=7, summary=Summary(value=[Value(tag="a", simple_value=1.0), that text]))
  EXPECT_EQ(hex(summary_event(1.5, 7, {scalar_value({"a", 1.0f}), text})),
            "09000000000000f83f10072a310a080a0161150000803f0a250a0672656369706542110807120412020801420760747261696e604a"
            "080a060a0474657874");
  // Value(tag="_hparams_/experiment", metadata=SummaryMetadata(plugin_data=PluginData(
  // plugin_name="hparams", content=HParamsPluginData(version=0, experiment=Experiment(
  // hparam_infos=[HParamInfo(name="lr", type=DATA_TYPE_FLOAT64), ("arch", DATA_TYPE_STRING),
  // ("geometric_head", DATA_TYPE_BOOL)], metric_infos=[MetricInfo(name=MetricName(tag="val/loss")),
  // (tag="eval/clean_games")])).SerializeToString()))), as torch's hparams() writes it.
  const std::vector<HParam> hparams{{"lr", 0.5}, {"arch", std::string("mlp")}, {"geometric_head", true}};
  EXPECT_EQ(hex(hparams_experiment_value(hparams, {"val/loss", "eval/clean_games"})),
            "0a145f68706172616d735f2f6578706572696d656e744a590a570a0768706172616d73124c124a22060a026c72200322080a0461"
            "726368200122120a0e67656f6d65747269635f6865616420022a0c0a0a120876616c2f6c6f73732a140a1212106576616c2f636c"
            "65616e5f67616d6573");
  // Value(tag="_hparams_/session_start_info", ... content=HParamsPluginData(session_start_info=
  // SessionStartInfo(hparams={NAME: Value(...)}, start_time_secs=2.5))), one hparam of each type.
  EXPECT_EQ(hex(hparams_session_start_value({{"lr", 0.5}}, 2.5)),
            "0a1c5f68706172616d735f2f73657373696f6e5f73746172745f696e666f4a290a270a0768706172616d73121c1a1a0a0f0a026c"
            "72120911000000000000e03f290000000000000440");
  EXPECT_EQ(hex(hparams_session_start_value({{"arch", std::string("mlp")}}, 2.5)),
            "0a1c5f68706172616d735f2f73657373696f6e5f73746172745f696e666f4a270a250a0768706172616d73121a1a180a0d0a0461"
            "72636812051a036d6c70290000000000000440");
  EXPECT_EQ(hex(hparams_session_start_value({{"geometric_head", true}}, 2.5)),
            "0a1c5f68706172616d735f2f73657373696f6e5f73746172745f696e666f4a2e0a2c0a0768706172616d7312211a1f0a140a0e67"
            "656f6d65747269635f6865616412022001290000000000000440");
  EXPECT_EQ(hex(hparams_session_start_value({{"clip", false}}, 2.5)),  // a false bool is written, as the oneof's
            "0a1c5f68706172616d735f2f73657373696f6e5f73746172745f696e666f4a240a220a0768706172616d7312171a150a0a0a0463"
            "6c697012022000290000000000000440");
}

TEST(TensorBoard, EventStepsAreReadBack) {
  EXPECT_EQ(event_step(scalars_event(2.0, 300, {{"a", 1}})), 300);
  EXPECT_EQ(event_step(scalars_event(2.0, int64_t(1) << 40, {})), int64_t(1) << 40);
  EXPECT_EQ(event_step(file_version_event(2.0)), 0);  // no step field: protobuf's default
  const std::string event = scalars_event(2.0, 300, {{"a", 1}});
  EXPECT_EQ(event_step(event.substr(0, event.size() - 1)), std::nullopt);  // a value cut short
  EXPECT_EQ(event_step("\x0b"), std::nullopt);                             // wire type 3
  EXPECT_EQ(event_step("\x2a\xff\xff\xff\xff\x0f"), std::nullopt);         // a length past the end
}

TEST(TensorBoard, AResumedRunKeepsTheRecordsThroughItsCheckpoint) {
  const std::string head = record(file_version_event(1.0));
  const std::string at8 = record(scalars_event(2.0, 8, {{"loss", 0.5f}}));
  const std::string at16 = record(scalars_event(3.0, 16, {{"loss", 0.25f}}));
  const std::string file = head + at8 + at16;
  EXPECT_EQ(records_through_step(file, 16), file.size());
  EXPECT_EQ(records_through_step(file, 15), (head + at8).size());
  EXPECT_EQ(records_through_step(file, 8), (head + at8).size());
  EXPECT_EQ(records_through_step(file, 0), head.size());
  EXPECT_EQ(records_through_step("", 5), 0u);
  // A record torn by a crash, at any byte, ends the kept records.
  for (size_t cut = 1; cut < at16.size(); ++cut)
    EXPECT_EQ(records_through_step(head + at8 + at16.substr(0, cut), 100), (head + at8).size()) << cut;
  // A flipped byte anywhere in a record fails its CRCs (or makes its length run past the end).
  for (size_t at = 0; at < at8.size(); ++at) {
    std::string bad = file;
    bad[head.size() + at] = char(bad[head.size() + at] ^ 0x10);
    EXPECT_EQ(records_through_step(bad, 100), head.size()) << at;
  }
}

}  // namespace
}  // namespace legalnet::train::tensorboard
