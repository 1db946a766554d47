#!/usr/bin/env python3
"""Score a peat binary on the labelled query set: hit@1, hit@5 and MRR@10 per query kind for
keyword-only, semantic-only and hybrid recall, then the similarity distributions the floor is
calibrated from. The environment (HOME, PEAT_DB, PEAT_DATA_DIR) names the store.

    score.py PEAT QUERIES.jsonl [--raw OUT.jsonl]

A peat from before the lane switches existed (`--keyword-only`, `--semantic-only`) is
scored by reading each lane's own rank out of one hybrid answer of 200 hits.
"""
import json
import statistics
import subprocess
import sys

KINDS = ["kw", "para", "mixed", "ident"]
MODES = ["keyword", "semantic", "hybrid"]


def run(peat, args):
    p = subprocess.run([peat, "recall", *args, "--json"], capture_output=True, text=True)
    if p.returncode not in (0, 1):
        sys.exit(f"peat recall {' '.join(args)} failed ({p.returncode}): {p.stderr}")
    return json.loads(p.stdout)


def sessions_in_order(hits):
    out = []
    for h in hits:
        if h["session"] not in out:
            out.append(h["session"])
    return out


def answers(peat, query, legacy):
    """Each mode's ranked sessions (top 10), and the raw answers."""
    if legacy:
        r = run(peat, [query, "--limit", "200"])
        hits = r["hits"]
        kw = sorted((h for h in hits if h.get("keyword_rank")), key=lambda h: h["keyword_rank"])
        sem = sorted((h for h in hits if h.get("vector_rank")), key=lambda h: h["vector_rank"])
        return {"keyword": kw[:10], "semantic": sem[:10], "hybrid": hits[:10]}, {"hybrid200": r}
    raw = {
        "keyword": run(peat, [query, "--keyword-only", "--limit", "10"]),
        "semantic": run(peat, [query, "--semantic-only", "--limit", "10"]),
        "hybrid": run(peat, [query, "--limit", "10"]),
        # No floor: where the answer's similarity lies, for the calibration.
        "semantic_raw": run(peat, [query, "--semantic-only", "--floor", "0", "--limit", "10"]),
    }
    return {m: raw[m]["hits"] for m in MODES}, raw


def main():
    if len(sys.argv) not in (3, 5):
        sys.exit(__doc__)
    peat, qfile = sys.argv[1], sys.argv[2]
    raw_out = open(sys.argv[4], "w") if len(sys.argv) == 5 else None
    help_text = subprocess.run([peat, "recall", "--help"], capture_output=True, text=True).stdout
    legacy = "--keyword-only" not in help_text
    queries = [json.loads(line) for line in open(qfile)]

    ranks = {(m, k): [] for m in MODES for k in KINDS}
    nothing = {m: 0 for m in MODES}
    true_sims, noise_sims = [], []
    for q in queries:
        by_mode, raw = answers(peat, q["query"], legacy)
        if raw_out:
            raw_out.write(json.dumps({"q": q, "raw": raw}) + "\n")
        if q["kind"] == "unrelated":
            for m in MODES:
                nothing[m] += not by_mode[m]
            if not legacy and raw["semantic_raw"]["hits"]:
                noise_sims.append(raw["semantic_raw"]["hits"][0]["similarity"])
            continue
        for m in MODES:
            order = sessions_in_order(by_mode[m])
            rank = order.index(q["session"]) + 1 if q["session"] in order else None
            ranks[(m, q["kind"])].append(rank)
        if not legacy:
            sims = [h["similarity"] for h in raw["semantic_raw"]["hits"] if h["session"] == q["session"]]
            if sims:
                true_sims.append(sims[0])

    def metrics(rs):
        n = len(rs)
        return (
            sum(1 for r in rs if r == 1) / n,
            sum(1 for r in rs if r and r <= 5) / n,
            sum(1 / r for r in rs if r and r <= 10) / n,
        )

    print(f"{'lane':<9} {'queries':<8} {'n':>4} {'hit@1':>6} {'hit@5':>6} {'MRR@10':>7}")
    for m in MODES:
        for k in KINDS + ["all"]:
            rs = [r for kk in KINDS for r in ranks[(m, kk)]] if k == "all" else ranks[(m, k)]
            h1, h5, mrr = metrics(rs)
            print(f"{m:<9} {k:<8} {len(rs):>4} {h1:>6.3f} {h5:>6.3f} {mrr:>7.3f}")
    n_unrel = sum(1 for q in queries if q["kind"] == "unrelated")
    print()
    print(f"unrelated queries answered 'no hits' ({n_unrel} queries):", ", ".join(f"{m} {nothing[m]}" for m in MODES))
    if true_sims and noise_sims:
        def dist(xs):
            xs = sorted(xs)
            q = lambda p: xs[min(len(xs) - 1, int(p * len(xs)))]
            return f"min {xs[0]:.3f}  p10 {q(0.1):.3f}  median {statistics.median(xs):.3f}  p90 {q(0.9):.3f}  max {xs[-1]:.3f}"
        print(f"similarity of the answer (best hit of the target session, {len(true_sims)} queries): {dist(true_sims)}")
        print(f"similarity of the best hit of an unrelated query ({len(noise_sims)} queries):        {dist(noise_sims)}")
        for floor in (0.25, 0.28, 0.30, 0.32, 0.35, 0.38, 0.40):
            kept = sum(s >= floor for s in true_sims) / len(true_sims)
            leaked = sum(s >= floor for s in noise_sims) / len(noise_sims)
            print(f"  floor {floor:.2f}: answers kept {kept:.3f}, unrelated queries still answered {leaked:.3f}")


if __name__ == "__main__":
    main()
