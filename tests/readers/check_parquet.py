"""Reads the Parquet file `autoeval export --format parquet` wrote with
pyarrow and with DuckDB, and holds it to the run it came from.

    python check_parquet.py EXPORTDIR RUNDIR

Row count, verdict counts per model and the sum of costs must equal those
of RUNDIR/results.jsonl (each round once, the first written), read by
both; the dataset card must name the file. Where the run was judged
(RUNDIR/judge-*.jsonl), judgements.parquet must hold each judged pair's
latest judgement, its cell of A4's confusion matrix as counted here, and
the card must name it. Exits 1 on any difference.
"""

import collections
import glob
import json
import os
import sys

import duckdb
import pyarrow.parquet as pq


def main(export, rundir):
    seen = {}
    with open(os.path.join(rundir, "results.jsonl")) as f:
        for line in f:
            if line.strip():
                r = json.loads(line)
                seen.setdefault((r["dataset"], r["model"], r["prompt"], r["id"], r["repeat"], r["round"]), r)
    rows = list(seen.values())
    verdicts = collections.Counter((r["model"], r["verdict"]) for r in rows)
    cost = sum(r.get("cost") or 0.0 for r in rows)
    path = os.path.join(export, "results.parquet")
    problems = []

    table = pq.read_table(path)
    arrow_verdicts = collections.Counter(zip(table.column("model").to_pylist(), table.column("verdict").to_pylist()))
    arrow_cost = sum(c or 0.0 for c in table.column("cost").to_pylist())
    print(f"pyarrow: {table.num_rows} rows, {len(table.schema)} columns, {table.schema.field('verdict').type} verdict, cost {arrow_cost:.6f}")
    if table.num_rows != len(rows):
        problems.append(f"pyarrow rows {table.num_rows} != JSONL {len(rows)}")
    if arrow_verdicts != verdicts:
        problems.append(f"pyarrow verdicts {dict(arrow_verdicts)} != JSONL {dict(verdicts)}")
    if abs(arrow_cost - cost) > 1e-9:
        problems.append(f"pyarrow cost {arrow_cost} != JSONL {cost}")

    con = duckdb.connect()
    (n,) = con.execute("SELECT count(*) FROM read_parquet(?)", [path]).fetchone()
    duck_verdicts = collections.Counter({(m, v): c for m, v, c in con.execute(
        "SELECT model, verdict, count(*) FROM read_parquet(?) GROUP BY model, verdict", [path]).fetchall()})
    (duck_cost,) = con.execute("SELECT coalesce(sum(cost), 0) FROM read_parquet(?)", [path]).fetchone()
    print(f"duckdb: {n} rows, {len(duck_verdicts)} (model, verdict) counts, cost {duck_cost:.6f}")
    if n != len(rows):
        problems.append(f"duckdb rows {n} != JSONL {len(rows)}")
    if duck_verdicts != verdicts:
        problems.append(f"duckdb verdicts {dict(duck_verdicts)} != JSONL {dict(verdicts)}")
    if abs(duck_cost - cost) > 1e-9:
        problems.append(f"duckdb cost {duck_cost} != JSONL {cost}")

    problems.extend(check_judgements(export, rundir, con))
    card = open(os.path.join(export, "README.md")).read()
    if 'data_files: "results.parquet"' not in card:
        problems.append("the dataset card does not name results.parquet")
    print(f"JSONL: {len(rows)} rounds, {len(verdicts)} (model, verdict) counts, cost {cost:.6f}")
    for p in problems:
        print("DIFFERS:", p)
    return 1 if problems else 0


def latest_judgements(rundir):
    """Each judge file's judgement per pair: a reply over an earlier failed
    call, else the first written."""
    kept = {}
    for path in sorted(glob.glob(os.path.join(rundir, "judge-*.jsonl"))):
        with open(path) as f:
            for line in f:
                if not line.endswith("\n"):
                    continue
                j = json.loads(line)
                key = (j["judge"], j["style"], j["dataset"], j["id"], j["model"], j["prompt"], j["repeat"], j["round"])
                if key not in kept or kept[key].get("judgement") is None:
                    kept[key] = j
    return kept


def cell(j):
    """The cell of A4's confusion matrix a judgement falls in, as App. L counts."""
    said = j.get("judgement")
    if said is None:
        return "api_failure"
    if j.get("non_compliant"):
        return {"yes": "non_compliant_yes", "no": "non_compliant_no"}.get(said, "non_compliant_unanswered")
    if said == "yes":
        return "tp" if j["equivalent"] else "fp"
    if said == "no":
        return "fn" if j["equivalent"] else "tn"
    return "unanswered_positive" if j["equivalent"] else "unanswered_negative"


def check_judgements(export, rundir, con):
    """judgements.parquet against the run's judge files."""
    kept = latest_judgements(rundir)
    path = os.path.join(export, "judgements.parquet")
    if not kept:
        return [f"{path} exists for a run never judged"] if os.path.exists(path) else []
    want = collections.Counter((j["judge"], j["style"], cell(j)) for j in kept.values())
    table = pq.read_table(path)
    have = collections.Counter(zip(*(table.column(c).to_pylist() for c in ("judge", "style", "cell"))))
    duck = collections.Counter({(a, b, c): n for a, b, c, n in con.execute(
        "SELECT judge, style, cell, count(*) FROM read_parquet(?) GROUP BY ALL", [path]).fetchall()})
    print(f"judgements: {table.num_rows} rows read by pyarrow, {sum(duck.values())} by duckdb, "
          f"{len(kept)} in the judge files, cells {dict(sorted(want.items()))}")
    problems = []
    if have != want:
        problems.append(f"pyarrow judgement cells {dict(have)} != judge files {dict(want)}")
    if duck != want:
        problems.append(f"duckdb judgement cells {dict(duck)} != judge files {dict(want)}")
    card = open(os.path.join(export, "README.md")).read()
    if 'data_files: "judgements.parquet"' not in card:
        problems.append("the dataset card does not name judgements.parquet")
    return problems


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
