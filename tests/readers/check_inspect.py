"""Reads the Inspect logs `autoeval export --format inspect` wrote with
Inspect itself, and holds them to the run they came from.

    python check_inspect.py LOGDIR RUNDIR

For every log: Inspect's `read_eval_log` reads it; its samples are exactly
the units of its (dataset, model, prompt style) in RUNDIR/results.jsonl;
each sample's `verdict_rN` score is the round's verdict there; its results
(A2 and A3 per round, strict and lenient) equal RUNDIR/summary.json's, and
so do the means of the samples' `a2_rN`/`a3_rN` scores and A2 and A3
recounted here from the records alone. Where the run was judged, each
judged round's sample has a score `a4_rN_STYLE:JUDGE` whose value is the
judgement's cell of A4's confusion matrix as counted here, and the log's
results hold the F1 recounted here from the judge files. Then
`samples_df` over LOGDIR has one row per unit, with the round-1 verdicts.
Prints what it read; exits 1 on the first list of differences.
"""

import collections
import glob
import json
import os
import sys

from inspect_ai.analysis import samples_df
from inspect_ai.log import read_eval_log

from check_parquet import cell, latest_judgements


def records(rundir):
    """The run's records, each round once (the first written)."""
    seen = {}
    with open(os.path.join(rundir, "results.jsonl")) as f:
        for line in f:
            if not line.strip():
                continue
            r = json.loads(line)
            key = (r["dataset"], r["model"], r["prompt"], r["id"], r["repeat"], r["round"])
            seen.setdefault(key, r)
    return seen


def recount(units, rnd):
    """A2 and A3 at round rnd over a log's units, counted from the records
    alone: a round that ended in an API failure or verifier error leaves the
    denominators, and so does every later round of its unit; a unit whose
    earlier round was not equivalent stopped, and counts as a failure."""
    compliant = equivalent = measured = 0
    for rounds in units.values():
        for k in range(1, rnd + 1):
            r = rounds.get(k)
            if r is None:  # not asked yet: the run is unfinished
                break
            if r["verdict"] in ("api_failure", "verifier_error"):
                break
            if k == rnd:
                measured += 1
                compliant += r["verdict"] in ("equivalent", "not_equivalent", "unknown", "timeout")
                equivalent += r["verdict"] == "equivalent"
            elif r["verdict"] != "equivalent":
                measured += 1
                break
    if not measured:
        return None, None
    return compliant / measured, equivalent / measured


def main(logdir, rundir):
    rounds = records(rundir)
    judgements = latest_judgements(rundir)
    units = collections.defaultdict(dict)
    for (dataset, model, prompt, item, repeat, rnd), r in rounds.items():
        units[(dataset, model, prompt)].setdefault((item, repeat), {})[rnd] = r
    groups = json.load(open(os.path.join(rundir, "summary.json")))["summary"]["groups"]
    problems = []
    logs = sorted(glob.glob(os.path.join(logdir, "*.eval")))
    total = 0
    for path in logs:
        log = read_eval_log(path)
        key = (log.eval.task.split("/", 1)[1], log.eval.metadata["model_spec"], log.eval.task_args["prompt"])
        expected = units.get(key, {})
        got = {(s.id, s.epoch - 1): s for s in log.samples}
        if set(got) != set(expected):
            problems.append(f"{path}: samples {sorted(set(got) ^ set(expected))[:5]} differ from the run's units")
        for unit, sample in got.items():
            for rnd, r in expected.get(unit, {}).items():
                score = sample.scores.get(f"verdict_r{rnd}")
                if score is None or score.value != r["verdict"]:
                    problems.append(f"{path}: {unit} round {rnd}: {score and score.value} != {r['verdict']}")
        results = {s.name: s for s in log.results.scores}
        compared = 0
        for g in groups:
            if (g["dataset"], g["model"], g["prompt"]) != key:
                continue
            for metric, field in [("a2", "compliance"), ("a3", "accuracy"),
                                  ("lenient_a2", "lenient_compliance"), ("lenient_a3", "lenient_accuracy")]:
                name = f"{metric}_r{g['round']}"
                want = g[field]
                score = results.get(name)
                have = score.metrics["mean"].value if score and "mean" in score.metrics else None
                if (want is None) != (have is None) or (want is not None and abs(want - have) > 1e-12):
                    problems.append(f"{path}: {name} {have} != summary.json {field} {want}")
                compared += 1
                if metric in ("a2", "a3"):
                    mine = recount(expected, g["round"])[0 if metric == "a2" else 1]
                    if (mine is None) != (have is None) or (mine is not None and abs(mine - have) > 1e-12):
                        problems.append(f"{path}: {name} {have} != {mine} recounted from results.jsonl")
                    values = [s.scores[name].value for s in log.samples if name in s.scores]
                    mean = sum(values) / len(values) if values else None
                    if (want is None) != (mean is None) or (want is not None and abs(want - mean) > 1e-12):
                        problems.append(f"{path}: mean of samples' {name} {mean} != summary.json {want}")
        judged = check_judgements(path, log, key, judgements, got, problems)
        total += len(log.samples)
        print(f"{os.path.basename(path)}: {len(log.samples)} samples, {compared} result scores equal to summary.json, {judged} judgements")
    df = samples_df(logdir)
    if len(df) != total:
        problems.append(f"samples_df has {len(df)} rows, the logs {total} samples")
    by_unit = {}
    for (dataset, model, prompt, item, repeat, rnd), r in rounds.items():
        if rnd == 1:
            by_unit[(dataset, model, prompt, item, repeat + 1)] = r["verdict"]
    logs_by_id = {}
    for path in logs:
        log = read_eval_log(path, header_only=True)
        logs_by_id[log.eval.eval_id] = (log.eval.task.split("/", 1)[1], log.eval.metadata["model_spec"], log.eval.task_args["prompt"])
    mismatched = 0
    for row in df.itertuples():
        dataset, model, prompt = logs_by_id[row.eval_id]
        if by_unit.get((dataset, model, prompt, row.id, row.epoch)) != row.score_verdict_r1:
            mismatched += 1
    if mismatched:
        problems.append(f"samples_df: {mismatched} rows whose score_verdict_r1 is not results.jsonl's")
    print(f"{len(logs)} logs read, {total} samples, samples_df {len(df)} rows, {mismatched} verdicts differ")
    if not logs:
        problems.append("no log")
    for p in problems[:20]:
        print("DIFFERS:", p)
    return 1 if problems else 0


def check_judgements(path, log, key, judgements, samples, problems):
    """The log's judge scores and A4 results against the judge files; gives
    how many judgements the log holds."""
    dataset, model, prompt = key
    mine = [j for j in judgements.values() if (j["dataset"], j["model"], j["prompt"]) == key]
    matrices = collections.defaultdict(collections.Counter)
    for j in mine:
        name = f"a4_r{j['round']}_{j['style']}:{j['judge']}"
        matrices[name][cell(j)] += 1
        sample = samples.get((j["id"], j["repeat"]))
        score = sample.scores.get(name) if sample else None
        if score is None or score.value != cell(j):
            problems.append(f"{path}: {j['id']} {name}: {score and score.value} != {cell(j)}")
    results = {s.name: s for s in log.results.scores}
    for name, c in matrices.items():
        denominator = 2 * c["tp"] + c["fp"] + c["fn"]
        want = 2 * c["tp"] / denominator if denominator else None
        score = results.get(name)
        have = score.metrics["f1"].value if score and "f1" in score.metrics else None
        if (want is None) != (have is None) or (want is not None and abs(want - have) > 1e-12):
            problems.append(f"{path}: {name} F1 {have} != {want} recounted from the judge files")
    return len(mine)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
