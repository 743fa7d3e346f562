#!/usr/bin/env bash
# Every copy of the VaR kernel's vector loops this CPU runs gives the same VaR per
# trade, bit for bit, for both kernels; each run records the path it took
# (kernel_path) and the CPU (cpu_model, cpu_flags). LD_VAR_PATH forces a path.
# Usage: test_var_paths.sh LOOMDIST PYTHON WORKDIR
set -euo pipefail
bin=$(realpath "$1") py=$2 work=$3
rm -rf "$work" && mkdir -p "$work" && cd "$work"
for path in generic avx2 avx512; do
    for kernel in sort select; do
        LD_VAR_PATH=$path "$bin" --quiet --jobs var --strategies sequential,pool \
            --trades 400 --sims 4099 --var-kernel $kernel \
            --output "$path-$kernel.h5" > /dev/null
    done
done
"$py" - <<'PY'
import h5py, numpy as np
flags = h5py.File("generic-sort.h5", "r").attrs["cpu_flags"].split(",")
runs = {"generic": 0}
if "avx2" in flags:
    runs["avx2"] = 1
if "avx512f" in flags and "avx512dq" in flags:
    runs["avx512"] = 2
for kernel in ("sort", "select"):
    first = None
    for path in ("generic", "avx2", "avx512"):
        f = h5py.File(f"{path}-{kernel}.h5", "r")
        assert f.attrs["cpu_model"] != "" or f.attrs["cpu_flags"] == "", "no CPU model"
        taken = f["var/sequential/kernel_path"][...]
        want = runs.get(path, max(runs.values()))  # a path the CPU lacks is not taken
        assert (taken == want).all(), f"{path}: kernel_path {taken} not {want}"
        for strategy in ("sequential", "pool"):
            var = f[f"var/{strategy}/var"][...]
            assert np.isfinite(var).all() and var.size == 400
            if first is None:
                first = var
            assert first.tobytes() == var.tobytes(), f"{path}/{strategy}/{kernel} differs"
    print(f"{kernel}: paths {sorted(runs)} agree on {first.size} VaRs bit for bit")
PY
