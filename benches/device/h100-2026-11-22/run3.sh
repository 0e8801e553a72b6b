#!/bin/bash
# Device run 3: is the f64 device loss the private-array size? Then the
# swing-up landscape (32,768 × n = 40, 3 s) on the GPU.
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export XDG_RUNTIME_DIR=/tmp
cd .devbin && xz -d -T4 tether-sweep.xz ts65.xz ts17.xz && chmod +x ts65 ts17 tether-sweep && cd ..
for b in ts17 ts65 tether-sweep; do
  for p in f64 f32; do
    echo "=== $b $p n=10 drop"
    timeout 30 .devbin/$b simulate --backend gpu --precision $p --elements 10 --damping 1000 --out /tmp/s_$b_$p.parquet 2>&1 | tail -3
  done
done
echo "=== landscape on the GPU (f32)"
/usr/bin/time -v timeout 500 .devbin/tether-sweep swingup --exhaustive --backend gpu --generations 1 --out /tmp/land 2>&1 | grep -v "^\s*\(Page\|Socket\|Signals\|Swaps\|File sys\|Average\|Exit\|Minor\|Major\|Volun\|Invol\)"
cp /tmp/land/landscape.parquet $OUT/ 2>/dev/null; ls /tmp/land
