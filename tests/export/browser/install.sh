#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Install the third-party readers that tests/export/browser/check.mjs uses to
# check tailor's exported profiles: Debian's Chromium, and speedscope plus
# playwright-core (the driver) from npm at the exact versions pinned in
# package-lock.json beside this script.
#
# Run as root on Debian 12 (scripts/setup.sh does).  Idempotent: Debian
# packages already present are left alone, and `npm ci` is skipped when the
# readers directory already holds a finished install of the same lock file.
# Any failure stops the script with one sentence on stderr.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
dest=${TAILOR_READERS:-/usr/local/lib/tailor-test-readers}
# Written last, after `npm ci` succeeded: its absence means "not installed".
stamp=$dest/.tailor-lock.sha256

die() {
	echo "install.sh: $*" >&2
	exit 1
}
trap 'die "command failed (line $LINENO): $BASH_COMMAND."' ERR

[ "$(id -u)" -eq 0 ] || die "must run as root (apt-get install and $dest need it)."
for f in package.json package-lock.json; do
	[ -f "$here/$f" ] || die "$f is missing beside $0."
done

export DEBIAN_FRONTEND=noninteractive

apt_updated=0
apt_install() {
	local pkg=$1
	if dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed'; then
		return 0
	fi
	if [ "$apt_updated" -eq 0 ]; then
		apt-get update -q >/dev/null || die "apt-get update failed."
		apt_updated=1
	fi
	echo "install.sh: installing Debian package $pkg"
	apt-get install -y -q --no-install-recommends "$pkg" >/dev/null ||
		die "apt-get could not install Debian package $pkg."
}

# chromium: the browser the readers run in.  fonts-dejavu-core: with
# --no-install-recommends Chromium may come without any font, and text in
# screenshots would then be blank boxes.
for pkg in chromium fonts-dejavu-core; do
	apt_install "$pkg"
done

# Node and npm: the machine image ships Node 20 with npm; only on a bare
# Debian 12 do we fall back to Debian's own packages.  playwright-core needs
# Node >= 20, which Debian 12's nodejs (18) is not, so check the version.
command -v node >/dev/null || apt_install nodejs
command -v npm >/dev/null || apt_install npm
node_major=$(node -p 'process.versions.node.split(".")[0]')
[ "$node_major" -ge 20 ] ||
	die "node $(node --version) is too old: playwright-core needs Node >= 20."

want=$(sha256sum "$here/package-lock.json" | cut -d' ' -f1)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] &&
   [ -f "$dest/node_modules/speedscope/package.json" ] &&
   [ -f "$dest/node_modules/playwright-core/package.json" ]; then
	echo "install.sh: readers already installed in $dest"
	exit 0
fi

mkdir -p "$dest"
rm -f "$stamp"
install -m 0644 "$here/package.json" "$here/package-lock.json" "$dest/"
# --ignore-scripts: neither package needs an install script, and none may
# download anything (e.g. a browser build) behind our back.
(cd "$dest" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error) ||
	die "npm ci failed in $dest."
echo "$want" >"$stamp"
echo "install.sh: readers installed in $dest"
