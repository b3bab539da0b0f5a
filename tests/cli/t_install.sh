# `cmake --install` into a temporary prefix, then the demo from another
# directory with the installed gpuscope: the collector is found relative to
# the binary (PREFIX/bin/../lib/gpuscope), the man pages and completion are
# in place.  The build tree is never consulted (GPUSCOPE_COLLECTOR unset).
. "$(dirname "$0")/lib.sh"
P=$T/prefix
cmake --install "$GS_BUILD_DIR" --prefix "$P" >"$T/install.log" 2>&1 || fail "cmake --install: $(tail -5 "$T/install.log")"
[ -x "$P/bin/gpuscope" ] || fail "no bin/gpuscope"
lib=$(find "$P" -name libgpuscope-collect.so)
[ -n "$lib" ] || fail "no libgpuscope-collect.so installed"
case $lib in */lib*/gpuscope/libgpuscope-collect.so) ;; *) fail "collector at '$lib'";; esac
[ -f "$(dirname "$lib")/libgpuscope-collect-nolock.so" ] || fail "no libgpuscope-collect-nolock.so beside it"
[ -s "$P/share/man/man1/gpuscope-profile.1" ] || fail "no man page gpuscope-profile.1"
[ -s "$P/share/man/man1/gpuscope.1" ] || fail "no man page gpuscope.1"
[ -s "$P/share/bash-completion/completions/gpuscope" ] || fail "no bash completion"
[ -s "$P/share/zsh/vendor-completions/_gpuscope" ] || fail "no zsh completion"
[ -s "$P/share/doc/gpuscope/README.md" ] && [ -s "$P/share/doc/gpuscope/cli.md" ] || fail "no docs"
demo=$(find "$P" -path '*gpuscope/examples/demo' -type f)
[ -n "$demo" ] || fail "no demo installed"
mkdir "$T/elsewhere"
cd "$T/elsewhere"
env -u GPUSCOPE_COLLECTOR "$P/bin/gpuscope" profile -o demo -- "$demo" >"$T/out" 2>"$T/err" ||
  fail "installed profile: $(cat "$T/err")"
grep -q "wrote 'demo.gpuscope'" "$T/err" || fail "no report written: $(cat "$T/err")"
"$P/bin/gpuscope" info demo.gpuscope >"$T/info" || fail "installed info"
grep -q 'threads' "$T/info" || fail "info: $(cat "$T/info")"
grep -q 'loader' "$T/info" || fail "the demo's threads are not in the report: $(cat "$T/info")"
# without OS-runtime tracing profile preloads the collector without lock wrappers, from the prefix
env -u GPUSCOPE_COLLECTOR "$P/bin/gpuscope" profile -t nvtx -o maps -- sh -c 'grep -o "[^ ]*gpuscope-collect[^ ]*" /proc/$$/maps | sort -u' \
  >"$T/maps" 2>"$T/err" || fail "installed profile -t nvtx: $(cat "$T/err")"
[ "$(cat "$T/maps")" = "$(dirname "$lib")/libgpuscope-collect-nolock.so" ] || fail "-t nvtx preloaded: $(cat "$T/maps")"
if command -v man >/dev/null && command -v groff >/dev/null; then
  MANPATH=$P/share/man man -w gpuscope-stats >/dev/null 2>&1 || fail "man gpuscope-stats not found in the prefix"
fi
# the Debian package holds the same files under /usr
if command -v cpack >/dev/null && command -v dpkg-deb >/dev/null; then
  (cd "$GS_BUILD_DIR" && cpack -G DEB -B "$T/pkg") >"$T/cpack.log" 2>&1 || fail "cpack -G DEB: $(tail -5 "$T/cpack.log")"
  deb=$(ls "$T"/pkg/*.deb)
  dpkg-deb -c "$deb" >"$T/deb"
  for f in ./usr/bin/gpuscope /gpuscope/libgpuscope-collect.so /gpuscope/libgpuscope-collect-nolock.so ./usr/share/man/man1/gpuscope-profile.1 \
           ./usr/share/bash-completion/completions/gpuscope; do
    grep -q -- "$f" "$T/deb" || fail "the package lacks $f"
  done
else
  echo "note: no cpack or dpkg-deb, the Debian package is not tested"
fi
echo ok
