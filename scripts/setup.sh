#!/usr/bin/env bash
# Installs what perfwatch needs on Debian 12. Idempotent: asks apt only for
# packages that are missing, and says nothing when everything is already there.
set -euo pipefail

packages=(
  build-essential cmake ninja-build git pkg-config
  libsqlite3-dev sqlite3
  libcpp-httplib-dev nlohmann-json3-dev libvalijson-dev
  libboost-dev libboost-filesystem-dev
  libgtest-dev libgmock-dev libcli11-dev libssl-dev
  python3  # the Python bench kit's tests (tests/kit); not certain on a minimal Debian 12
  libbenchmark-dev  # the Google Benchmark suite the google-benchmark adapter's tests build
  # The fuzz targets (tests/fuzz/README.md): libFuzzer and the sanitizers come
  # with clang; clang 16 is the first that compiles libstdc++ 12's std::expected.
  clang-16 libclang-rt-16-dev
)
# Only the test command needs these: the browser test drives Debian's
# chromium; the Slurm executor's test starts a single-node Slurm (slurmctld,
# slurmd, munged) on this machine.
for option in "$@"; do
  case $option in
    --with-browser) packages+=(chromium) ;;
    --with-slurm) packages+=(slurm-wlm munge) ;;
    --for-tests) packages+=(chromium slurm-wlm munge) ;;
    *) echo "setup: unknown option '$option' (--with-browser, --with-slurm, --for-tests)" >&2; exit 2 ;;
  esac
done

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

# Node.js and npm install the dashboard's chart library and drive the browser
# test; these machines have Node 20, Debian's packages serve elsewhere.
command -v npm >/dev/null 2>&1 || missing+=(nodejs npm)

if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo=""
  [[ $(id -u) -eq 0 ]] || sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if ! command -v nvcc >/dev/null 2>&1 && [[ -x /usr/local/cuda/bin/nvcc ]]; then
  echo "setup: nvcc is in /usr/local/cuda/bin but not on PATH; add it to build the CUDA kernels"
fi
