"""Reads the Parquet file `autoeval export --format parquet` wrote with
pyarrow and with DuckDB, and holds it to the run it came from.

    python check_parquet.py EXPORTDIR RUNDIR

Row count, verdict counts per model and the sum of costs must equal those
of RUNDIR/results.jsonl (each round once, the first written), read by
both; the dataset card must name the file. Exits 1 on any difference.
"""

import collections
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

    card = open(os.path.join(export, "README.md")).read()
    if 'data_files: "results.parquet"' not in card:
        problems.append("the dataset card does not name results.parquet")
    print(f"JSONL: {len(rows)} rounds, {len(verdicts)} (model, verdict) counts, cost {cost:.6f}")
    for p in problems:
        print("DIFFERS:", p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
