#!/usr/bin/env bash
# cuda_module.sh BIN_DIR: CUDA's part of legalnet (liblegalnet_cuda.so, lib/compute/cuda_module.h) is
# loaded only where a run may use a GPU. --help and a CPU run never load libtorch_cuda; without
# the NVIDIA driver neither does --device cuda, which names the missing driver. Where this
# machine has no driver, the CUDA toolkit's stub libcuda.so (its cuInit fails with
# CUDA_ERROR_STUB_LIBRARY, 34) stands in for one: --device cuda then loads the module and names
# cuInit's error, which only torch's loaded CUDA backend leads to (had the registry been asked
# before the load, the tool would say so as an internal error, or that the build has no CUDA).
set -uo pipefail
bin=$(cd "$1" && pwd)
if [[ ! -e $bin/liblegalnet_cuda.so ]]; then
  echo "a build without CUDA: nothing to check"
  exit 77
fi
here=$(cd "$(dirname "$0")" && pwd)
source "$here/checks.sh"
cd "$work"

# cuda_loads CMD...: how many times the dynamic loader opened libtorch_cuda.so for CMD.
cuda_loads() { LD_DEBUG=files "$@" 2>&1 >/dev/null | grep -c 'file=[^ ]*libtorch_cuda\.so.*generating link map'; }

# fails_with REGEX CMD...: CMD exits 1 with one line on stderr matching REGEX (expect_error.sh).
fails_with() { "$here/expect_error.sh" "$@" || fail "$*"; }

set -e
"$bin/gen_moves" -q --games 4 --seed 1 --out games.pgn
"$bin/tensorize" -q --in games.pgn --out data.h5
"$bin/train" -q --data data.h5 --out run --arch mlp --hidden 16 --max-steps 1 --batch-size 8 --device cpu --threads 1
set +e
model=run/model.safetensors
evaluate=("$bin/evaluate" --model "$model" --fen startpos --threads 1)

# Multi-process training on GPUs makes its NCCL group through the module (train/distributed.cpp).
if "$bin/train" --version | grep -q 'NCCL yes' &&
  ! nm -D --defined-only "$bin/liblegalnet_cuda.so" | grep -q ' T legalnet_nccl_group$'; then
  fail "liblegalnet_cuda.so does not export legalnet_nccl_group, though train --version says NCCL yes"
fi
for cmd in "$bin/train --help" "$bin/evaluate --help"; do
  # shellcheck disable=SC2086
  [[ $(cuda_loads $cmd) == 0 ]] || fail "$cmd loaded libtorch_cuda"
done
[[ $(cuda_loads "${evaluate[@]}" --device cpu) == 0 ]] || fail "evaluate --device cpu loaded libtorch_cuda"

if ldconfig -p | grep -q 'libcuda\.so\.1 '; then
  echo "this machine has the NVIDIA driver: the checks without one are skipped"
else
  [[ $(cuda_loads "${evaluate[@]}") == 0 ]] || fail "evaluate --device auto loaded libtorch_cuda without a driver"
  "${evaluate[@]}" --report auto.json >/dev/null 2>&1
  grep -q '"device_note": "the NVIDIA driver is missing' auto.json ||
    fail "evaluate --device auto: report.json's device_note: $(grep device_note auto.json)"
  fails_with '^evaluate: --device cuda: the NVIDIA driver is missing \(libcuda\.so\.1 cannot be loaded\)$' \
    "${evaluate[@]}" --device cuda
  stub=""
  for dir in /usr/local/cuda/lib64/stubs /usr/local/cuda/targets/x86_64-linux/lib/stubs; do
    [[ -e $dir/libcuda.so ]] && stub=$dir/libcuda.so && break
  done
  if [[ -z $stub ]]; then
    echo "no CUDA toolkit stub driver (libcuda.so): the loaded module's checks are skipped"
  else
    mkdir driver && ln -s "$stub" driver/libcuda.so.1
    export LD_LIBRARY_PATH=$work/driver${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    [[ $(cuda_loads "${evaluate[@]}" --device cuda) -ge 1 ]] || fail "--device cuda did not load libtorch_cuda"
    fails_with '^evaluate: --device cuda: the NVIDIA driver failed to start \(cuInit error 34\)$' \
      "${evaluate[@]}" --device cuda
    fails_with '^train: --device cuda:0: the NVIDIA driver failed to start \(cuInit error 34\)$' \
      "$bin/train" -q --data data.h5 --out never --device cuda:0
    [[ $(cuda_loads "${evaluate[@]}" --device cpu) == 0 ]] || fail "evaluate --device cpu loaded libtorch_cuda"
  fi
fi
finish "cuda_module: libtorch_cuda is loaded only where a run may use a GPU"
