# The progress line while an input loads: gpuscope reports, and the imports
# (Kineto JSON, nsys SQLite) through import_progress(); drawn only on a
# terminal (a pty here), never into a file or pipe.
. "$(dirname "$0")/lib.sh"
D=$GS_SOURCE_DIR/tests/data
G=$GPUSCOPE
LP=$GS_BUILD_DIR/tests/load_progress

# what the loader tells the progress callback: nsys's twelve tables as
# steps, a Kineto trace's bytes up to the file's size, a report's bytes
gzip -dc "$D/import/saxpy-mpi-cuda_nsys_perlmutter0.sqlite.gz" >"$T/saxpy.sqlite"
[ "$("$LP" "$T/saxpy.sqlite")" = "calls some, forwards, last 12 of 12" ] ||
  fail "nsys progress: $("$LP" "$T/saxpy.sqlite")"
K=$D/import/ns_resolution_rank0.json.gz
size=$(wc -c <"$K")
[ "$("$LP" "$K")" = "calls some, forwards, last $size of $size" ] || fail "kineto progress: $("$LP" "$K")"
R=$D/zoo/sync.broken.gpuscope
size=$(wc -c <"$R")
[ "$("$LP" "$R")" = "calls some, forwards, last $size of $size" ] || fail "report progress: $("$LP" "$R")"

# On a terminal: a real Kineto trace that takes over a second to load draws
# the line (it appears after half a second, util/output.c) and erases it.
BIG=$GS_SOURCE_DIR/../shared/validation/real/tracelens__mi300_xdit_sd35_compiled.json.gz
if [ ! -e "$BIG" ]; then
  echo "shared/validation is not beside the source tree: the terminal check on a real trace is skipped"
  echo ok
  exit 0
fi
command -v python3 >/dev/null || fail "python3 is needed for the pty"
# run ARGS... on a pty; its terminal output to $T/tty, the seconds it took on the last line
python3 - "$T/tty" "$G" stats -r cuda_gpu_kern_sum --format csv -o "$T/k.csv" "$BIG" <<'PY'
import os, pty, sys, time
out, argv = sys.argv[1], sys.argv[2:]
t0 = time.monotonic()
pid, fd = pty.fork()
if pid == 0:
    os.execv(argv[0], argv)
data = b""
while True:
    try:
        chunk = os.read(fd, 65536)
    except OSError:
        break
    if not chunk:
        break
    data += chunk
_, status = os.waitpid(pid, 0)
with open(out, "wb") as f:
    f.write(data)
    f.write(b"\nexit %d seconds %.2f\n" % (os.WEXITSTATUS(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status), time.monotonic() - t0))
PY
tail -1 "$T/tty" | grep -q '^exit 0 ' || fail "stats on a pty: $(tail -3 "$T/tty")"
secs=$(tail -1 "$T/tty" | awk '{ print int($4) }')
if [ "$secs" -ge 1 ]; then
  grep -aq 'gpuscope stats: reading: *[0-9]*%' "$T/tty" || fail "no progress line on a terminal: $(head -c 300 "$T/tty")"
  grep -aq $'\r\033\[K' "$T/tty" || fail "the progress line was not erased"
else
  echo "the load took under a second here: the line (after 0.5 s) is not checked"
fi
# the same run with standard error in a file: no progress line
"$G" stats -r cuda_gpu_kern_sum --format csv -o "$T/k2.csv" "$BIG" 2>"$T/err"
grep -q 'reading' "$T/err" && fail "a progress line in a file: $(cat "$T/err")"
cmp -s "$T/k.csv" "$T/k2.csv" || fail "the output on a terminal differs"
echo ok
