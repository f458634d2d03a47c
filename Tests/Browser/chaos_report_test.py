#!/usr/bin/env python3
"""Opens a `switchyard chaos --report DIR` page in a real headless Chromium (Selenium) from its file:// URL and checks
that it works offline: no console error (level SEVERE), no resource fetched, the three charts drawn by Chart.js (a canvas of non-zero size
each, and as many Chart instances), every fault window of report.json drawn and named on the charts and listed in the
faults table, the checkers' verdicts, the seed. With --screenshot FILE it saves the page there.

Run by Tests/SwitchyardCLITests/ChaosReportTests.swift, which runs the experiment first. The whole run has a deadline
(SIGALRM), and Chromium is always quit.
"""
import argparse
import json
import os
import signal
import sys

# The studio's script drives Chromium the same way: its driver and its bounded wait.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from studio_test import Failure, chromium, wait  # noqa: E402


def log(text):
    print(f"chaos_report_test: {text}", flush=True)


def check(driver, folder, screenshot):
    with open(os.path.join(folder, "report.json"), encoding="utf-8") as handle:
        report = json.load(handle)
    # Only file:// may be fetched: a request elsewhere would be a page that does not work offline.
    driver.get("file://" + os.path.abspath(os.path.join(folder, "report.html")))
    wait("the charts", lambda: driver.execute_script("return window.chaosReport && window.chaosReport.charts.length"))
    charts = driver.execute_script("""
        return [...document.querySelectorAll('canvas')].map((canvas) => ({
          id: canvas.id, width: canvas.width, height: canvas.height, chart: !!Chart.getChart(canvas) }));""")
    if [chart["id"] for chart in charts] != ["latency", "throughput", "plugins"]:
        raise Failure(f"expected the canvases latency, throughput and plugins: {charts}")
    for chart in charts:
        if chart["width"] <= 0 or chart["height"] <= 0 or not chart["chart"]:
            raise Failure(f"a chart was not drawn: {chart}")
    instances = driver.execute_script("return Object.keys(Chart.instances).length")
    if instances != 3:
        raise Failure(f"expected 3 Chart instances, found {instances}")
    sizes = ", ".join("%s %dx%d" % (chart["id"], chart["width"], chart["height"]) for chart in charts)
    log(f"ok: 3 charts drawn ({sizes})")

    drawn = driver.execute_script("return window.chaosReport.drawn.labels")
    listed = [cell.text for cell in driver.find_elements("css selector", "#faults .fault-label")]
    labels = [window["label"] for window in report["faultWindows"]]
    if not labels:
        raise Failure("report.json has no fault window: the experiment injected nothing")
    for label in labels:
        if label not in drawn:
            raise Failure(f"the fault window {label!r} was not drawn on the latency chart (drawn: {drawn})")
        if label not in listed:
            raise Failure(f"the fault {label!r} is not in the faults table (listed: {listed})")
    log(f"ok: {len(labels)} fault windows shaded and named: {', '.join(labels)}")

    lanes = driver.execute_script("return window.chaosReport.charts[2].scales.y.getLabels()")
    if lanes != [plugin["name"] for plugin in report["plugins"]]:
        raise Failure(f"the plugin lanes {lanes} are not report.json's plugins")
    restarts = sum(len(plugin["restarts"]) for plugin in report["plugins"])
    marked = driver.execute_script("return window.chaosReport.drawn.restarts")
    if marked < restarts:
        raise Failure(f"{restarts} restarts in report.json, {marked} marked on the lanes")
    log(f"ok: {len(lanes)} plugin lanes, {restarts} restarts marked")

    verdicts = {row.get_attribute("data-checker"): row.get_attribute("class")
                for row in driver.find_elements("css selector", "#checkers tr[data-checker]")}
    expected = {result["checker"]: "pass" if result["passed"] else "fail" for result in report["checkers"]}
    if verdicts != expected:
        raise Failure(f"the checkers table {verdicts} is not report.json's {expected}")
    seed = driver.find_element("css selector", "#seed").text
    if seed != str(report["seed"]):
        raise Failure(f"the page shows seed {seed!r}, report.json {report['seed']}")
    log(f"ok: checkers {verdicts}, seed {seed}")

    fetched = driver.execute_script("return performance.getEntriesByType('resource').map((entry) => entry.name)")
    if fetched:
        raise Failure(f"the page fetched {fetched}: it must carry everything it needs")
    errors = [entry["message"] for entry in driver.get_log("browser") if entry.get("level") == "SEVERE"]
    if errors:
        raise Failure("the page logged console errors:\n  " + "\n  ".join(errors))
    log("ok: no console error, nothing fetched")
    if screenshot:
        # The header, the three charts and the checkers: what the README shows.
        driver.set_window_size(1280, 1500)
        wait("the charts to fit the new size", lambda: driver.execute_script(
            "return window.chaosReport.charts.every((chart) => chart.width === chart.canvas.parentNode.clientWidth)"))
        os.makedirs(os.path.dirname(os.path.abspath(screenshot)), exist_ok=True)
        driver.save_screenshot(screenshot)
        log(f"screenshot: {screenshot}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("folder", help="the --report DIR of a chaos run")
    parser.add_argument("--screenshot")
    parser.add_argument("--deadline", type=int, default=120)
    args = parser.parse_args()

    def expired(*_):
        raise Failure(f"the check did not finish within {args.deadline} s")

    signal.signal(signal.SIGALRM, expired)
    signal.alarm(args.deadline)
    driver = chromium("1280,900")
    try:
        check(driver, args.folder, args.screenshot)
        log("passed")
        return 0
    except Failure as failure:
        print(f"chaos_report_test: FAILED: {failure}", file=sys.stderr, flush=True)
        return 1
    finally:
        signal.alarm(0)
        driver.quit()


if __name__ == "__main__":
    sys.exit(main())
