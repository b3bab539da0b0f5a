#!/usr/bin/env python3
"""html_check.py CHROME OUTDIR PAGE... - drive headless Chromium over its
DevTools pipe (--remote-debugging-pipe: JSON messages ended by NUL on fds 3
and 4, no library) and check gpuscope's HTML report at two widths.

For each PAGE and each width (WIDTHS), once the page's script has set
window.__reportReady:
  - no console message, no uncaught exception, no network request
    (anything but file: and data: URLs);
  - the parts: a timeline canvas with slices drawn on it, its view the
    analysed window; one step bar per step ("window" without steps); every
    finding; the kernel table, names on one line with the full name on
    hover; a memory chart when the page's data has memory series; one chart
    per GPU metric that varies, and every metric charted does vary;
  - readable axes: no tick label in exponent notation or empty, none
    outside its chart; no horizontal scroll of the page;
  - the timeline zooms on the wheel, pans on a drag, and shows a tooltip
    with the slice's name under the mouse;
  - clicking a finding's "show on the timeline" zooms the timeline to the
    finding's interval and scrolls it into view;
  - a screenshot (OUTDIR/NAME-WIDTH.png) for png_check.py.

    html_check.py --control CHROME OUTDIR PAGE
checks that the console and network checks see a page's console.error and
its request (the negative control): exit 0 when both were seen.
"""
import base64
import json
import os
import subprocess
import sys
import time

WIDTHS = (1280, 720)


class Browser:
    def __init__(self, chrome, profile):
        r1, w1 = os.pipe()  # commands: we write, the browser reads fd 3
        r2, w2 = os.pipe()  # replies and events: the browser writes fd 4

        def child():
            # through fresh copies: a pipe end that already is fd 3 keeps its close-on-exec flag
            a, b = os.dup(r1), os.dup(w2)
            os.dup2(a, 3)
            os.dup2(b, 4)

        self.p = subprocess.Popen(
            [chrome, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
             "--remote-debugging-pipe", "--user-data-dir=" + profile, "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            preexec_fn=child, close_fds=False)
        os.close(r1)
        os.close(w2)
        self.w, self.r = w1, r2
        self.buf = b""
        self.next_id = 0
        self.events = []
        self.session = None

    def _read(self, timeout):
        import select
        end = time.time() + timeout
        while b"\0" not in self.buf:
            left = end - time.time()
            if left <= 0 or not select.select([self.r], [], [], left)[0]:
                raise TimeoutError("no message from the browser")
            chunk = os.read(self.r, 1 << 20)
            if not chunk:
                raise EOFError("the browser closed its pipe")
            self.buf += chunk
        msg, self.buf = self.buf.split(b"\0", 1)
        return json.loads(msg)

    def call(self, method, params=None, session=True, timeout=60):
        self.next_id += 1
        m = {"id": self.next_id, "method": method, "params": params or {}}
        if session and self.session:
            m["sessionId"] = self.session
        os.write(self.w, json.dumps(m).encode() + b"\0")
        while True:
            r = self._read(timeout)
            if r.get("id") == self.next_id:
                if "error" in r:
                    raise RuntimeError("%s: %s" % (method, r["error"]))
                return r.get("result", {})
            self.events.append(r)

    def wait_event(self, name, timeout=60):
        for i, e in enumerate(self.events):
            if e.get("method") == name:
                return self.events.pop(i)
        end = time.time() + timeout
        while time.time() < end:
            e = self._read(end - time.time())
            if e.get("method") == name:
                return e
            self.events.append(e)
        raise TimeoutError(name)

    def eval(self, expr):
        r = self.call("Runtime.evaluate", {"expression": expr, "returnByValue": True, "awaitPromise": True})
        if "exceptionDetails" in r:
            raise RuntimeError("evaluate: %s" % r["exceptionDetails"].get("text"))
        return r["result"].get("value")

    def open(self, url, width):
        t = self.call("Target.createTarget", {"url": "about:blank"}, session=False)
        self.session = self.call("Target.attachToTarget", {"targetId": t["targetId"], "flatten": True},
                                 session=False)["sessionId"]
        self.target = t["targetId"]
        for d in ("Page", "Runtime", "Log", "Network"):
            self.call(d + ".enable")
        self.call("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": 900, "deviceScaleFactor": 1, "mobile": False})
        self.events = []
        self.call("Page.navigate", {"url": url})
        self.wait_event("Page.loadEventFired")
        end = time.time() + 30
        while not self.eval("window.__reportReady === true"):
            if time.time() > end:
                raise TimeoutError("the page's script never set window.__reportReady")
            time.sleep(0.1)

    def close_page(self):
        self.call("Target.closeTarget", {"targetId": self.target}, session=False)
        self.session = None

    def problems(self):
        """Console messages, exceptions and network requests seen so far."""
        out = []
        for e in self.events:
            m, p = e.get("method"), e.get("params", {})
            if m == "Runtime.consoleAPICalled":
                out.append("console.%s: %s" % (p.get("type"), " ".join(str(a.get("value", a.get("description")))
                                                                        for a in p.get("args", []))))
            elif m == "Runtime.exceptionThrown":
                out.append("exception: %s" % p.get("exceptionDetails", {}).get("exception", {}).get("description"))
            elif m == "Log.entryAdded" and p.get("entry", {}).get("level") in ("error", "warning"):
                out.append("log: %s" % p["entry"].get("text"))
            elif m == "Network.requestWillBeSent":
                url = p.get("request", {}).get("url", "")
                if not url.startswith(("file:", "data:")):
                    out.append("request: %s" % url)
        return out

    def mouse(self, kind, x, y, **kw):
        p = {"type": kind, "x": x, "y": y}
        p.update(kw)
        self.call("Input.dispatchMouseEvent", p)

    def quit(self):
        try:
            self.call("Browser.close", session=False, timeout=10)
        except Exception:
            pass
        try:
            self.p.wait(10)
        except subprocess.TimeoutExpired:
            self.p.kill()


PARTS = r"""(() => {
  const r = {}, D = JSON.parse(document.getElementById('gs-data').textContent);
  const tl = document.getElementById('tl'), c = document.getElementById('tlc');
  r.nev = D.ev.length; r.nmem = D.mem.length; r.nmetrics = D.metrics.length;
  r.metricsConstant = D.metrics.filter(s => Math.min(...s.pts.map(p => p[1])) === Math.max(...s.pts.map(p => p[1]))).length;
  r.canvas = [c.clientWidth, c.clientHeight];
  const g = c.getContext('2d'), img = g.getImageData(0, 0, c.width, c.height).data;
  let drawn = 0;
  for (let i = 0; i < img.length; i += 4)  /* the slice colours: saturated pixels */
    if (Math.max(img[i], img[i+1], img[i+2]) - Math.min(img[i], img[i+1], img[i+2]) > 60) drawn++;
  r.drawn = drawn;
  r.view = [+tl.dataset.viewStart, +tl.dataset.viewEnd];
  r.window = [+tl.dataset.windowStart, +tl.dataset.windowEnd, D.ws, D.we];
  r.steps = document.querySelectorAll('.steps .step').length;
  r.stepsWithBars = [...document.querySelectorAll('.steps .step')].filter(s => s.querySelectorAll('.bar i').length > 0).length;
  r.findings = document.querySelectorAll('.finding').length;
  r.jumps = document.querySelectorAll('.finding[data-start] .jump').length;
  const cells = [...document.querySelectorAll("table[data-report='cuda_gpu_kern_sum'] td.s")];
  r.kernelCells = cells.length;
  r.kernelWrapped = cells.filter(td => td.getBoundingClientRect().height > 2.2 * parseFloat(getComputedStyle(td).fontSize) + 8).length;
  r.kernelNoTitle = cells.filter(td => !td.title || td.title.length < td.textContent.replace(/\u2026$/, '').length).length;
  const ticks = [...document.querySelectorAll('svg text.tick')];
  r.ticks = ticks.length;
  r.badTicks = ticks.map(t => t.textContent).filter(s => /\d[eE][+-]?\d/.test(s) || /^\s*$/.test(s));
  r.clipped = ticks.filter(t => { const b = t.getBBox(), s = t.ownerSVGElement;
    return b.x < -0.5 || b.y < -0.5 || b.x + b.width > +s.getAttribute('width') + 0.5 || b.y + b.height > +s.getAttribute('height') + 0.5; })
    .map(t => t.textContent);
  r.badConst = [...document.querySelectorAll('#constants td')].map(t => t.textContent).filter(s => /\d[eE][+-]?\d/.test(s));
  r.memCharts = document.querySelectorAll('#memcharts svg').length;
  r.allocSeries = D.mem.filter(s => / \(PyTorch allocator/.test(s.name)).length;
  const rt = document.getElementById('ranks-table');
  r.rankRows = rt ? rt.querySelectorAll('tr[data-rank]').length : 0;
  r.rankBadRows = rt ? [...rt.querySelectorAll('tr[data-rank]')].filter(tr => tr.children.length !== 8 ||
    tr.getBoundingClientRect().height > 3 * parseFloat(getComputedStyle(tr).fontSize) + 8).length : 0;
  r.metricCharts = document.querySelectorAll('#metcharts svg').length;
  r.overflowX = document.documentElement.scrollWidth - window.innerWidth;
  return JSON.stringify(r);
})()"""

def fail(msg):
    print("html_check: FAIL: " + msg)
    sys.exit(1)


def check_page(b, page, outdir, width):
    name = os.path.splitext(os.path.basename(page))[0]
    b.open("file://" + os.path.abspath(page), width)
    r = json.loads(b.eval(PARTS))
    what = "%s at %d px" % (name, width)
    if r["canvas"][0] < 200 or r["canvas"][1] < 20:
        fail("%s: timeline canvas %s" % (what, r["canvas"]))
    if r["nev"] and r["drawn"] < 50:
        fail("%s: %d slices in the data but %d coloured pixels on the timeline" % (what, r["nev"], r["drawn"]))
    if r["view"] != r["window"][:2] or r["window"][:2] != r["window"][2:]:
        fail("%s: the timeline's view %s is not the analysed window %s" % (what, r["view"], r["window"]))
    if r["steps"] < 1 or r["stepsWithBars"] != r["steps"]:
        fail("%s: %d step rows, %d with bars" % (what, r["steps"], r["stepsWithBars"]))
    if r["kernelWrapped"] or r["kernelNoTitle"]:
        fail("%s: %d kernel names wrap, %d have no full name on hover" % (what, r["kernelWrapped"], r["kernelNoTitle"]))
    if r["badTicks"] or r["clipped"]:
        fail("%s: tick labels unreadable %s or clipped %s" % (what, r["badTicks"][:5], r["clipped"][:5]))
    if r["badConst"]:
        fail("%s: constants in exponent notation %s" % (what, r["badConst"][:5]))
    if r["memCharts"] != (1 if r["nmem"] else 0):
        fail("%s: %d memory charts for %d series" % (what, r["memCharts"], r["nmem"]))
    if r["metricCharts"] != r["nmetrics"] or r["metricsConstant"]:
        fail("%s: %d metric charts for %d varying series (%d constant ones charted)" %
             (what, r["metricCharts"], r["nmetrics"], r["metricsConstant"]))
    if r["rankBadRows"]:
        fail("%s: %d rows of the per-rank table lack cells or wrap" % (what, r["rankBadRows"]))
    if r["overflowX"] > 1:
        fail("%s: the page scrolls sideways by %d px" % (what, r["overflowX"]))

    # the page as it opens, for png_check.py
    shot = b.call("Page.captureScreenshot", {"format": "png"})
    png = os.path.join(outdir, "%s-%d.png" % (name, width))
    with open(png, "wb") as fh:
        fh.write(base64.b64decode(shot["data"]))

    # zoom with the wheel, pan with a drag, a tooltip under the mouse
    rect = json.loads(b.eval("JSON.stringify((() => { const c = document.getElementById('tlc'); "
                             "c.scrollIntoView({block: 'center'}); const r = c.getBoundingClientRect(); "
                             "return [r.left, r.top, r.width, r.height]; })())"))
    cx, cy = rect[0] + rect[2] * 0.6, rect[1] + 9
    span0 = r["view"][1] - r["view"][0]
    b.mouse("mouseWheel", cx, cy, deltaX=0, deltaY=-300)
    v = json.loads(b.eval("JSON.stringify([+tl.dataset.viewStart, +tl.dataset.viewEnd])".replace(
        "tl.", "document.getElementById('tl').")))
    if not (v[1] - v[0] < span0):
        fail("%s: the wheel did not zoom in (%s -> %s)" % (what, r["view"], v))
    b.mouse("mousePressed", cx, cy, button="left", clickCount=1)
    b.mouse("mouseMoved", cx - 100, cy, button="left")
    b.mouse("mouseReleased", cx - 100, cy, button="left", clickCount=1)
    v2 = json.loads(b.eval("JSON.stringify([+document.getElementById('tl').dataset.viewStart, "
                           "+document.getElementById('tl').dataset.viewEnd])"))
    if v2 == v and v[1] < r["window"][1]:
        fail("%s: dragging did not pan (%s)" % (what, v))
    b.eval("document.getElementById('zreset').click(), 1")
    if r["nev"]:
        # the longest slice of the first lane that has one: hover its middle
        s = json.loads(b.eval(r"""JSON.stringify((() => {
          const D = JSON.parse(document.getElementById('gs-data').textContent);
          const c = document.getElementById('tlc'), q = c.getBoundingClientRect();
          const lane = D.ev[0][0]; let best = null;
          for (const e of D.ev) if (e[0] === lane && (!best || e[2] > best[2])) best = e;
          return {lane: lane, s: best[1], d: best[2], name: D.names[best[4]], rect: [q.left, q.top, q.width, q.height]};
        })())"""))
        # the lane labels' width: the timeline's plot starts where the script says
        x0 = b.eval("(() => { const c = document.getElementById('tlc'); return c.clientWidth; })()")
        lw = b.eval("(() => { const D = JSON.parse(document.getElementById('gs-data').textContent); "
                    "const g = document.createElement('canvas').getContext('2d'); g.font = '11px sans-serif'; "
                    "return Math.min(Math.max(40, ...D.lanes.map(l => g.measureText(l).width + 10)), 190); })()")
        pw = max(x0 - lw - 8, 50)
        t = s["s"] + s["d"] / 2
        y = s["rect"][1] + s["lane"] * 18 + 9
        for _ in range(40):
            # zoom in on the slice (the wheel, centred on it) until it is a few pixels wide
            vs = json.loads(b.eval("JSON.stringify([+document.getElementById('tl').dataset.viewStart, "
                                   "+document.getElementById('tl').dataset.viewEnd])"))
            x = s["rect"][0] + lw + (t - vs[0]) / (vs[1] - vs[0]) * pw
            if s["d"] / (vs[1] - vs[0]) * pw >= 6 or vs[1] - vs[0] <= 1000:
                break
            b.mouse("mouseWheel", x, y, deltaX=0, deltaY=-300)
        b.mouse("mouseMoved", x, y)
        tip = b.eval("(() => { const t = document.getElementById('tip'); "
                     "return t.style.display === 'block' ? t.textContent : ''; })()")
        if s["name"] not in tip:
            fail("%s: no tooltip naming '%s' over its slice (tooltip: '%s')" % (what, s["name"][:60], tip[:80]))

    # a click on a finding's link shows its interval on the timeline
    if r["jumps"]:
        f = json.loads(b.eval(r"""JSON.stringify((() => {
          const f = document.querySelector('.finding[data-start]'), a = f.querySelector('.jump');
          window.scrollTo(0, document.body.scrollHeight);
          a.scrollIntoView({block: 'center'});
          const q = a.getBoundingClientRect();
          return {id: f.id, s: +f.dataset.start, e: +f.dataset.end, x: q.left + 5, y: q.top + q.height / 2};
        })())"""))
        before = b.eval("document.getElementById('timeline').getBoundingClientRect().top")
        b.mouse("mousePressed", f["x"], f["y"], button="left", clickCount=1)
        b.mouse("mouseReleased", f["x"], f["y"], button="left", clickCount=1)
        time.sleep(0.2)
        st = json.loads(b.eval(r"""JSON.stringify((() => { const tl = document.getElementById('tl');
          return {v: [+tl.dataset.viewStart, +tl.dataset.viewEnd], focus: tl.dataset.focus || '',
                  top: document.getElementById('timeline').getBoundingClientRect().top, h: window.innerHeight}; })())"""))
        ws, we = r["window"][0], r["window"][1]
        fs, fe = max(f["s"], ws), min(f["e"], we)
        v = st["v"]
        if st["focus"] != f["id"]:
            fail("%s: clicking %s did not focus it on the timeline" % (what, f["id"]))
        if not (v[0] <= fs + 1 and v[1] >= fe - 1):
            fail("%s: the view %s does not hold %s's interval [%d, %d]" % (what, v, f["id"], fs, fe))
        if (fe - fs) * 1.2 + 2000 < (we - ws) * 0.5 and not (v[1] - v[0] < (we - ws)):
            fail("%s: the timeline did not zoom to %s (view %s, window [%d, %d])" % (what, f["id"], v, ws, we))
        # (a page so short that the timeline stays in view when scrolled to its end needs no scroll)
        if not (-2 <= st["top"] < st["h"] * 0.5) or (before == st["top"] and not (-2 <= before < st["h"] * 0.5)):
            fail("%s: the timeline was not scrolled into view (top %s, was %s)" % (what, st["top"], before))
    p = b.problems()
    if p:
        fail("%s: %s" % (what, "; ".join(p[:5])))
    b.close_page()
    print("ok: %s: %d slices, %d steps, %d findings (%d clickable), %d kernel names, %d ticks, %d memory and "
          "%d metric charts, %d allocator series, %d ranks" % (what, r["nev"], r["steps"], r["findings"], r["jumps"],
                                                             r["kernelCells"], r["ticks"], r["memCharts"],
                                                             r["metricCharts"], r["allocSeries"], r["rankRows"]))
    return png


def main():
    args = sys.argv[1:]
    control = args and args[0] == "--control"
    if control:
        args = args[1:]
    chrome, outdir, pages = args[0], args[1], args[2:]
    b = Browser(chrome, os.path.join(outdir, "profile"))
    try:
        if control:
            b.call("Target.getTargets", session=False)
            t = b.call("Target.createTarget", {"url": "about:blank"}, session=False)
            b.session = b.call("Target.attachToTarget", {"targetId": t["targetId"], "flatten": True},
                               session=False)["sessionId"]
            for d in ("Page", "Runtime", "Log", "Network"):
                b.call(d + ".enable")
            b.call("Page.navigate", {"url": "file://" + os.path.abspath(pages[0])})
            b.wait_event("Page.loadEventFired")
            time.sleep(0.5)
            b.eval("1")
            p = b.problems()
            seen_console = any(x.startswith("console.") for x in p)
            seen_request = any(x.startswith("request:") for x in p)
            print("control: console seen %s, request seen %s" % (seen_console, seen_request))
            sys.exit(0 if seen_console and seen_request else 1)
        for page in pages:
            for w in WIDTHS:
                print(check_page(b, page, outdir, w))
    finally:
        b.quit()


if __name__ == "__main__":
    main()
