// The op summary and the trace of a hand-made profile, against msprof's
// definitions worked out here: times per core, ratios of the op's block
// cycles, waits between tasks, the layout per chip, tracks only where used.
#include <algorithm>
#include <array>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "client/cli/chrome_trace.h"
#include "client/cli/op_summary.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace npu::client::cli {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

// Two tasks at 1000 MHz on a run arriving at cycle 10,000: a Cube task issued
// at 10,000 (blocks 13,000..15,000 and ..16,000 on cores 0 and 1, done at
// 18,000) and a Vector task issued at 19,000 (one block 22,000..24,000, done 26,000).
npu::v1::NodeProfile* AddTask(npu::v1::Profile& p, const char* name, const char* task_type, int block_dim,
                              std::array<uint64_t, 4> issue_start_end_done) {
  npu::v1::NodeProfile* n = p.add_nodes();
  n->set_name(name);
  n->set_op_type(name);
  n->set_task_type(task_type);
  n->set_block_dim(block_dim);
  n->set_ready_cycle(issue_start_end_done[0]);
  n->set_dispatch_cycle(issue_start_end_done[0]);
  n->set_start_cycle(issue_start_end_done[1]);
  n->set_end_cycle(issue_start_end_done[2]);
  n->set_complete_cycle(issue_start_end_done[3]);
  return n;
}

npu::v1::TileSlice* AddTile(npu::v1::NodeProfile* n, int core, uint64_t start, uint64_t end) {
  npu::v1::TileSlice* t = n->add_tiles();
  t->set_core(core);
  t->set_start_cycle(start);
  t->set_end_cycle(end);
  return t;
}

npu::v1::Profile TwoTasks(const std::string& architecture) {
  npu::v1::Profile p;
  p.set_device("npu:2");
  p.set_clock_mhz(1000);
  p.set_start_cycle(10000);
  p.set_core_architecture(architecture);
  for (const char* kind : {"aic", "aic", "aiv"}) p.add_cores()->set_kind(architecture == "coupled" ? "ai_core" : kind);
  npu::v1::NodeProfile* mm = AddTask(p, "mm", "AI_CORE", 2, {10000, 13000, 16000, 18000});
  mm->mutable_busy()->set_cube(2500);
  mm->mutable_busy()->set_mte2(1000);
  AddTile(mm, 0, 13000, 15000)->mutable_busy()->set_cube(1250);
  AddTile(mm, 1, 13000, 16000)->mutable_busy()->set_cube(1250);
  npu::v1::TensorDesc* a = mm->add_inputs();
  a->add_shape(16);
  a->add_shape(32);
  a->set_dtype(npu::v1::FLOAT16);
  a->set_format("ND");
  *mm->add_inputs() = *a;
  npu::v1::NodeProfile* relu = AddTask(p, "relu", architecture == "coupled" ? "AI_CORE" : "AI_VECTOR_CORE", 1,
                                       {19000, 22000, 24000, 26000});
  relu->set_overflow_elements(7);
  relu->mutable_busy()->set_vector(500);
  relu->mutable_busy()->set_mte2(1500);
  AddTile(relu, 2, 22000, 24000)->mutable_busy()->set_vector(500);
  return p;
}

std::map<std::string, std::string> Row(const npu::v1::Profile& p, int node) {
  const std::vector<std::string>& columns = OpSummaryColumns(p);
  const auto rows = OpSummaryRows(p, columns);
  std::map<std::string, std::string> row;
  for (size_t i = 0; i < columns.size(); ++i) row[columns[i]] = rows[node][i];
  return row;
}

TEST(OpSummaryTest, SeparatedChipsGetMsprofsA2LayoutAndDefinitions) {
  const npu::v1::Profile p = TwoTasks("separated");
  const std::vector<std::string>& columns = OpSummaryColumns(p);
  ASSERT_EQ(columns.size(), 46u);
  EXPECT_EQ(columns.front(), "Device_id");
  EXPECT_EQ(columns[8], "Task Start Time(us)");
  EXPECT_EQ(columns.back(), "cube_utilization(%)");
  auto mm = Row(p, 0);
  EXPECT_EQ(mm["Device_id"], "2");
  EXPECT_EQ(mm["Task Start Time(us)"], "0.000");  // issued as the run arrived
  EXPECT_EQ(mm["Task Duration(us)"], "8.000");    // 10,000 .. 18,000
  EXPECT_EQ(mm["Task Wait Time(us)"], "0.000");
  EXPECT_EQ(mm["aic_total_cycles"], "5000");      // 2,000 + 3,000 block cycles
  EXPECT_EQ(mm["aicore_time(us)"], "2.500");      // 5,000 / 2 blocks
  EXPECT_EQ(mm["aic_mac_time(us)"], "1.250");     // 2,500 / 2 blocks
  EXPECT_EQ(mm["aic_mac_ratio"], "0.500");        // 2,500 / 5,000
  EXPECT_EQ(mm["aic_mte2_ratio"], "0.200");
  EXPECT_EQ(mm["aiv_time(us)"], "N/A");
  EXPECT_EQ(mm["Input Shapes"], "16,32;16,32");
  EXPECT_EQ(mm["Input Data Types"], "FLOAT16;FLOAT16");
  EXPECT_EQ(mm["Input Formats"], "ND;ND");
  EXPECT_EQ(mm["cube_utilization(%)"], "15.625");  // 2,500 / (8,000 x 2 cube cores)
  auto relu = Row(p, 1);
  EXPECT_EQ(relu["Task Start Time(us)"], "9.000");
  EXPECT_EQ(relu["Task Wait Time(us)"], "1.000");  // the previous task was done at 18,000
  EXPECT_EQ(relu["aicore_time(us)"], "N/A");
  EXPECT_EQ(relu["aiv_time(us)"], "2.000");
  EXPECT_EQ(relu["aiv_total_cycles"], "2000");
  EXPECT_EQ(relu["aiv_vec_ratio"], "0.250");
  EXPECT_EQ(relu["aiv_mte2_ratio"], "0.750");
}

TEST(OpSummaryTest, CoupledChipsGetTheUnprefixedLayoutAndMemoryBound) {
  const npu::v1::Profile p = TwoTasks("coupled");
  const std::vector<std::string>& columns = OpSummaryColumns(p);
  EXPECT_EQ(columns.back(), "memory_bound");
  EXPECT_THAT(columns, Not(::testing::Contains("aic_mac_ratio")));
  auto relu = Row(p, 1);
  EXPECT_EQ(relu["Task Type"], "AI_CORE");
  EXPECT_EQ(relu["total_cycles"], "2000");
  EXPECT_EQ(relu["vec_ratio"], "0.250");
  EXPECT_EQ(relu["mte2_ratio"], "0.750");
  EXPECT_EQ(relu["memory_bound"], "3.000");  // mte2_ratio / max(mac_ratio, vec_ratio)
}

TEST(OpSummaryTest, TheConsoleRowShowsWhatEachTaskWaitedAndTheCsvKeepsMsprofsHeader) {
  // The relu's blocks waited 1,500 cycles beyond their launch for cores held
  // by other work (another client's run, say): the model's Waited(us) column,
  // on the terminal only, since msprof's CSV has no such column.
  npu::v1::Profile p = TwoTasks("separated");
  p.mutable_nodes(1)->set_wait_cycles(1500);
  const std::vector<std::string>& console = OpSummaryConsoleColumns(p);
  const auto it = std::find(console.begin(), console.end(), "Waited(us)");
  ASSERT_NE(it, console.end());
  const auto rows = OpSummaryRows(p, console);
  const size_t col = static_cast<size_t>(it - console.begin());
  EXPECT_EQ(rows[0][col], "0.000");
  EXPECT_EQ(rows[1][col], "1.500");  // 1,500 cycles at 1000 MHz
  EXPECT_THAT(OpSummaryColumns(p), Not(::testing::Contains("Waited(us)")));
  EXPECT_THAT(OpSummaryConsoleColumns(TwoTasks("coupled")), ::testing::Contains("Waited(us)"));
}

TEST(OpSummaryTest, CsvQuotesCellsWithCommas) {
  std::ostringstream csv;
  WriteOpSummaryCsv(TwoTasks("separated"), csv);
  EXPECT_THAT(csv.str(), HasSubstr(",\"16,32;16,32\","));
}

TEST(ChromeTraceTest, TimesCountFromTheRunAndOnlyUsedTracksAreNamed) {
  std::ostringstream out;
  WriteChromeTrace(TwoTasks("separated"), out);
  const std::string trace = out.str();
  EXPECT_THAT(trace, HasSubstr("\"start_cycle\":10000"));
  // The Cube task's op slice: issued at the run's arrival, 8 us long.
  EXPECT_THAT(trace, HasSubstr("\"cat\":\"op\",\"ph\":\"X\",\"pid\":2,\"tid\":0,\"ts\":0.000000,\"dur\":8.000000"));
  EXPECT_THAT(trace, HasSubstr("\"name\":\"core 0 cube\""));
  EXPECT_THAT(trace, HasSubstr("\"name\":\"core 2 vector\""));
  EXPECT_THAT(trace, Not(HasSubstr("\"name\":\"core 0 vector\"")));  // no Vector work on core 0
  EXPECT_THAT(trace, Not(HasSubstr("\"name\":\"core 3")));           // never used
  // The overflow counter: 7 elements while the Vector task runs, 0 after.
  EXPECT_THAT(trace, HasSubstr("\"name\":\"overflow\",\"ph\":\"C\",\"pid\":2,\"ts\":9.000000,\"args\":{\"elements\":7}"));
  EXPECT_THAT(trace, HasSubstr("\"name\":\"overflow\",\"ph\":\"C\",\"pid\":2,\"ts\":16.000000,\"args\":{\"elements\":0}"));
}

}  // namespace
}  // namespace npu::client::cli
