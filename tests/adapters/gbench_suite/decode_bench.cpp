// A tiny Google Benchmark suite as a kernel engineer writes one: the tile
// size is a template argument (perfwatch's variants), the batch an argument
// (perfwatch's sweep axis). BM_decode<64> at batch 8 reports an error, as a
// kernel that does not fit would (its check must come back infeasible).
#include <benchmark/benchmark.h>

#include <vector>

#include "decode_kernel.h"

namespace {

constexpr int kTokens = 2048;

template <int BlockT>
void BM_decode(benchmark::State& state) {
  const int batch = static_cast<int>(state.range(0));
  if (BlockT == 64 && batch == 8) {
    state.SkipWithError("BLOCK_T=64 needs 232 KiB of shared memory at batch 8");
    return;
  }
  std::vector<float> kv(4096);
  for (std::size_t i = 0; i < kv.size(); ++i) kv[i] = static_cast<float>(i % 97) / 97.0f;
  for (auto _ : state) benchmark::DoNotOptimize(decode::decode_step<BlockT>(kv, batch, kTokens));
  state.SetItemsProcessed(state.iterations() * batch);
  state.counters["tokens_per_s"] =
      benchmark::Counter(static_cast<double>(state.iterations()) * batch, benchmark::Counter::kIsRate);
  state.counters["tiles"] = static_cast<double>((kTokens + BlockT - 1) / BlockT);
}

BENCHMARK_TEMPLATE(BM_decode, 16)->Arg(1)->Arg(8)->UseRealTime();
BENCHMARK_TEMPLATE(BM_decode, 32)->Arg(1)->Arg(8)->UseRealTime();
BENCHMARK_TEMPLATE(BM_decode, 64)->Arg(1)->Arg(8)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
