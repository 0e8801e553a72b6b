#!/usr/bin/env bash
# Prepares a run on a lent device machine (the `device` tool; see
# benches/device/README.md): builds the release binary and the GPU test
# binary here, strips and compresses them into .devbin/, and fetches the
# Vulkan loader and glvnd packages that the device's NVIDIA driver needs
# into .gl/. Pass both as `carry` to the device tool.
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo build --release
test_binary=$(cargo test --release --no-run --test gpu --message-format=json 2>/dev/null \
    | python3 -c 'import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["name"] == "gpu":
        print(m["executable"])')
rm -rf .devbin && mkdir -p .devbin
cp target/release/tether-sweep .devbin/tether-sweep
cp "$test_binary" .devbin/gpu-tests
strip .devbin/tether-sweep .devbin/gpu-tests
xz -T0 .devbin/tether-sweep .devbin/gpu-tests
mkdir -p .gl
(cd .gl && apt-get download libvulkan1 libegl1 libglvnd0 libopengl0 libgl1 libglx0 libgles2)
du -sh .devbin .gl
