"""Regenerate the web page screenshot the README and the docs show (docs/assets/web-page.png).
(Not an MkDocs hook: kept here, outside the built site, beside the docs build's hooks.)

Starts `benchpress app` on a free loopback port with the snapshot bundled with the package and
an empty BENCHPRESS_HOME (so nobody's private models appear), opens a prediction from three
probe scores in headless Chromium (Debian's chromium and chromium-driver, through Selenium),
waits until the page has drawn it, and writes the PNG. Run by `make screenshot`; offline.
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OUTPUT = ROOT / "docs" / "assets" / "web-page.png"
PAGE = "/?scores=gpqa_diamond=80,hle=20,mmlu_pro=80"
WINDOW = (1440, 1000)
TIMEOUT = 60.0


def free_port() -> int:
    """A port no one listens on now (the app binds it a moment later)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_until_up(url: str, app: subprocess.Popen) -> None:
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        if app.poll() is not None:
            raise SystemExit(f"benchpress app exited with {app.returncode} before serving")
        try:
            with urllib.request.urlopen(url + "/api/versions", timeout=2):
                return
        except OSError:
            time.sleep(0.3)
    raise SystemExit(f"benchpress app did not answer at {url} within {TIMEOUT:.0f}s")


def browser(profile: str):
    """Headless Chromium at WINDOW, with both paths given so Selenium Manager never runs."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    binary = os.environ.get("BENCHPRESS_CHROMIUM") or shutil.which("chromium")
    driver = os.environ.get("BENCHPRESS_CHROMEDRIVER") or shutil.which("chromedriver")
    if not (binary and driver):
        raise SystemExit("needs Debian's chromium and chromium-driver (make browser-deps)")
    options = webdriver.ChromeOptions()
    options.binary_location = binary
    flags = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
             "--hide-scrollbars", "--force-device-scale-factor=1",
             f"--window-size={WINDOW[0]},{WINDOW[1]}", f"--user-data-dir={profile}"]  # fmt: skip
    for flag in flags:
        options.add_argument(flag)
    return webdriver.Chrome(service=Service(executable_path=driver), options=options)


def shoot(url: str, output: Path) -> None:
    """Open the page, wait for the drawn prediction, save the visible window as PNG."""
    from selenium.webdriver.support.ui import WebDriverWait

    profile = tempfile.mkdtemp(prefix="benchpress-screenshot-")
    driver = browser(profile)
    try:
        driver.get(url + PAGE)
        WebDriverWait(driver, TIMEOUT).until(
            lambda d: d.execute_script(
                "return document.body.dataset.ready === 'true' && "
                "document.querySelectorAll('#predict-chart text.row-label').length > 0"
            ),
            "the page did not draw the prediction",
        )
        time.sleep(0.5)  # the last layout settles
        output.parent.mkdir(parents=True, exist_ok=True)
        if not driver.save_screenshot(str(output)):
            raise SystemExit(f"could not write {output}")
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", type=Path, default=OUTPUT, help="PNG to write")
    args = parser.parse_args(argv)
    from predictor.util.paths import bundled_snapshot_dir

    benchpress = Path(sys.executable).with_name("benchpress")
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryDirectory(prefix="benchpress-home-") as home:
        command = [str(benchpress), "app", "--host", "127.0.0.1", "--port", str(port),
                   "--store", str(bundled_snapshot_dir()), "--quiet"]  # fmt: skip
        app = subprocess.Popen(command, env={**os.environ, "BENCHPRESS_HOME": home})
        try:
            wait_until_up(url, app)
            shoot(url, args.output)
        finally:
            app.terminate()
            try:
                app.wait(timeout=10)
            except subprocess.TimeoutExpired:
                app.kill()
    shown = args.output.relative_to(ROOT) if args.output.is_relative_to(ROOT) else args.output
    print(f"wrote {shown}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
