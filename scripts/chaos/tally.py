#!/usr/bin/env python3
"""Counts what the fake Telegram received in a chaos run (stdlib only).

    tally.py --telegram http://127.0.0.1:PORT/ --expected expected.json [--json OUT]

Every accepted message is matched to a post by its marker (`job-NNNN` or `noise-NNNN`) and
counted by (chat, marker):

  expected   = job markers x subscriber chats
  delivered  = distinct expected (chat, job) pairs that arrived
  lost       = expected - delivered
  duplicated = messages for expected pairs - distinct expected pairs
  wrong      = messages that should never have been sent: a non-job marker, an unknown
               chat, or no marker at all

Prints one line `lost=N duplicated=N delivered=N expected=N wrong=N messages=N` and, with
--json, writes the same numbers plus up to 20 examples of each problem to OUT.
"""

import argparse
import collections
import json
import re
import sys
import urllib.request

MARKER = re.compile(r"\b(job|noise)-(\d{4})\b")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--telegram", required=True)
    ap.add_argument("--expected", required=True)
    ap.add_argument("--json")
    a = ap.parse_args()

    with open(a.expected, encoding="utf-8") as f:
        exp = json.load(f)
    jobs = set(exp["jobs"])
    chats = set(exp["chats"])

    url = a.telegram.rstrip("/") + "/__testkit/messages"
    with urllib.request.urlopen(url, timeout=60) as r:
        messages = json.load(r)

    counts = collections.Counter()
    wrong = []
    for m in messages:
        if m.get("deleted"):
            continue
        text = m.get("visible_text") or m.get("text") or ""
        found = MARKER.findall(text)
        markers = {f"{k}-{n}" for k, n in found}
        chat = m.get("chat_id")
        if len(markers) != 1:
            wrong.append({"chat": chat, "seq": m.get("seq"), "why": f"markers {sorted(markers)}"})
            continue
        marker = markers.pop()
        if marker not in jobs or chat not in chats:
            wrong.append({"chat": chat, "seq": m.get("seq"), "why": f"unexpected {marker}"})
            continue
        counts[(chat, marker)] += 1

    expected = len(jobs) * len(chats)
    delivered = len(counts)
    lost = expected - delivered
    duplicated = sum(counts.values()) - delivered
    missing = [
        {"chat": c, "job": j}
        for j in sorted(jobs)
        for c in sorted(chats)
        if (c, j) not in counts
    ]
    dups = [{"chat": c, "job": j, "times": n} for (c, j), n in counts.items() if n > 1]
    summary = {
        "lost": lost,
        "duplicated": duplicated,
        "delivered": delivered,
        "expected": expected,
        "wrong": len(wrong),
        "messages": len(messages),
    }
    if a.json:
        with open(a.json, "w", encoding="utf-8") as f:
            json.dump({**summary, "missing_examples": missing[:20],
                       "duplicate_examples": dups[:20], "wrong_examples": wrong[:20],
                       "missing_jobs": sorted({x["job"] for x in missing})}, f, indent=1)
    print(" ".join(f"{k}={v}" for k, v in summary.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
