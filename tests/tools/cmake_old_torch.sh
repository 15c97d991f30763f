#!/usr/bin/env bash
# cmake_old_torch.sh SOURCE_DIR: configuring against a libtorch older than the supported line
# stops CMake with one message naming the version found, the version needed and the variable
# to set. The old libtorch is a stand-in: a TorchConfig.cmake that says 2.0.0.
set -euo pipefail
src=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/torch/share/cmake/Torch"
cat > "$tmp/torch/share/cmake/Torch/TorchConfig.cmake" <<'CFG'
set(TORCH_INSTALL_PREFIX "${CMAKE_CURRENT_LIST_DIR}/../../..")
set(Torch_FOUND TRUE)
CFG
cat > "$tmp/torch/share/cmake/Torch/TorchConfigVersion.cmake" <<'CFG'
set(PACKAGE_VERSION "2.0.0")
set(PACKAGE_VERSION_COMPATIBLE TRUE)
CFG
if cmake -S "$src" -B "$tmp/build" -G Ninja -DTorch_DIR="$tmp/torch/share/cmake/Torch" > "$tmp/log" 2>&1; then
  echo "configure accepted libtorch 2.0.0"
  exit 1
fi
message=$(tr -s ' \n' ' ' < "$tmp/log")
for part in "libtorch 2.0.0 found" "libtorch >= 2.11 is needed" "-DTorch_DIR="; do
  [[ $message == *"$part"* ]] || { echo "CMake's message lacks '$part':"; cat "$tmp/log"; exit 1; }
done
echo "old libtorch refused"
