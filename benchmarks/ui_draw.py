"""Web UI draw and pan/zoom times in headless chromium, on synthetic graphs (prints; not pass/fail).

Builds the graph of ``benchmarks/synthetic.py``, ingests it into a SQLite store,
starts ``headwater serve`` on it (127.0.0.1, free port) and opens the lineage view
in Debian's chromium (Playwright, never ``playwright install``) around a node
whose directed neighbourhood holds ``--nodes`` nodes (``maxNodes`` caps it there).
For each case it prints, over ``--repeat`` page loads:

- first draw: navigation start -> first frame painted with the laid-out graph
  (page load + API answer + layout + render), and its parts;
- pan/zoom: frame times while the view pans and zooms (60 fps = 16.7 ms), twice:
  by API calls (each frame a full redraw, the worst case) and by mouse drag and
  wheel (what a person does; Cytoscape.js then draws from a cached texture).

The large case is measured three ways: the whole answer drawn (``limit=0``), the
view the explorer draws first (the hops nearest the root that fit the draw limit,
2,000 nodes by default) and "one hop more" clicked in it, and the grown view
loaded as a first draw.

Target: 1,000 nodes drawn in <= 1.5 s, pan/zoom smooth; 10,000 nodes usable
through collapsing and depth limits.

    .venv/bin/python benchmarks/ui_draw.py [--nodes 1000] [--scale 0.02] [--repeat 5]
        [--layouts layered,dagre] [--large 10000] [--large-scale 0.2]
"""

from __future__ import annotations

import argparse
import io
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from itertools import islice
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import synthetic  # noqa: E402

from headwater.events import parse_event  # noqa: E402
from headwater.server.routes.graph_v2 import directed_lineage  # noqa: E402
from headwater.store import Store  # noqa: E402
from tests.server.live import running_server  # noqa: E402
from tests.ui.browser import chromium  # noqa: E402

# Pans and zooms the view for `frames` animation frames and returns each frame's duration.
_PAN_ZOOM = """async (frames) => {
  const times = [];
  let last = performance.now();
  for (let i = 0; i < frames; i++) {
    if (i % 20 < 10) window.headwater.panBy(7, 4);
    else window.headwater.zoomBy(i % 40 < 30 ? 1.03 : 0.97);
    await new Promise((resolve) => requestAnimationFrame(resolve));
    const now = performance.now();
    times.push(now - last);
    last = now;
  }
  return times;
}"""


def ingest(url: str, graph: synthetic.SyntheticGraph) -> Store:
    store = Store.open(url, migrate=True)
    events = synthetic.events(graph)
    while batch := list(islice(events, 500)):
        store.record([parse_event(e) for e in batch])
    return store


def pick_root(
    store: Store, graph: synthetic.SyntheticGraph, nodes: int, depth: int
) -> tuple[str, int]:
    """A dataset whose neighbourhood at ``depth`` has ``nodes`` nodes, else the biggest found."""
    ns = synthetic.NAMESPACE
    middle = [o for job in graph.jobs if synthetic.LAYERS // 3 <= job.layer <= synthetic.LAYERS // 2
              for o in job.outputs]
    best = ("", 0)
    with store.engine.connect() as conn:
        for name in middle[:: max(1, len(middle) // 40)]:
            answer = directed_lineage(conn, f"dataset:{ns}:{name}", "both", depth, None, nodes)
            size = len(answer["nodes"])
            if size > best[1]:
                best = (f"dataset:{ns}:{name}", size)
            if size >= nodes:
                break
    return best


def _stats(values: list[float]) -> str:
    ordered = sorted(values)
    return f"median {statistics.median(ordered):6.0f} ms  max {ordered[-1]:6.0f} ms"


def _metrics(cdp: Any) -> dict[str, float]:
    return {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]}


_GO = "(url) => { history.pushState(null, '', url); dispatchEvent(new PopStateEvent('popstate')); }"


# Records animation-frame intervals until window.__stopFrames() returns them.
_RECORD_FRAMES = """() => {
  const times = [];
  let last = performance.now();
  let running = true;
  const tick = (now) => { times.push(now - last); last = now; if (running) requestAnimationFrame(tick); };
  requestAnimationFrame(tick);
  window.__stopFrames = () => { running = false; return times; };
}"""


def _mouse_pan_zoom(page: Any, cdp: Any) -> tuple[list[float], float]:
    """Drag the view and turn the wheel as a person would; frame times and CPU ms per frame.

    Real input lets Cytoscape.js use its viewport shortcuts (a cached texture, edges
    hidden on big graphs), which programmatic pan/zoom calls do not trigger.
    """
    box = page.get_by_test_id("graph").bounding_box()
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    page.mouse.move(x, y)
    before = _metrics(cdp)
    page.evaluate(_RECORD_FRAMES)
    for _ in range(2):
        page.mouse.down()
        for step in range(30):
            page.mouse.move(x + 6 * step, y + 3 * step)
        page.mouse.up()
        page.mouse.move(x, y)
        for step in range(30):
            page.mouse.wheel(0, -60 if step < 15 else 60)
    times: list[float] = page.evaluate("window.__stopFrames()")
    after = _metrics(cdp)
    return times, (after["ThreadTime"] - before["ThreadTime"]) * 1000 / max(1, len(times))


def _grow(page: Any, cdp: Any) -> tuple[float, float, dict[str, Any]]:
    """Click "one hop more" in a limited view: wall and CPU ms to the painted bigger view."""
    before = _metrics(cdp)
    page.click("[data-action=grow]")
    page.wait_for_selector("[data-testid=graph][data-ready=true]", timeout=600_000)
    after = _metrics(cdp)
    timings = page.evaluate("window.headwater.timings")
    return timings["firstDrawMs"], (after["ThreadTime"] - before["ThreadTime"]) * 1000, timings


def serve_build(context: Any, build: Path) -> None:
    """Answer the page's own files (index.html, /static/...) from another build of the UI,
    the API from the server: two builds measured against one server, side by side."""
    def handle(route: Any) -> None:
        request = route.request
        path = request.url.split("://", 1)[1].split("/", 1)[1].split("?")[0]
        if request.resource_type == "document":
            route.fulfill(path=str(build / "index.html"), content_type="text/html")
        elif path.startswith("static/") and (build / path[len("static/"):]).is_file():
            route.fulfill(path=str(build / path[len("static/"):]))
        else:
            route.continue_()
    # API requests are not routed, so both builds reach the server the same way.
    context.route(lambda url: "/api/" not in url, handle)


def old_build(ref: str, into: Path) -> Path:
    """The UI bundle committed at git ``ref`` (src/headwater/ui/static), extracted."""
    archive = subprocess.run(
        ["git", "archive", ref, "src/headwater/ui/static"], capture_output=True, check=True,
        cwd=Path(__file__).resolve().parents[1],
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into / "src" / "headwater" / "ui" / "static"


def measure(
    browser: Any, base_url: str, query: dict[str, Any], repeat: int, label: str,
    grow: bool = False, build: Path | None = None,
) -> dict[str, Any]:
    """Cold page loads, then in-page navigations measured in wall and main-thread CPU time.

    The page keeps API answers for 30 s; each in-page navigation first drops them, so it
    is a first draw (API answer included). With ``grow``, "one hop more" is then clicked
    in the drawn view, which redraws from the kept answer as it does for a user.
    """
    context = browser.new_context(base_url=base_url, viewport={"width": 1400, "height": 900})
    if build is not None:
        serve_build(context, build)
    page = context.new_page()
    target = f"/lineage?{urlencode(query)}"
    ready = "[data-testid=graph][data-ready=true]"
    cold, wall, cpu, fetch, layout, paint, frames, frame_cpu = [], [], [], [], [], [], [], []
    drawn: dict[str, Any] = {}
    view: dict[str, Any] = {}
    mouse_frames: list[float] = []
    mouse_cpu: list[float] = []
    grown_wall: list[float] = []
    grown_cpu: list[float] = []
    grown: dict[str, Any] = {}
    try:
        for _ in range(max(1, repeat // 2)):
            page.goto(target)
            page.wait_for_selector(ready, timeout=600_000)
            cold.append(page.evaluate("window.headwater.timings")["sincePageStartMs"])
        cdp = context.new_cdp_session(page)
        cdp.send("Performance.enable")
        for _ in range(repeat):
            page.evaluate(_GO, "/search")
            page.wait_for_selector("h1", timeout=60_000)
            page.evaluate("window.headwater.forget()")
            before = _metrics(cdp)
            page.evaluate(_GO, target)
            page.wait_for_selector(ready, timeout=600_000)
            after = _metrics(cdp)
            timings = page.evaluate("window.headwater.timings")
            view = page.evaluate("window.headwater.view")
            drawn = timings
            wall.append(timings["firstDrawMs"])
            fetch.append(timings["fetchMs"])
            layout.append(timings["drawMs"])
            paint.append(timings["paintMs"])
            cpu.append((after["ThreadTime"] - before["ThreadTime"]) * 1000)
            before = _metrics(cdp)
            times = page.evaluate(_PAN_ZOOM, 120)
            after = _metrics(cdp)
            frames += times
            frame_cpu.append((after["ThreadTime"] - before["ThreadTime"]) * 1000 / len(times))
            times, per_frame = _mouse_pan_zoom(page, cdp)
            mouse_frames += times
            mouse_cpu.append(per_frame)
            if grow and view.get("level") is not None:
                wall_ms, cpu_ms, grown = _grow(page, cdp)
                grown_wall.append(wall_ms)
                grown_cpu.append(cpu_ms)
    finally:
        context.close()
    ordered = sorted(frames)
    p95 = ordered[int(0.95 * (len(ordered) - 1))]
    limited = (
        f" (of {view['total']:,} in the answer: {view['level']} of {view['maxLevel']} hops)"
        if view.get("level") is not None else ""
    )
    print(f"\n  {label}: {drawn['nodes']:,} nodes, {drawn['edges']:,} edges drawn{limited}")
    print(f"    cold page load -> graph painted      {_stats(cold)}  (wall)")
    print(f"    in-page navigation -> painted        {_stats(wall)}  (wall)")
    print(f"      browser main-thread CPU            {_stats(cpu)}")
    print(f"      API answer (wall)                  {_stats(fetch)}")
    print(f"      layout + scene build (wall)        {_stats(layout)}")
    print(f"      first paint (wall)                 {_stats(paint)}")
    print(f"    pan/zoom by API calls (full redraw each frame): median "
          f"{statistics.median(frames):.1f} ms, p95 {p95:.1f} ms wall; "
          f"main-thread CPU per frame median {statistics.median(frame_cpu):.1f} ms")
    ordered = sorted(mouse_frames)
    p95 = ordered[int(0.95 * (len(ordered) - 1))]
    print(f"    pan/zoom by mouse drag and wheel: {len(ordered) // max(1, len(mouse_cpu))} frames, "
          f"median {statistics.median(ordered):.1f} ms, p95 {p95:.1f} ms wall; "
          f"main-thread CPU per frame median {statistics.median(mouse_cpu):.1f} ms")
    if grown_wall:
        print(f"    \"one hop more\" clicked -> {grown['nodes']:,} nodes, {grown['edges']:,} edges "
              f"painted (no API request: kept answer)")
        print(f"      wall                               {_stats(grown_wall)}")
        print(f"      browser main-thread CPU            {_stats(grown_cpu)}")
    return view


def run_case(browser: Any, scale: float, nodes: int, repeat: int, layouts: list[str],
             large: bool, compare: Path | None = None) -> None:
    started = time.perf_counter()
    graph = synthetic.build_graph(scale, runs_per_job=2)
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{tmp}/ui.db"
        store = ingest(url, graph)
        root, size = pick_root(store, graph, nodes, 100)
        store.close()
        print(f"\n== scale {scale}: {len(graph.datasets):,} datasets, {len(graph.jobs):,} jobs "
              f"(built and ingested in {time.perf_counter() - started:.0f} s); root {root}, "
              f"neighbourhood {size:,} nodes (maxNodes {nodes:,})")
        load = os.getloadavg()
        print(f"   machine load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f} on "
              f"{os.cpu_count()} cores: wall times include waiting for a core; CPU times do not")
        base = {"nodeId": root, "direction": "both", "depth": 100, "maxNodes": nodes}
        with running_server("--db", url) as base_url:
            for layout in layouts:
                # limit=0: the whole answer, whatever its size.
                query = {**base, "layout": layout, "limit": 0}
                if compare is None:
                    measure(browser, base_url, query, repeat, f"whole answer, layout {layout}")
                    continue
                # The other build and this one alternately, one page load each at a time.
                for round_ in range(repeat):
                    for name, build in (("other build", compare), ("this build", None)):
                        measure(browser, base_url, query, 1,
                                f"{name}, round {round_ + 1}: whole answer, layout {layout}",
                                build=build)
            if large:
                view = measure(browser, base_url, base, repeat,
                               "first view past the draw limit (nearest hops, default limit)",
                               grow=True)
                if view.get("level") is not None:
                    grown = {**base, "level": view["level"] + 1}
                    measure(browser, base_url, grown, repeat, "one hop more, as a first draw")
        print(f"   load average after the case {os.getloadavg()[0]:.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=1000, help="0: skip this case")
    parser.add_argument("--scale", type=float, default=0.02)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--layouts", default="layered,dagre",
                        help="layered (headwater's), dagre (network-simplex ranker)")
    parser.add_argument("--large", type=int, default=10_000,
                        help="also a neighbourhood this big (0: skip)")
    parser.add_argument("--large-scale", type=float, default=0.2)
    parser.add_argument("--compare-build", metavar="GIT_REF",
                        help="also measure the UI bundle committed at GIT_REF, alternating "
                             "with this one against the same server (the --nodes case)")
    args = parser.parse_args()
    with chromium() as browser, tempfile.TemporaryDirectory() as other:
        compare = old_build(args.compare_build, Path(other)) if args.compare_build else None
        if args.nodes:
            run_case(browser, args.scale, args.nodes, args.repeat, args.layouts.split(","), False,
                     compare)
        if args.large:
            run_case(browser, args.large_scale, args.large, max(1, args.repeat // 2),
                     ["layered"], True)


if __name__ == "__main__":
    main()
