# info and dump of a sample report written by the real writer: exact expected text.
. "$(dirname "$0")/lib.sh"
"$GS_BUILD_DIR/tests/mk_sample" "$T/s.gpuscope"
"$GPUSCOPE" info "$T/s.gpuscope" | sed "s#$T/##" >"$T/info"
expect_cmp "$(dirname "$0")/expect/info.txt" "$T/info"
"$GPUSCOPE" dump "$T/s.gpuscope" >"$T/dump"
expect_cmp "$(dirname "$0")/expect/dump.txt" "$T/dump"
"$GPUSCOPE" dump --type kernel,memcpy "$T/s.gpuscope" >"$T/dump2"
[ "$(wc -l <"$T/dump2")" = 6 ] || fail "dump --type kernel,memcpy: $(wc -l <"$T/dump2") lines, expected 6"
! grep -v -E '^[0-9]+ (kernel|memcpy) ' "$T/dump2" || fail "dump --type printed other types"
"$GPUSCOPE" info --format json "$T/s.gpuscope" | python3 -c '
import json,sys
d=json.load(sys.stdin)
assert d["counts"]["kernels"]==3, d["counts"]
assert d["counts"]["memcpys"]==3
assert d["processes"][0]["pid"]==4242 and d["processes"][0]["ended"] is True
assert d["drops"]["buffer"]==0
'
# merge of two copies keeps both processes
cp "$T/s.gpuscope" "$T/s2.gpuscope"
"$GPUSCOPE" merge -o "$T/m" "$T/s.gpuscope" "$T/s2.gpuscope" 2>/dev/null
"$GPUSCOPE" info --format json "$T/m.gpuscope" | python3 -c '
import json,sys
d=json.load(sys.stdin)
assert len(d["processes"])==2 and d["counts"]["kernels"]==6, d'
echo ok
