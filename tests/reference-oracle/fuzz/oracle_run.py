"""Run the public verifier on (phi0, answer) cases -- parallel, resumable copy of corpus_run.py.

usage: PYTHONHASHSEED=0 python oracle_run.py REPO CASES_JSONL OUT_JSONL
           [--only-hard|--no-hard] [--workers N] [--timeout SECONDS]

CASES_JSONL: one JSON object per line.  Required: "id" (unique), "dataset"
(plogic|ksat|fol|fol_human|regex), "phi0", "answer".  Optional (copied to the
output, defaults in brackets): "phi0_source" [""], "category" [""], "note" [""],
"hard" [false].  Any other key of an input line is ignored (so a corpus.jsonl
can be fed back in).

The verification is corpus_run.py's, unchanged: in a pebble.ProcessPool
worker, nlfs.verifier.logic.verify / nlfs.verifier.regex.verify of the public
code on (phi0, answer), with nltk's Prover9Parent._call wrapped only to RECORD
exit code / status lines / input; per-item timeout (default 600 s, as
nlfs/alg.py:verify).  Output records have corpus.jsonl's fields, in its order.

Differences from corpus_run.py (bookkeeping only):
* --workers N pebble workers (default 1, as corpus_run.py; the public
  alg.verify uses one per CPU);
* each record is appended and flushed as soon as its case completes (output
  order = completion order); on start, ids already present in OUT_JSONL are
  skipped, so an interrupted run is resumed by rerunning the same command;
* on a timeout only the processes started for THAT case (marked by an
  environment variable set in the worker before the public verify call) are
  killed, not every prover9 of the clone, so other workers' runs are unaffected;
* wall_s of a timed-out case is measured from when pebble handed the case to
  a worker (corpus_run.py: from when the main loop began waiting for it).
"""
import argparse
import concurrent.futures as cf
import json
import os
import sys
import time
import uuid

import pebble

ap = argparse.ArgumentParser()
ap.add_argument("repo")
ap.add_argument("cases")
ap.add_argument("out")
g = ap.add_mutually_exclusive_group()
g.add_argument("--only-hard", action="store_true")
g.add_argument("--no-hard", action="store_true")
ap.add_argument("--workers", type=int, default=1)
ap.add_argument("--timeout", type=float, default=600,
                help="per-case pebble timeout in seconds (public code: 600)")
A = ap.parse_args()

REPO = os.path.abspath(A.repo)
CASES, OUTP = os.path.abspath(A.cases), os.path.abspath(A.out)
sys.path.insert(0, REPO)
os.chdir(REPO)
from nlfs.verifier import logic as public_logic  # noqa: E402
from nlfs.verifier import regex as public_regex  # noqa: E402

TIMEOUT = A.timeout  # nlfs/alg.py verify(..., timeout=600)
RUN_TAG = uuid.uuid4().hex
MARK = "ORACLE_RUN_CASE"
CASE_KEYS = [("id", None), ("dataset", None), ("phi0", None), ("phi0_source", ""),
             ("answer", None), ("category", ""), ("note", ""), ("hard", False)]

_records = []


def _install_recorder():
    import nltk.inference.prover9 as P9
    if getattr(P9.Prover9Parent, "_oracle_wrapped", False):
        return
    orig = P9.Prover9Parent._call

    def _call(self, input_str, binary, args=[], verbose=False):
        t = time.time()
        stdout, rc = orig(self, input_str, binary, args, verbose)
        info = {"returncode": rc, "wall_s": round(time.time() - t, 4)}
        for line in stdout.splitlines():
            ls = line.strip()
            if ls.startswith("Process") and " exit (" in ls:
                info["exit_reason"] = ls[ls.index("exit (") + 6:].split(")")[0]
            elif ls.startswith("User_CPU="):
                info["user_cpu"] = ls.split(",")[0].split("=")[1]
            elif ls in ("THEOREM PROVED", "SEARCH FAILED"):
                info["status"] = ls
            elif ls.startswith("%%ERROR") or ls.startswith("Fatal error"):
                info.setdefault("errors", []).append(ls)
        info["input"] = input_str
        _records.append(info)
        return stdout, rc

    P9.Prover9Parent._call = _call
    P9.Prover9Parent._oracle_wrapped = True


def work(args):
    dataset, fs, ans, mark = args
    # children (prover9, npm/node) inherit this; used only to find them on timeout
    os.environ[MARK] = mark
    del _records[:]
    t = time.time()
    if dataset == "regex":
        res = public_regex.verify((fs, ans))
    else:
        _install_recorder()
        res = public_logic.verify((fs, ans))
    wall = time.time() - t
    is_eq, start_time, err = res
    return {"is_equivalent": is_eq, "error": err, "wall_s": round(wall, 4),
            "prover9_calls": list(_records), "started": start_time is not None}


def kill_marked(mark):
    # end only processes started for this case of this run
    needle = ("%s=%s" % (MARK, mark)).encode()
    me = os.getpid()
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == me:
            continue
        try:
            with open("/proc/%s/environ" % pid, "rb") as fh:
                env = fh.read().split(b"\0")
        except OSError:
            continue
        if needle in env:
            try:
                os.kill(int(pid), 9)
            except OSError:
                pass


def extract(c):
    ans = c["answer"]
    if c["dataset"] == "regex":
        return {"extracted": public_regex.clean_regex(ans)}
    try:
        e = public_logic.str_to_expr(ans)
        return {"extracted": str(e), "extracted_public_print": public_logic.expr_to_str(e),
                "extracted_type": type(e).__name__, "compliant": True, "parse_error": None}
    except Exception as ex:
        return {"extracted": None, "extracted_public_print": None, "extracted_type": None,
                "compliant": False, "parse_error": str(ex)}


def make_record(c, fut, t_running):
    rec = dict(c)
    if c["dataset"] != "regex":
        try:
            e0 = public_logic.str_to_expr(c["phi0"])
            rec["phi0_raw"] = str(e0)
        except Exception as ex:
            rec["phi0_raw"] = None
    rec.update(extract(c))
    try:
        r = fut.result()
        rec["public_result"] = {"is_equivalent": r["is_equivalent"], "has_error": r["error"]}
        rec["wall_s"] = r["wall_s"]
        rec["prover9_calls"] = r["prover9_calls"]
        if r["is_equivalent"] is True:
            rec["verdict"] = "equivalent"
        elif r["is_equivalent"] is False:
            rec["verdict"] = "not_equivalent"
        else:
            rec["verdict"] = "error"
    except Exception as ex:  # what alg.verify does: err = str(e), is_equivalent None
        name = type(ex).__name__
        rec["public_result"] = {"is_equivalent": None, "has_error": str(ex), "exception": name}
        rec["verdict"] = "timeout" if "Timeout" in name else "error"
        rec["wall_s"] = round(time.time() - (t_running or time.time()), 1)
        rec["prover9_calls"] = []
        kill_marked(RUN_TAG + ":" + c["id"])
    if c["dataset"] == "regex":
        rec["compliant"] = rec["public_result"]["has_error"] is None
        rec["parse_error"] = rec["public_result"]["has_error"]
    return rec


def load_cases():
    cases, seen = [], set()
    for n, line in enumerate(open(CASES, encoding="utf-8"), 1):
        if not line.strip():
            continue
        raw = json.loads(line)
        c = {}
        for k, default in CASE_KEYS:
            if k in raw:
                c[k] = raw[k]
            elif default is None:
                sys.exit("%s line %d: missing field %r" % (CASES, n, k))
            else:
                c[k] = default
        if c["id"] in seen:
            sys.exit("%s line %d: duplicate id %r" % (CASES, n, c["id"]))
        seen.add(c["id"])
        cases.append(c)
    return cases


def done_ids():
    if not os.path.exists(OUTP):
        return set()
    with open(OUTP, "rb+") as fh:
        data = fh.read()
        if data and not data.endswith(b"\n"):  # drop a partly written last line
            cut = data.rfind(b"\n") + 1
            fh.truncate(cut)
            data = data[:cut]
    ids = set()
    for line in data.decode("utf-8").splitlines():
        if line.strip():
            ids.add(json.loads(line)["id"])
    return ids


def main():
    cases = load_cases()
    if A.only_hard:
        cases = [c for c in cases if c["hard"]]
    elif A.no_hard:
        cases = [c for c in cases if not c["hard"]]
    skip = done_ids()
    todo = [c for c in cases if c["id"] not in skip]
    print("%d cases, %d already in %s, %d to run, %d worker(s), timeout %gs"
          % (len(cases), len(cases) - len(todo), OUTP, len(todo), A.workers, TIMEOUT),
          file=sys.stderr, flush=True)
    if not todo:
        return
    t_start = time.time()
    pool = pebble.ProcessPool(max_workers=A.workers)
    futs = {}
    for c in todo:
        f = pool.schedule(work, args=[(c["dataset"], c["phi0"], c["answer"], RUN_TAG + ":" + c["id"])],
                          timeout=TIMEOUT)
        futs[f] = c
    running_since = {}
    pending = set(futs)
    n_done = 0
    with open(OUTP, "a", encoding="utf-8") as out:
        while pending:
            done, pending = cf.wait(pending, timeout=0.1, return_when=cf.FIRST_COMPLETED)
            now = time.time()
            for f in pending:
                if f not in running_since and f.running():
                    running_since[f] = now
            for f in done:
                c = futs[f]
                rec = make_record(c, f, running_since.get(f))
                out.write(json.dumps(rec, ensure_ascii=False) + "\n")
                out.flush()
                n_done += 1
                print(n_done, rec["id"], rec["dataset"], rec["category"], rec["verdict"], rec.get("wall_s"),
                      file=sys.stderr, flush=True)
    pool.close()
    pool.join()
    print("done %d cases in %.1fs" % (n_done, time.time() - t_start), file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
