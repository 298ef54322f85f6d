#!/usr/bin/env bash
# Builds the DocC documentation of the KeychainFile module with the toolchain's own `docc` (no plugin package):
# the compiler writes the module's symbol graph during a debug build, and `docc convert` turns it and
# Sources/KeychainFile/KeychainFile.docc into a documentation archive. Any warning fails the script.
#
#   Scripts/build-docs.sh            writes .build/docs/KeychainFile.doccarchive
#   DOCC=/path/to/docc Scripts/build-docs.sh
#
# The build has a scratch directory of its own (.build/docs), so it never invalidates the release build the
# tests use; the first run compiles KeychainCrypto and KeychainFile in debug (a few minutes), later runs
# only what changed. View the archive with `docc preview Sources/KeychainFile/KeychainFile.docc
# --additional-symbol-graph-dir .build/docs/symbol-graphs`.
set -euo pipefail
cd "$(dirname "$0")/.."

scratch=.build/docs
graphs="$scratch/symbol-graphs"
docc="${DOCC:-$(dirname "$(command -v swift)")/docc}"
[ -x "$docc" ] || { echo "build-docs: no docc at $docc (set DOCC)" >&2; exit 1; }

# The compiler writes a module's graph when it compiles the module: an up-to-date build leaves the last one,
# which is current. Without one (a scratch directory from elsewhere), the build starts over.
[ -f "$scratch/all-graphs/KeychainFile.symbols.json" ] || rm -rf "$scratch"
mkdir -p "$scratch/all-graphs"
swift build --scratch-path "$scratch" --target KeychainFile \
    -Xswiftc -emit-symbol-graph -Xswiftc -emit-symbol-graph-dir -Xswiftc "$PWD/$scratch/all-graphs"
# Only KeychainFile's graphs (its own symbols and its extensions of other modules' types); KeychainCrypto's
# are another module's documentation.
rm -rf "$graphs"
mkdir -p "$graphs"
cp "$scratch"/all-graphs/KeychainFile.symbols.json "$graphs"/
for extension in "$scratch"/all-graphs/KeychainFile@*.symbols.json; do
    [ -e "$extension" ] && cp "$extension" "$graphs"/
done

"$docc" convert Sources/KeychainFile/KeychainFile.docc \
    --additional-symbol-graph-dir "$graphs" \
    --fallback-display-name KeychainFile --fallback-bundle-identifier org.keychainfile.KeychainFile \
    --output-path "$scratch/KeychainFile.doccarchive" \
    --warnings-as-errors
echo "build-docs: $scratch/KeychainFile.doccarchive"
