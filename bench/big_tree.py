#!/usr/bin/env python3
"""A tree of 25M lines or more from one real repository, for issue 47's
large-tree benchmark: N copies of its Java, Scala and Python sources, each
under a root of its own and with its package names rewritten, so that the
copies are N projects' worth of distinct symbols, not one project's
symbols written N times (copied as they are, the copies' symbols would
merge and their edges drop).

Made from Apache Kafka at 1eb7644349c (5,079 Java files, 504 Scala, 167
Python: 1.40M lines), 18 copies give 25.2M lines:

    git clone https://github.com/apache/kafka /tmp/kafka   # or any checkout
    git -C /tmp/kafka checkout 1eb7644349c
    python3 bench/big_tree.py --source /tmp/kafka --copies 18 --out /tmp/big25

In copy K, `org.apache.kafka` becomes `org.apache.kafkaK` everywhere (the
Java packages, their imports and qualified names), and the other packages
(`kafka.…`, Java's and Scala's, and `test.plugins`) become `kafkaK.…` and
`testK.…` where a `package` or `import` names them.
Prints the files and lines written. The tree is a git repository (one
commit), as a served project usually is.

Usage: bench/big_tree.py --source DIR --copies N --out DIR
"""

import argparse
import os
import re
import subprocess
import sys

EXTENSIONS = (".java", ".scala", ".py")
OTHER_PACKAGES = re.compile(r"^(\s*(?:package|import)\s+(?:static\s+)?)(kafka|test)\b", re.M)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--source", required=True)
    p.add_argument("--copies", type=int, required=True)
    p.add_argument("--out", required=True)
    a = p.parse_args()
    if os.path.exists(a.out) and os.listdir(a.out):
        sys.exit(f"{a.out} exists and is not empty: give a new directory")
    sources = []
    for root, dirs, files in os.walk(a.source):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for f in sorted(files):
            if f.endswith(EXTENSIONS):
                sources.append(os.path.relpath(os.path.join(root, f), a.source))
    texts = {}
    for rel in sources:
        with open(os.path.join(a.source, rel), encoding="utf-8", errors="surrogateescape") as f:
            texts[rel] = f.read()
    files = lines = 0
    for k in range(1, a.copies + 1):
        for rel, text in texts.items():
            text = text.replace("org.apache.kafka", f"org.apache.kafka{k}")
            if not rel.endswith(".py"):
                text = OTHER_PACKAGES.sub(lambda m: f"{m.group(1)}{m.group(2)}{k}", text)
            path = os.path.join(a.out, f"copy{k:02}", rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8", errors="surrogateescape") as f:
                f.write(text)
            files += 1
            lines += text.count("\n")
    git = ["git", "-C", a.out, "-c", "user.email=bench@signpost", "-c", "user.name=bench"]
    subprocess.run(["git", "init", "-q", a.out], check=True)
    subprocess.run(git + ["add", "-A"], check=True)
    subprocess.run(git + ["commit", "-qm", f"{a.copies} copies of {os.path.abspath(a.source)}"], check=True)
    print(f"{files} files, {lines} lines in {a.copies} copies under {a.out}")


if __name__ == "__main__":
    main()
