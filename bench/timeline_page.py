#!/usr/bin/env python3
"""Benchmark: the HTML flame graph page with the timeline, for a synthetic recording of 10 M
execution samples (`cargo run --example synth`: 20,000 stacks, 16 threads, 100 s).

For each `hprof` given (this worktree's release build, and with --baseline another, e.g. main's):
`hprof convert` to HTML (wall, CPU, peak RSS) and the page's size; then, interleaved (one load
of each page in turn, --runs times), in headless Chromium: the time from navigation to the
page's load event (every script run: the timeline and the whole profile's flame graph drawn),
the time the first dragged range takes to draw (10 % to 90 % of the span, through
`hprofTimeline.select`, as a drag does), then that range's callers view (`.callers(true)`, the
button) and a search in it (`.search("m12")`, the box: every `m12*` method marked and summed).
The load average is printed with each run.

    bench/timeline_page.py [--runs N] [--baseline PATH-TO-OTHER-HPROF] [--samples N]

bench/jfr.py takes `page_load` from here for its own row (the load, range, callers and search times).
"""
import argparse, os, re, shutil, statistics, subprocess, sys, tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

# Appended before </body>: at the load event, the time since navigation; then the first range
# (10 % to 90 % of the span) drawn, its callers view, a search in it, and the time each took.
# All in the title, which --dump-dom prints.
PROBE = ('<script>window.addEventListener("load",function(){setTimeout(function(){'
         'var load=performance.now(),t=window.hprofTimeline,range=-1,callers=-1,search=-1;'
         'if(t){var head=document.getElementById("tl-data").textContent.slice(0,300);'
         'var o=+/"offset":(\\d+)/.exec(head)[1]/1e9,span=+/"bucket":(\\d+)/.exec(head)[1]*t.intervals/1e9;'
         'var a=performance.now();t.select(o+span*0.1,o+span*0.9);range=performance.now()-a;'
         'a=performance.now();t.callers(true);callers=performance.now()-a;'
         'a=performance.now();t.search("m12");search=performance.now()-a;}'
         'document.title="LOADED|"+Math.round(load)+"|"+(t?t.intervals:-1)+"|"+Math.round(range)'
         '+"|"+Math.round(callers)+"|"+Math.round(search);},0);});'
         '</script></body>')


def measured(cmd):
    """(wall seconds, peak RSS MB, CPU seconds: user + sys) of `cmd`."""
    import time
    start = time.perf_counter()
    out = subprocess.run(["/usr/bin/time", "-f", "%M %U %S", *map(str, cmd)], check=True,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - start
    rss, user, system = out.stderr.strip().splitlines()[-1].split()
    return wall, int(rss) / 1024, float(user) + float(system)


def probed(html, work, name):
    """A copy of the page `html` with the probe, in `work`."""
    page = work / f"{name}.probe.html"
    page.write_text(html.read_text().replace("</body>", PROBE))
    return page


def load_once(page):
    """(seconds from navigation to the load event, seconds the first range took to draw, then its
    callers view, then a search in it) of one headless Chromium load of `page`."""
    chromium = os.environ.get("HPROF_CHROMIUM", "/usr/bin/chromium")
    profile = tempfile.mkdtemp(prefix="hprof-chromium-")
    try:
        out = subprocess.run(["timeout", "300", chromium, "--headless", "--no-sandbox", "--disable-gpu",
                              f"--user-data-dir={profile}", "--dump-dom", f"file://{page}"],
                             capture_output=True, text=True)
    finally:
        shutil.rmtree(profile, ignore_errors=True)
    m = re.search(r"<title>LOADED\|(\d+)\|(\d+)\|(-?\d+)\|(-?\d+)\|(-?\d+)", out.stdout)
    assert m and int(m.group(2)) > 0, out.stdout[:300]
    return tuple(int(m.group(g)) / 1000 for g in (1, 3, 4, 5))


def page_load(work, hprof, runs, jfr=None):
    """`hprof convert` of the synthetic recording to HTML (wall, peak RSS, CPU), the page's MB,
    and `runs` loads in headless Chromium, each (load, first range, its callers, a search)
    seconds; used by bench/jfr.py."""
    html = work / "synth.html"
    convert = measured([hprof, "convert", jfr or work / "synth.jfr", html])
    page = probed(html, work, "synth")
    loads = [load_once(page) for _ in range(runs)]
    return convert, html.stat().st_size / 1e6, loads


def load_average():
    return os.getloadavg()[0]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--baseline", type=Path, help="another hprof to compare with (e.g. main's)")
    parser.add_argument("--samples", type=int, default=10_000_000)
    args = parser.parse_args()
    subprocess.run(["cargo", "build", "--release", "--locked", "--quiet", "-p", "hprof-cli"], cwd=ROOT, check=True)
    subprocess.run(["cargo", "build", "--release", "--locked", "--quiet", "-p", "hprof-jfr", "--example", "synth"],
                   cwd=ROOT, check=True)
    work = Path(tempfile.mkdtemp(prefix="hprof-bench-timeline-"))
    try:
        jfr = work / "synth.jfr"
        subprocess.run([ROOT / "target/release/examples/synth", jfr, str(args.samples)], check=True)
        builds = [("this build", ROOT / "target/release/hprof")]
        if args.baseline:
            builds.insert(0, ("baseline", args.baseline.resolve()))
        pages, rows = {}, []
        # The conversions interleaved too (baseline, this build, baseline, ...): 2 each.
        converts = {name: [] for name, _ in builds}
        for _ in range(2):
            for name, hprof in builds:
                html = work / f"{name.replace(' ', '-')}.html"
                before = load_average()
                converts[name].append(measured([hprof, "convert", jfr, html]) + (before,))
                pages[name] = html
        probes = {name: probed(html, work, name.replace(" ", "-")) for name, html in pages.items()}
        loads = {name: [] for name in probes}
        for _ in range(args.runs):
            for name, page in probes.items():
                before = load_average()
                load, first, callers, search = load_once(page)
                loads[name].append((load, first, before, callers, search))
                print(f"{name}: load {load:.2f} s, first range {first:.2f} s, its callers {callers:.2f} s, "
                      f"a search {search:.2f} s (load average {before:.1f})", file=sys.stderr)
        for name, _ in builds:
            c = converts[name]
            l = loads[name]
            rows.append(
                f"| {name} | {pages[name].stat().st_size / 1e6:.1f} | "
                f"{' '.join(f'{x[0]:.1f}' for x in c)} | {' '.join(f'{x[2]:.1f}' for x in c)} | "
                f"{max(x[1] for x in c):.0f} | {' '.join(f'{x[0]:.2f}' for x in l)} | "
                f"{statistics.median(x[0] for x in l):.2f} | {' '.join(f'{x[1]:.2f}' for x in l)} | "
                f"{' '.join(f'{x[3]:.2f}' for x in l)} | {' '.join(f'{x[4]:.2f}' for x in l)} | "
                f"{min(x[2] for x in l):.0f}-{max(x[2] for x in l):.0f} |")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"`bench/timeline_page.py --runs {args.runs}" + (" --baseline HPROF" if args.baseline else "") +
          f"`, {args.samples:,} samples:\n")
    print("| build | page MB | convert wall s | convert CPU s | peak RSS MB | page load s (runs) | "
          "median | first range s | its callers s | a search s | load average |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
