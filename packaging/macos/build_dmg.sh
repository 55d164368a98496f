#!/usr/bin/env bash
# macOS: build Attention Lab.app and a .dmg. Not built or tested on Linux: see packaging/README.md.
# Needs Xcode's command line tools (iconutil, hdiutil) and Python 3.11+.
set -euo pipefail
cd "$(dirname "$0")/../.."
mkdir -p build/icons/attention-lab.iconset
for size in 16 32 64 128 256 512; do
  sips -s format png -z $size $size build/icons/attention-lab.png \
       --out build/icons/attention-lab.iconset/icon_${size}x${size}.png >/dev/null
done
iconutil -c icns build/icons/attention-lab.iconset -o build/icons/attention-lab.icns
ATTENTION_LAB_ICON="$PWD/build/icons/attention-lab.icns" python3 packaging/build.py --flavour "${1:-full}" --no-deb
# PyInstaller's one-folder build becomes an app bundle with --windowed on macOS:
mkdir -p "build/Attention Lab.app/Contents/MacOS" "build/Attention Lab.app/Contents/Resources"
cp -R build/dist-"${1:-full}"/attention-lab/. "build/Attention Lab.app/Contents/MacOS/"
cp build/icons/attention-lab.icns "build/Attention Lab.app/Contents/Resources/"
cat > "build/Attention Lab.app/Contents/Info.plist" <<PLIST
<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0"><dict>
  <key>CFBundleName</key><string>Attention Lab</string>
  <key>CFBundleIdentifier</key><string>org.attentionlab.app</string>
  <key>CFBundleExecutable</key><string>attention-lab</string>
  <key>CFBundleIconFile</key><string>attention-lab.icns</string>
  <key>CFBundlePackageType</key><string>APPL</string>
  <key>NSHighResolutionCapable</key><true/>
</dict></plist>
PLIST
hdiutil create -volname "Attention Lab" -srcfolder "build/Attention Lab.app" -ov -format UDZO \
  build/attention-lab-macos.dmg
