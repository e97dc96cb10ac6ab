"""Opens Inspect's own viewer on exported logs in headless Chromium.

    python check_viewer.py LOGDIR WORKDIR

Bundles LOGDIR with `inspect view bundle` into WORKDIR/bundle, serves the
bundle over HTTP, and opens each log's page: it must list as many rows as
the log has samples, the first sample's id among them. Then it opens that
sample: the page must show its input, the model's English, the answer and
the verdict. Screenshots of the first log's list and of the sample go to
WORKDIR. Needs Debian's chromium and chromium-driver. Exits 1 when a page
does not show what it must within two minutes.
"""

import functools
import glob
import http.server
import os
import shutil
import subprocess
import sys
import threading
import time

from inspect_ai.log import read_eval_log
from selenium import webdriver
from selenium.webdriver.chrome.service import Service

WAIT_S = 120


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def browser():
    opts = webdriver.ChromeOptions()
    for arg in ["--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1400,1000"]:
        opts.add_argument(arg)
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    if not browser or not driver:
        sys.exit("check_viewer: chromium and chromium-driver are needed: scripts/setup --tests installs them")
    opts.binary_location = browser
    return webdriver.Chrome(service=Service(driver), options=opts)


def page_showing(driver, url, wanted):
    """Opens url and waits until the page's text holds every string of wanted."""
    driver.get(url)
    deadline = time.time() + WAIT_S
    text = ""
    while time.time() < deadline:
        text = driver.find_element("tag name", "body").text
        if all(w in text for w in wanted):
            return True, text
        time.sleep(0.5)
    return False, text


def main(logdir, workdir):
    bundle = os.path.join(workdir, "bundle")
    subprocess.run([sys.executable, "-m", "inspect_ai._cli.main", "view", "bundle", "--log-dir", logdir,
                    "--output-dir", bundle, "--overwrite"], check=True, capture_output=True)
    handler = functools.partial(QuietHandler, directory=bundle)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    problems = []
    driver = browser()
    try:
        logs = sorted(glob.glob(os.path.join(logdir, "*.eval")))
        for i, path in enumerate(logs):
            log = read_eval_log(path)
            name = os.path.basename(path)
            first = log.samples[0]
            ok, text = page_showing(driver, f"{base}#/logs/{name}", [f"{len(log.samples)} rows", str(first.id)])
            print(f"viewer, {name}: {'lists' if ok else 'does not list'} its {len(log.samples)} samples")
            if not ok:
                problems.append(f"{name}: the list never showed; the page said: {text[:300]!r}")
            if i > 0:
                continue
            driver.save_screenshot(os.path.join(workdir, "viewer-samples.png"))
            # A unit whose calls were all answered (a failed call leaves no English).
            first = next(s for s in log.samples if s.output.completion and len(s.messages) >= 4)
            english = next(m.text for m in first.messages if m.role == "assistant")
            wanted = [first.input, english[:40], first.output.completion[:40], first.scores["verdict_r1"].value]
            url = f"{base}#/logs/{name}/samples/sample/{first.id}/{first.epoch}/"
            ok, text = page_showing(driver, url, wanted)
            print(f"viewer, {name}, sample {first.id}: {'shows' if ok else 'does not show'} φ0, the English, the answer and the verdict")
            if not ok:
                problems.append(f"{name}/{first.id}: the sample never showed {wanted}; the page said: {text[:300]!r}")
            driver.save_screenshot(os.path.join(workdir, "viewer-sample.png"))
    finally:
        driver.quit()
        server.shutdown()
    for p in problems:
        print("DIFFERS:", p)
    return 1 if problems or not logs else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
