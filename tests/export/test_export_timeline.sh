#!/usr/bin/env bash
# Perfetto and Chrome JSON exports decode, nest, and carry every slice and flow.
. "$(dirname "$0")/lib.sh"

n=0
while read -r r; do
	slices=$(count "$r" "cuda api calls" "os runtime calls" "nvtx ranges" kernels memcpys memsets syncs)
	marks=$(count "$r" "nvtx marks")
	"$G" export "$r" --format perfetto -o "$T/t.pftrace" --force 2>/dev/null || fail "perfetto export of $r"
	python3 "$HERE/check_perfetto.py" "$T/t.pftrace" "$HERE/perfetto_min.proto" \
		--expect-slices "$slices" --expect-instants "$marks" | tee "$T/p.txt"
	"$G" export "$r" --format chrome -o "$T/t.json" --force 2>/dev/null || fail "chrome export of $r"
	python3 "$HERE/check_chrome.py" "$T/t.json" --expect-slices "$slices" --expect-instants "$marks" | tee "$T/c.txt"
	# the two formats carry the same flows and counter values
	pf=$(sed -n 's/.* \([0-9]*\) flows, \([0-9]*\) counter values.*/\1 \2/p' "$T/p.txt")
	cf=$(sed -n 's/.* \([0-9]*\) flows, \([0-9]*\) counter values.*/\1 \2/p' "$T/c.txt")
	[ "$pf" = "$cf" ] || fail "$r: perfetto has flows/counters '$pf', chrome '$cf'"
	n=$((n + 1))
done < <(test_reports)

# the generated run: every launch is linked to its GPU operation, the jittered kernel got a lane of its own
r=$T/generated.gpuscope
gpu_ops=$(count "$r" kernels memcpys memsets)
"$G" export "$r" --format perfetto -o "$T/g.pftrace" 2>/dev/null
python3 "$HERE/check_perfetto.py" "$T/g.pftrace" "$HERE/perfetto_min.proto" --expect-flows "$gpu_ops" >/dev/null
protoc --decode=perfetto.protos.Trace -I "$HERE" "$HERE/perfetto_min.proto" <"$T/g.pftrace" >"$T/g.txt"
grep -q 'name: "Stream 13 (2)"' "$T/g.txt" || fail "overlapping kernel on stream 13 was not moved to a second lane"
grep -q 'thread_name: "loader"' "$T/g.txt" || fail "no track for thread 'loader'"
grep -q 'name: "GPU 0 gpu_util"' "$T/g.txt" || fail "no GPU metric counter track"
grep -q 'name: "CPU % train"' "$T/g.txt" || fail "no thread CPU counter track"
grep -q 'name: "GPU 0 memory in use pid 4242"' "$T/g.txt" || fail "no device memory counter track"
# default output name: next to the report, suffix replaced
"$G" export "$r" --format chrome 2>/dev/null
[ -s "$T/generated.json" ] || fail "default output name generated.json not written"
echo "ok: $n report(s)"
