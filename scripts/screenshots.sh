#!/bin/sh
# Takes the dashboard's screenshots in docs/screenshots/ again: every page at
# desktop (1400 px) and phone (390 px) width, light and dark, over the web
# tests' fixture database. Needs a build (BUILD_DIR, default build/) with the
# perfwatch and perfwatch_web_fixture_db targets, `npm ci` in web/ and
# Debian's chromium (scripts/setup.sh --with-browser). PNGs are shrunk with
# pngquant when it is installed.
set -eu
cd "$(dirname "$0")/.."
build=${1:-build}
ninja -C "$build" perfwatch perfwatch_web_fixture_db >/dev/null
chromium=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$chromium" ]; then
  echo "screenshots.sh: chromium not found: run scripts/setup.sh --with-browser" >&2
  exit 2
fi
if [ ! -d web/node_modules/playwright-core ]; then
  echo "screenshots.sh: web/node_modules/playwright-core is missing: run (cd web && npm ci)" >&2
  exit 2
fi
rm -f docs/screenshots/*.png
node scripts/screenshots.mjs --perfwatch "$build/perfwatch" --fixture "$build/tests/web/perfwatch_web_fixture_db" \
  --chromium "$chromium" --out docs/screenshots
if command -v pngquant >/dev/null; then
  pngquant --force --skip-if-larger --ext .png --quality 60-90 docs/screenshots/*.png || true
fi
du -ch docs/screenshots/*.png | tail -1
