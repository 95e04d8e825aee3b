"""Drive a real tslab kernel as JupyterLab does (jupyter_client), for test/kernel-interrupt.test.ts.

  /usr/bin/python3 test/kernel/drive.py <repo root> <data root>

Prints progress lines on stderr and ONE JSON object on the last stdout line: the facts seen
(the test asserts on them). Exit code 0 unless the driver itself broke; a missing
jupyter_client or tslab kernelspec exits 3 with the reason on stdout as {"skip": "..."}.

Scenario (one kernel, restarted once, then a second kernel):
  1. setup cell: import ./src/index, openTarget() (no env: the simulator); find the simulator pid.
  2. a measure() cell, interrupted with km.interrupt_kernel() (SIGINT to the kernel's process
     group) once its run folder exists; then a plain cell; the simulator's pid and /health;
     the run folder once the manifest says interrupted.
  3. the same measure() cell again (measured afresh), and a third time (reused).
  4. km.restart_kernel(now=True): the simulator is gone, its port refuses.
  5. setup again, km.shutdown_kernel(now=True): gone again.
  6. a second kernel: setup, SIGKILL of the kernel process: gone again.
"""
import json
import os
import queue
import signal
import socket
import sys
import time
import urllib.request

try:
    from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel
    from jupyter_client.manager import KernelManager
except ImportError as e:  # pragma: no cover - reported to the test as a skip reason
    print(json.dumps({"skip": f"python3 has no jupyter_client ({e})"}))
    sys.exit(3)

ROOT, DATA = sys.argv[1], sys.argv[2]
NB_DIR = os.path.join(ROOT, "notebooks")
LESSON, POINT = "kernel-test", "interrupted-point"
POINT_DIR = os.path.join(DATA, LESSON, POINT)
facts = {}


def log(msg):
    print(f"[drive {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def kernel_env():
    env = {k: v for k, v in os.environ.items() if not k.startswith("LOADLAB_")}
    env["PATH"] = os.path.join(ROOT, "node_modules", ".bin") + os.pathsep + env.get("PATH", "")
    return env


def execute(kc, code, timeout=180.0, on_start=None):
    """Run a cell; returns {status, stdout, stderr, error}. on_start() runs once the cell is busy."""
    msg_id = kc.execute(code)
    out = {"status": None, "stdout": "", "stderr": "", "error": ""}
    deadline = time.monotonic() + timeout
    started = False
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError(f"cell did not finish within {timeout} s: {code[:80]!r}; so far {out}")
        try:
            msg = kc.get_iopub_msg(timeout=min(left, 0.5))
        except queue.Empty:
            if started and on_start:
                on_start()
                on_start = None
            continue
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        t, c = msg["msg_type"], msg["content"]
        if t == "status" and c["execution_state"] == "busy":
            started = True
        elif t == "stream":
            out[c["name"]] += c["text"]
        elif t == "error":
            out["error"] += f"{c['ename']}: {c['evalue']}"
        elif t == "status" and c["execution_state"] == "idle":
            break
    reply = kc.get_shell_msg(timeout=30)
    while reply["parent_header"].get("msg_id") != msg_id:
        reply = kc.get_shell_msg(timeout=30)
    out["status"] = reply["content"]["status"]
    return out


def json_line(out, tag):
    for line in reversed(out["stdout"].splitlines()):
        if line.startswith(tag):
            return json.loads(line[len(tag):])
    raise AssertionError(f"no {tag} line in the cell output: {out}")


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
        return state not in ("Z", "X")  # a zombie holds no port
    except FileNotFoundError:
        return False


def port_refuses(port):
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return False
    except ConnectionRefusedError:
        return True
    except OSError:
        return False


def health(base_url):
    try:
        with urllib.request.urlopen(base_url + "/health", timeout=5) as r:
            return r.status
    except Exception as e:  # noqa: BLE001 - the fact is "no answer"
        return str(e)


def sim_children(kernel_pid):
    """Pids of simulator processes whose parent is the kernel."""
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
        except (FileNotFoundError, ProcessLookupError, IndexError, ValueError):
            continue
        # the simulator runs from its source through tsx, or from dist/ when a fresh build exists
        is_sim = "src/sim/main.ts" in cmd or "dist/sim/main.js" in cmd
        if ppid == kernel_pid and is_sim and alive(int(entry)):
            pids.append(int(entry))
    return pids


SETUP = """import * as ll from './src/index';
const target = await ll.openTarget();
console.log('SETUP ' + JSON.stringify({ kernelPid: process.pid, baseUrl: target.baseUrl, mode: target.mode }));
"""
# For the later kernels: the same openTarget(), fewer files for tslab to compile.
SETUP_LIGHT = SETUP.replace("import * as ll from './src/index';", "import * as ll from './src/lesson/open-target';")

# Long enough to interrupt (2 waves of 4 streams of 400 forced tokens, ~8 ms a token on the
# modelled 4090), short enough to finish when run again.
MEASURE = """{
  const r = await ll.measure(target, {
    lesson: %s, name: %s, root: %s, shape: ll.closedLoop(4), requests: 8, warmup: 0, progress: false,
    workload: [ll.makeRequest('Tell me a long story.', { maxTokens: 400, fixedOutput: true })],
  });
  console.log('MEASURED ' + JSON.stringify({ resumed: r.resumed, status: r.manifest.status, records: r.records.length }));
}
""" % (json.dumps(LESSON), json.dumps(POINT), json.dumps(DATA))


def setup(kc, km, key, code=SETUP):
    t0 = time.monotonic()
    out = execute(kc, code, timeout=240)
    s = json_line(out, "SETUP ")
    s["seconds"] = round(time.monotonic() - t0, 1)
    s["port"] = int(s["baseUrl"].rsplit(":", 1)[1])
    sims = sim_children(s["kernelPid"])
    s["simPids"] = sims
    s["simPid"] = sims[0] if sims else None
    if s["simPid"]:
        s["simPgid"], s["kernelPgid"] = os.getpgid(s["simPid"]), os.getpgid(s["kernelPid"])
    facts[key] = s
    log(f"{key}: {s}")
    return s


def gone_after(s, key, within=15.0):
    """Wait until the simulator of setup `s` is gone and its port refuses; record the facts."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < within:
        if not alive(s["simPid"]) and port_refuses(s["port"]):
            break
        time.sleep(0.1)
    facts[key] = {"simAlive": alive(s["simPid"]), "portRefuses": port_refuses(s["port"]), "seconds": round(time.monotonic() - t0, 2)}
    log(f"{key}: {facts[key]}")


def read_point():
    with open(os.path.join(POINT_DIR, "manifest.json")) as f:
        manifest = json.load(f)
    codes, bad = [], 0
    path = os.path.join(POINT_DIR, "requests.jsonl")
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                try:
                    r = json.loads(line)
                    codes.append("ok" if r.get("ok") else r.get("error", {}).get("code", "?"))
                except ValueError:
                    bad += 1
    return manifest, codes, bad


def interrupt_phase(km, kc):
    def interrupt_when_running():
        t0 = time.monotonic()
        while not os.path.exists(os.path.join(POINT_DIR, "manifest.json")) and time.monotonic() - t0 < 60:
            time.sleep(0.05)
        time.sleep(1.5)  # some requests in flight, none finished
        log("interrupt_kernel()")
        km.interrupt_kernel()

    out = execute(kc, MEASURE, timeout=180, on_start=interrupt_when_running)
    facts["interruptedCell"] = {"status": out["status"], "error": out["error"], "stderr": out["stderr"][-300:],
                                "measured": "MEASURED " in out["stdout"]}
    # tslab aborts what arrives within 200 ms of a failed cell (dist/jupyter.js, execQueue.reset(200)),
    # a person clicks later.
    time.sleep(0.5)
    after = execute(kc, "console.log('AFTER ' + JSON.stringify({ two: 1 + 1 }));", timeout=60)
    facts["cellAfterInterrupt"] = {"status": after["status"], "value": json_line(after, "AFTER ")["two"]}
    s = facts["setup1"]
    facts["simAfterInterrupt"] = {"samePidAlive": alive(s["simPid"]), "health": health(s["baseUrl"]), "simPids": sim_children(s["kernelPid"])}
    # runLoad finishes the interrupted run in the background of the kernel: wait for its manifest.
    t0 = time.monotonic()
    manifest = {}
    while time.monotonic() - t0 < 30:
        manifest, codes, bad = read_point()
        if manifest.get("status") != "running":
            break
        time.sleep(0.2)
    facts["interruptedPoint"] = {"status": manifest.get("status"), "codes": codes, "badLines": bad,
                                 "summary": os.path.exists(os.path.join(POINT_DIR, "summary.json"))}
    log(f"interrupt: {facts['interruptedCell']} {facts['cellAfterInterrupt']} {facts['simAfterInterrupt']} {facts['interruptedPoint']}")


def main():
    try:
        KernelSpecManager().get_kernel_spec("tslab")
    except NoSuchKernel:
        print(json.dumps({"skip": "the tslab kernelspec is not installed (npx tslab install --python=/usr/bin/python3)"}))
        sys.exit(3)
    km = KernelManager(kernel_name="tslab")
    km.start_kernel(cwd=NB_DIR, env=kernel_env())
    kc = km.client()
    kc.start_channels()
    try:
        kc.wait_for_ready(timeout=60)
        setup(kc, km, "setup1")
        interrupt_phase(km, kc)
        for key in ("rerun", "thirdRun"):
            out = execute(kc, MEASURE, timeout=180)
            facts[key] = {"status": out["status"], "error": out["error"], **json_line(out, "MEASURED ")}
            log(f"{key}: {facts[key]}")
        facts["simAfterReruns"] = {"samePidAlive": alive(facts["setup1"]["simPid"])}
        km.restart_kernel(now=True)
        gone_after(facts["setup1"], "afterRestart")
        kc.wait_for_ready(timeout=60)
        s2 = setup(kc, km, "setup2", SETUP_LIGHT)
        km.shutdown_kernel(now=True)
        gone_after(s2, "afterShutdown")
    finally:
        kc.stop_channels()
        if km.has_kernel:
            km.shutdown_kernel(now=True)

    km = KernelManager(kernel_name="tslab")
    km.start_kernel(cwd=NB_DIR, env=kernel_env())
    kc = km.client()
    kc.start_channels()
    try:
        kc.wait_for_ready(timeout=60)
        s3 = setup(kc, km, "setup3", SETUP_LIGHT)
        log(f"SIGKILL kernel {s3['kernelPid']}")
        os.kill(s3["kernelPid"], signal.SIGKILL)
        gone_after(s3, "afterSigkill")
    finally:
        kc.stop_channels()
        if km.has_kernel:
            km.shutdown_kernel(now=True)
    print(json.dumps(facts))


if __name__ == "__main__":
    main()
