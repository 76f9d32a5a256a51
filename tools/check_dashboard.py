"""Check the published asv dashboard in a real browser and take a screenshot of the GEMM graph.

    python tools/check_dashboard.py [--machine nvidia-h200] [--screenshot docs/asv_gemm.png]

Serves ``benchmarks_asv/html`` (made by ``python benchmarks_asv/publish.py``) with Python's
http.server on a free local port, opens the GEMM graph page in headless Chromium through
Selenium, waits for asv's JavaScript to fetch the graph data and draw it, and reads the series
flot plotted (``$('#main-graph').data('plot').getData()``). Exit status 0 only if at least
``--min-points`` points are plotted; the screenshot is written either way.

Needs Chromium and its driver from Debian (``apt-get install chromium chromium-driver``) and
``pip install selenium``.
"""
from __future__ import annotations

import argparse
import functools
import http.server
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# bf16 and f16 at 4096^3 and 8192^3, sm_80-class variant: four lines, one point per commit
DEFAULT_PAGE = ("gemm.Gemm.track_tflops?p-variant='sm80'&p-dtype='bf16'&p-dtype='f16'"
                "&p-size=4096&p-size=8192")

SERIES_JS = """
var plot = window.jQuery && jQuery('#main-graph').data('plot');
if (!plot) { return null; }
return plot.getData().map(function (s) {
    return [String(s.label), s.data.filter(function (p) {
        return p && p[1] !== null && isFinite(p[1]); }).length];
});
"""


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # the page fetches a few hundred graph files
        pass


def serve(directory: Path):
    handler = functools.partial(_Quiet, directory=str(directory))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def browser(chromium: str, chromedriver: str, width: int, height: int):
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    opts = Options()
    opts.binary_location = chromium
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage",
                f"--window-size={width},{height}"):
        opts.add_argument(arg)  # no sandbox: Chromium refuses to sandbox as root
    return webdriver.Chrome(service=Service(chromedriver), options=opts)


def plotted_series(driver, timeout: float, min_points: int):
    """[(label, points)] once the graph has at least ``min_points`` points, or the last seen
    series when ``timeout`` runs out (an error page or an empty graph)."""
    series, end = None, time.monotonic() + timeout
    while time.monotonic() < end:
        if driver.current_url.split("#")[0].endswith("error.html"):
            raise SystemExit("check_dashboard: the page loaded asv's error.html: a script did "
                             "not load (was the dashboard made by benchmarks_asv/publish.py?)")
        series = driver.execute_script(SERIES_JS)
        if series and sum(n for _, n in series) >= min_points:
            break
        time.sleep(0.5)
    return series or []


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--html", type=Path, default=ROOT / "benchmarks_asv" / "html")
    ap.add_argument("--page", default=DEFAULT_PAGE, help="the part of the URL after '#'")
    ap.add_argument("--machine", help="show this asv machine only (default: every machine)")
    ap.add_argument("--screenshot", type=Path, default=ROOT / "docs" / "asv_gemm.png")
    ap.add_argument("--min-points", type=int, default=5)
    ap.add_argument("--timeout", type=float, default=60.0)
    ap.add_argument("--chromium", default="/usr/bin/chromium")
    ap.add_argument("--chromedriver", default="/usr/bin/chromedriver")
    ap.add_argument("--size", default="1400x900", help="window size, WIDTHxHEIGHT")
    args = ap.parse_args(argv)
    if not (args.html / "index.html").is_file():
        raise SystemExit(f"check_dashboard: no {args.html}/index.html: run "
                         "python benchmarks_asv/publish.py first")
    page = args.page + (f"&machine={args.machine}" if args.machine else "")
    server = serve(args.html)
    url = f"http://127.0.0.1:{server.server_address[1]}/index.html#{page}"
    driver = browser(args.chromium, args.chromedriver, *map(int, args.size.split("x")))
    try:
        driver.get(url)
        series = plotted_series(driver, args.timeout, args.min_points)
        time.sleep(1.0)  # let flot finish drawing the overview and axis labels
        args.screenshot.parent.mkdir(parents=True, exist_ok=True)
        driver.save_screenshot(str(args.screenshot))
    finally:
        driver.quit()
        server.shutdown()
    total = sum(n for _, n in series)
    print(f"check_dashboard: {url}")
    for label, n in series:
        print(f"  {n:4d} points  {label}")
    print(f"check_dashboard: {total} points in {len(series)} series; "
          f"screenshot {args.screenshot}")
    if total < args.min_points:
        print(f"check_dashboard: FAILED: fewer than {args.min_points} points plotted")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
