#!/bin/bash
# Packs a Release build for a run on another machine (a 16-core machine lent for a few minutes, whose
# system may differ from this one): rocesim and bench_scaling with every shared library they load, and
# the dynamic loader itself, into one folder, with wrapper scripts that start them through that loader.
# bench/device/run.sh runs the thread table there. Usage: bench/device/pack.sh [BUILD_DIR] [DEST]
# (defaults: build, build-device). The folder is ignored by git (/build*/), so carry it explicitly.
set -euo pipefail
build=${1:-build}
dest=${2:-build-device}
for b in rocesim bench_scaling; do
  [ -x "$build/$b" ] || { echo "pack.sh: $build/$b is missing: build it first (make build)" >&2; exit 1; }
done
grep -q 'CMAKE_BUILD_TYPE:STRING=Release' "$build/CMakeCache.txt" ||
  { echo "pack.sh: $build is not a Release build" >&2; exit 1; }
rm -rf "$dest"
mkdir -p "$dest/lib" "$dest/bin"
for b in rocesim bench_scaling; do
  cp "$build/$b" "$dest/bin/$b.real"
  # Every library the loader resolves for it, and the loader (the line without "=>").
  ldd "$build/$b" | awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// {print $1}' |
    while read -r lib; do cp -L "$lib" "$dest/lib/"; done
done
loader=$(ldd "$build/rocesim" | awk '$1 ~ /ld-linux/ {print $1}')
loader=$(basename "$loader")
for b in rocesim bench_scaling; do
  cat > "$dest/bin/$b" <<WRAP
#!/bin/sh
# Starts $b through the loader and libraries packed beside it (bench/device/pack.sh).
here=\$(dirname "\$(readlink -f "\$0")")
exec "\$here/../lib/$loader" --library-path "\$here/../lib" "\$here/$b.real" "\$@"
WRAP
  chmod +x "$dest/bin/$b"
done
git -C "$(dirname "$0")" rev-parse --short HEAD > "$dest/commit" 2>/dev/null || echo unknown > "$dest/commit"
du -sh "$dest" | awk '{print "pack.sh: " $2 " is " $1 " (commit " c ")"}' c="$(cat "$dest/commit")"
