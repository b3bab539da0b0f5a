#!/usr/bin/env bash
# The Prometheus endpoint under a slow-loris attack (issue 19, item 6): one
# client (127.0.0.2) holds 2,000 connections that send a request a byte at a
# time and never finish it; meanwhile /metrics, asked from 127.0.0.1, must
# answer 200 within 1 s, five times over about 4 s.  Loopback only; the
# attack and the monitor stop by themselves (the script kills the monitor,
# and a 60 s timeout bounds the whole).  Also: `--prometheus PORT` alone
# listens on 127.0.0.1, not on every interface.
set -u
G=${GPUSCOPE:?}
D=${GS_SOURCE_DIR:?}/tests/data/nvml
command -v python3 >/dev/null || { echo "SKIP: no python3"; exit 77; }
W=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill $pid 2>/dev/null; rm -rf "$W"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# start_monitor LISTEN: a looping replay serving LISTEN; sets pid and port
start_monitor() {
	"$G" monitor --replay "$D/h200.load.jsonl" --replay-loop --interval 100 --format csv \
		--prometheus "$1" >/dev/null 2>"$W/err" &
	pid=$!
	port=
	for _ in $(seq 100); do
		port=$(sed -n 's/.*serving Prometheus metrics on port \([0-9]*\) at \/metrics$/\1/p' "$W/err")
		[ -n "$port" ] && break
		sleep 0.05
	done
	[ -n "$port" ] || { fail "no port announced: $(cat "$W/err")"; exit 1; }
}
stop_monitor() { kill $pid; wait $pid 2>/dev/null; pid=; }

# the default address: a listening socket on 127.0.0.1 (0100007F in /proc/net/tcp)
start_monitor 0
hexport=$(printf '%04X' "$port")
grep -q "^ *[0-9]*: 0100007F:$hexport 00000000:0000 0A" /proc/net/tcp ||
	fail "'--prometheus 0' does not listen on 127.0.0.1 only: $(grep ":$hexport " /proc/net/tcp)"
stop_monitor

start_monitor 127.0.0.1:0
timeout 60 python3 - "$port" >"$W/py" 2>&1 <<'PY'
import resource, socket, sys, time
port = int(sys.argv[1])
N = 2000
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
if hard != resource.RLIM_INFINITY and hard < N + 100:
    print("SKIP: RLIMIT_NOFILE hard limit %d is below %d" % (hard, N + 100)); sys.exit(77)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
req = b"GET /metrics HTTP/1.1\r\nHost: x\r\nUser-Agent: slow"
slow = []
def open_slow():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind(("127.0.0.2", 0))
    s.setblocking(False)
    try:
        s.connect(("127.0.0.1", port))
    except BlockingIOError:
        pass
    except OSError:
        s.close(); return None
    return [s, 0]
for _ in range(N):
    c = open_slow()
    if c: slow.append(c)
def trickle():
    # one more byte on every slow connection; reopen the ones the server closed
    global slow
    for i, c in enumerate(slow):
        try:
            if c[1] < len(req):
                c[0].send(req[c[1]:c[1] + 1]); c[1] += 1
            else:
                c[0].send(b"x")
        except (BlockingIOError, InterruptedError):
            pass
        except OSError:
            c[0].close()
            n = open_slow()
            slow[i] = n if n else c
def scrape():
    t0 = time.monotonic()
    s = socket.create_connection(("127.0.0.1", port), timeout=1.0)
    s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    data = b""
    while True:
        b = s.recv(65536)
        if not b: break
        data += b
    s.close()
    return time.monotonic() - t0, data
bad = 0
for k in range(5):
    trickle()
    time.sleep(0.4)
    trickle()
    try:
        dt, data = scrape()
        ok = data.startswith(b"HTTP/1.1 200") and b"DCGM_FI_DEV_GPU_UTIL" in data
        print("scrape %d: %.3f s, %s, %d slow connections held" %
              (k, dt, "200" if ok else repr(data[:40]), len(slow)))
        if not ok or dt > 1.0: bad += 1
    except OSError as e:
        print("scrape %d: failed: %s" % (k, e)); bad += 1
for c in slow: c[0].close()
sys.exit(1 if bad else 0)
PY
rc=$?
cat "$W/py"
[ $rc = 77 ] && exit 77
[ $rc = 0 ] || fail "/metrics did not answer within 1 s during the attack (status $rc)"
kill -0 $pid 2>/dev/null || fail "the monitor died during the attack: $(cat "$W/err")"
stop_monitor
echo "failures: $fails"
[ $fails = 0 ]
