"""Screenshots of the demo as a visitor sees it, one per tab, for the README.

Selenium drives a headless Chromium: each tab is opened, its first (or chosen) example is loaded,
its button is pressed, and the page is captured once the status line reports the outcome.
Chromium and its driver come from the system (`apt-get install chromium chromium-driver`);
Selenium is given the driver's path and never downloads a driver or a browser.
"""

from __future__ import annotations

import base64
import contextlib
import os
import shutil
import socket
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from selenium import webdriver
from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.remote.webelement import WebElement
from selenium.webdriver.support.wait import WebDriverWait

from mmcritic.demo.ui import IMAGE_CLASS, STATUS_CLASS, create_demo, launch

CHROMIUM = "chromium"
CHROMEDRIVER = "chromedriver"
INSTALL = "apt-get install chromium chromium-driver"


class ChromiumMissing(RuntimeError):
    """Chromium or its chromedriver is not on PATH."""


@dataclass(frozen=True)
class Shot:
    """One screenshot: which tab, which example row, which button, which file."""

    tab: str
    example: int
    button: str
    file: str


@dataclass(frozen=True)
class Capture:
    """A screenshot taken and the tab's status line when it was taken."""

    path: Path
    status: str


SHOTS = (
    Shot("compare", -1, "Compare", "demo_compare.png"),  # the last example judges both orders
    Shot("score", 0, "Score", "demo_score.png"),
    Shot("best_of_n", 0, "Sample and pick the best", "demo_self_critique.png"),
)


def find_chromium() -> tuple[str, str]:
    """The paths of Chromium and chromedriver on PATH; `ChromiumMissing` names what is not."""
    browser, driver = shutil.which(CHROMIUM), shutil.which(CHROMEDRIVER)
    missing = [name for name, path in ((CHROMIUM, browser), (CHROMEDRIVER, driver)) if not path]
    if browser is None or driver is None:
        raise ChromiumMissing(f"{' and '.join(missing)} not found on PATH ({INSTALL})")
    return browser, driver


@contextlib.contextmanager
def chromium(width: int = 1280, height: int = 900) -> Iterator[WebDriver]:
    """A headless Chromium whose page is `width` x `height` CSS pixels, quit on exit."""
    browser, driver = find_chromium()
    os.environ.setdefault("SE_OFFLINE", "true")  # Selenium Manager, if ever run, downloads nothing
    options = webdriver.ChromeOptions()
    options.binary_location = browser
    for argument in (
        "--headless=new",
        "--no-sandbox",  # the sandbox cannot start as root, as in containers and CI
        "--disable-gpu",
        "--hide-scrollbars",
        f"--window-size={width},{height}",
    ):
        options.add_argument(argument)
    chrome = webdriver.Chrome(options=options, service=Service(executable_path=driver))
    try:
        chrome.execute_cdp_cmd(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
        )
        yield chrome
    finally:
        chrome.quit()


def take_screenshots(
    url: str, out_dir: Path, width: int = 1280, height: int = 900, timeout: float = 300.0
) -> list[Capture]:
    """Runs every `SHOTS` entry against the demo at `url`."""
    with chromium(width, height) as browser:
        browser.get(url)
        tabs = "button[role=tab]"
        _wait(browser, timeout, "the tabs", lambda: browser.find_elements(By.CSS_SELECTOR, tabs))
        return [_shoot(browser, shot, out_dir / shot.file, timeout) for shot in SHOTS]


def _wait(browser: WebDriver, timeout: float, what: str, condition) -> object:
    """Polls `condition` until it returns something truthy; Gradio redraws elements, so one
    that goes stale or missing meanwhile is tried again."""
    wait = WebDriverWait(
        browser,
        timeout,
        poll_frequency=0.2,
        ignored_exceptions=(NoSuchElementException, StaleElementReferenceException),
    )
    return wait.until(lambda _: condition(), f"timed out waiting for {what}")


def _panel(browser: WebDriver) -> WebElement | None:
    """The tab panel on show; Gradio keeps panels it has drawn before, hidden."""
    panels = browser.find_elements(By.CSS_SELECTOR, "[role=tabpanel]")
    return next((panel for panel in panels if panel.is_displayed()), None)


def _status(browser: WebDriver) -> str | None:
    """The panel's status line once its call has finished, else None."""
    panel = _panel(browser)
    if panel is None or panel.find_elements(
        By.CSS_SELECTOR, "[data-testid=status-tracker]:not(.hide)"
    ):
        return None
    status = panel.find_element(By.CSS_SELECTOR, f".{STATUS_CLASS} .md").text.strip()
    return status if status and not status.endswith("...") else None


def _shoot(browser: WebDriver, shot: Shot, path: Path, timeout: float) -> Capture:
    browser.find_element(By.CSS_SELECTOR, f"button[data-tab-id={shot.tab}]").click()
    rows = _wait(
        browser,
        timeout,
        f"the examples of the {shot.tab} tab",
        lambda: _panel(browser).find_elements(By.CSS_SELECTOR, "tbody tr.tr-body"),
    )
    rows[shot.example].click()
    _wait(
        browser,
        timeout,
        "the example image",
        lambda: _panel(browser).find_elements(By.CSS_SELECTOR, f".{IMAGE_CLASS} img"),
    )
    _panel(browser).find_element(By.XPATH, f".//button[normalize-space()='{shot.button}']").click()
    status = _wait(browser, timeout, f"the {shot.tab} result", lambda: _status(browser))
    # The status line keeps any warning; its pop-up would hide the page's top right corner.
    for close in browser.find_elements(By.CSS_SELECTOR, "[data-testid=toast-close]"):
        with contextlib.suppress(StaleElementReferenceException):
            close.click()
    _wait(
        browser,
        timeout,
        "the pop-ups to close",
        lambda: not browser.find_elements(By.CSS_SELECTOR, "[data-testid=toast-body]"),
    )
    return Capture(_save_page(browser, path), str(status))


def _save_page(browser: WebDriver, path: Path) -> Path:
    """Saves the whole page (not only the window) as a PNG."""
    width, height = browser.execute_script(
        "return [document.documentElement.scrollWidth, document.documentElement.scrollHeight]"
    )
    shot = browser.execute_cdp_cmd(
        "Page.captureScreenshot",
        {
            "format": "png",
            "captureBeyondViewport": True,
            "clip": {"x": 0, "y": 0, "width": width, "height": height, "scale": 1},
        },
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(base64.b64decode(shot["data"]))
    return path


def screenshot_demo(model_path: str, out_dir: Path, max_new_tokens: int = 64) -> list[Capture]:
    """Starts the demo on a free local port, takes the screenshots and stops it."""
    demo = create_demo(model_path, device="cpu", max_new_tokens=max_new_tokens)
    try:
        url = launch(demo, port=free_port(), prevent_thread_lock=True)
        return take_screenshots(url, out_dir)
    finally:
        demo.close()


def free_port() -> int:
    """A port nothing listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]
