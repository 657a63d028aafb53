#!/usr/bin/env bash
# Stages, here, what the GPU machine lacks to run perfwatch end to end, into
# the git-ignored folder .carry/gpu/ of this checkout, and prints the device
# call that runs scripts/gpu/e2e.sh there with it.
#
# usage: scripts/gpu/stage.sh [PHASE...]     (default phases: demo noise triton)
#
# What goes into .carry/gpu/ (replaced whole on each call):
#   bin/perfwatch         a Release build of perfwatch (no CUDA needed here:
#                         the kernels are built on the GPU machine, by perfwatch)
#   lib/                  the shared libraries that machine lacks
#                         (PERFWATCH_GPU_LIBS, default: libboost_filesystem
#                         libcpp-httplib), found with ldd
#   lib-spare/            perfwatch's other non-core libraries (sqlite, ssl,
#                         zlib, brotli), used there only if one is missing
#   prefix/               Debian's nlohmann_json CMake config and headers, as
#                         share/cmake/nlohmann_json and include/nlohmann (the
#                         kernels' CMake finds them once e2e.sh copies them to
#                         /usr/local)
#   STAGED.txt            what was staged, from which commit, with ldd's answer
# Env: PERFWATCH_STAGE_BUILD  the build folder (default build-gpu-stage, git-ignored)
#      PERFWATCH_STAGE_BINARY a perfwatch already built (any build type) to stage
#                             instead of building Release: the kernels it
#                             measures are built on the GPU machine by nvcc, so
#                             perfwatch's own optimisation level changes no figure
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"
build=${PERFWATCH_STAGE_BUILD:-$root/build-gpu-stage}
carry=$root/.carry/gpu
wanted_libs=${PERFWATCH_GPU_LIBS:-libboost_filesystem libcpp-httplib}
phases=("$@")
if [[ ${#phases[@]} -eq 0 ]]; then phases=(demo noise triton); fi

die() { echo "stage.sh: $*" >&2; exit 1; }

if git -C "$root" rev-parse --git-dir >/dev/null 2>&1 && ! git -C "$root" check-ignore -q .carry/gpu; then
  die ".carry/ is not git-ignored here: add /.carry/ to .gitignore first (the device carries only ignored paths by name)"
fi

# 1. perfwatch, Release. The dashboard embeds uPlot from web/node_modules.
if [[ ! -f web/node_modules/uplot/dist/uPlot.iife.min.js ]]; then
  (cd web && npm ci --no-audit --no-fund --loglevel=error)
fi
launcher=()
if command -v ccache >/dev/null 2>&1; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
binary=${PERFWATCH_STAGE_BINARY:-}
if [[ -z $binary ]]; then
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DMLA_ENABLE_CUDA=OFF \
    -DPERFWATCH_REQUIRE_BROWSER_TEST=OFF "${launcher[@]}" >/dev/null
  cmake --build "$build" --target perfwatch
  binary=$build/perfwatch
fi
[[ -x $binary ]] || die "no perfwatch executable at $binary"

rm -rf "$carry"
mkdir -p "$carry/bin" "$carry/lib" "$carry/lib-spare" "$carry/prefix"
cp "$binary" "$carry/bin/perfwatch"
strip --strip-debug "$carry/bin/perfwatch" 2>/dev/null || true

# 2. Its shared libraries, by soname (the name the loader looks for). The C
# and C++ runtimes stay behind: the machine has its own, and newer ones.
core='^(linux-vdso|ld-linux|libc|libm|libstdc\+\+|libgcc_s|libpthread|libdl|librt)\.so'
found_wanted=""
while read -r soname path; do
  [[ -n $path && -f $path ]] || continue
  if [[ $soname =~ $core ]]; then continue; fi
  dest=lib-spare
  for w in $wanted_libs; do
    if [[ $soname == "$w".so* || $soname == "$w"-*.so* ]]; then dest=lib; found_wanted+=" $w"; fi
  done
  cp -L "$path" "$carry/$dest/$soname"
done < <(ldd "$carry/bin/perfwatch" | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}')
for w in $wanted_libs; do
  [[ " $found_wanted " == *" $w "* ]] || die "perfwatch does not link $w (ldd): check PERFWATCH_GPU_LIBS"
done

# 3. nlohmann_json's CMake package: the config (whose targets file finds the
# headers three folders up, so it must keep share/cmake/nlohmann_json under
# the prefix) and the headers.
config=""
for d in /usr/share/cmake/nlohmann_json /usr/lib/cmake/nlohmann_json /usr/local/share/cmake/nlohmann_json; do
  if [[ -f $d/nlohmann_jsonConfig.cmake ]]; then config=$d; break; fi
done
[[ -n $config ]] || die "nlohmann_json's CMake config not found (apt-get install nlohmann-json3-dev)"
json_prefix=$(cd "$config/../../.." && pwd)
[[ -f $json_prefix/include/nlohmann/json.hpp ]] || die "$json_prefix/include/nlohmann/json.hpp not found beside $config"
mkdir -p "$carry/prefix/share/cmake" "$carry/prefix/include"
cp -r "$config" "$carry/prefix/share/cmake/nlohmann_json"
cp -r "$json_prefix/include/nlohmann" "$carry/prefix/include/nlohmann"

rev=$(git -C "$root" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
dirty=$(git -C "$root" status --porcelain --untracked-files=no 2>/dev/null | wc -l)
{
  echo "staged $(date -u +%Y-%m-%dT%H:%M:%SZ) from $root at $rev ($dirty files changed since)"
  echo "perfwatch: $build/perfwatch, Release, stripped of debug info; sha256 $(sha256sum "$carry/bin/perfwatch" | cut -c1-16)"
  echo "nlohmann_json: $config and $json_prefix/include/nlohmann"
  echo "libraries (lib/ always used there; lib-spare/ only for one the machine lacks):"
  (cd "$carry" && find lib lib-spare -type f -printf '  %p %s bytes\n' | sort)
  echo "ldd here:"
  ldd "$carry/bin/perfwatch" | sed 's/^/ /'
} > "$carry/STAGED.txt"

# What travels: the checkout (tracked and untracked-not-ignored files) and the carry.
tree_bytes=$(git -C "$root" ls-files -z -co --exclude-standard 2>/dev/null | (cd "$root" && xargs -0 du -cb 2>/dev/null) | awk 'END {print $1 + 0}')
carry_bytes=$(du -sb "$carry" | cut -f1)
total_mib=$(( (tree_bytes + carry_bytes) / 1048576 ))
cat "$carry/STAGED.txt"
echo
echo "stage.sh: .carry/gpu is $((carry_bytes / 1024)) KiB; with the checkout about $total_mib MiB travel (limit 64 MiB)"
if (( total_mib >= 60 )); then echo "stage.sh: WARNING: close to the device's 64 MiB limit" >&2; fi
cat <<EOF

The device call (from $root; about 9 minutes on an H200 for demo noise triton):
  run(command="bash scripts/gpu/e2e.sh ${phases[*]}",
      carry=[".carry/gpu"], timeout_s=600)
Then, here: scripts/gpu/artefacts.sh <files_at>/demo.db <folder>  (summary + chart screenshot)
EOF
