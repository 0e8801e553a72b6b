#!/usr/bin/env bash
# Prepares a run on a lent device machine (the `device` tool; see
# benches/device/README.md): builds the release binary and the GPU test
# binary here, strips and compresses them into .devbin/, and fetches the
# Vulkan loader and glvnd packages that the device's NVIDIA driver needs
# into .gl/. Pass both as `carry` to the device tool.
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo build --release
# The GPU integration tests and the library's unit tests (which run each
# shared WGSL function on the adapter against its CPU mirror).
test_binary() {
    cargo test --release --no-run "$@" --message-format=json 2>/dev/null \
        | python3 -c 'import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["profile"]["test"]:
        print(m["executable"])'
}
gpu_tests=$(test_binary --test gpu)
gpu_adaptive_tests=$(test_binary --test gpu_adaptive)
lib_tests=$(test_binary --lib)
rm -rf .devbin && mkdir -p .devbin
cp target/release/tether-sweep .devbin/tether-sweep
cp "$gpu_tests" .devbin/gpu-tests
cp "$lib_tests" .devbin/lib-tests
cp "$gpu_adaptive_tests" .devbin/gpu-adaptive-tests
strip .devbin/tether-sweep .devbin/gpu-tests .devbin/lib-tests .devbin/gpu-adaptive-tests
xz -T0 .devbin/tether-sweep .devbin/gpu-tests .devbin/lib-tests .devbin/gpu-adaptive-tests
mkdir -p .gl
(cd .gl && apt-get download libvulkan1 libegl1 libglvnd0 libopengl0 libgl1 libglx0 libgles2)
du -sh .devbin .gl
