#!/usr/bin/env python3
"""Fails (exit 1) when docs/ and the code no longer match (docs/README.md#citing-the-docs):

1. a path that docs/*.md or README.md names does not exist: an inline code span whose first
   segment is a top-level folder of the repository (`core/quota_book.h`, `bench/sim/*.cpp`,
   `extender/http/router.{h,cpp}`), a source file named bare (`policy_table.h`: some file of the
   repository has that name), or a Markdown link to a page or heading that does not exist, or
   out of the repository. A path named outside the repository (the real-cluster binaries' fallback
   beside a checkout, docs/architecture.md#the-real-control-plane-optional) is the machine's, not
   checked here (test.sh checks that nothing else names a folder beside the repository);
2. a citation of docs/ in any source file names a page or a heading that docs/ does not have. The
   one citation syntax is `docs/<page>.md#<heading>`, the heading as GitHub anchors it
   (lower-case, punctuation dropped, spaces to hyphens:
   `docs/capacity-semantics.md#31-the-max-check`); `docs/<page>.md` cites a whole page. A comment
   that names a file that does not exist (`core/x.h`: a top-level folder first, a file name last;
   from the root or from a folder holding the commenting file), or a page no file of the
   repository is (`product.md`), is reported too;
3. a source file cites in another way: a page and a section number (`capacity-semantics 1.1`,
   `capacity-semantics.md section 5`), a bare `section 4` or `§4` (except for external standards
   named on the same line: "RFC 4648 section 4"), the old spec's numbers used as names in a
   comment ("runs 1.2 on every node", "1.1 step 2"; not "YAML 1.2", "TLS 1.2", "HTTP/1.1", nor a
   value: "<= 0.1 s", "1.2 ms", "(0.1, 1]"), a heading by its quoted title
   (`architecture.md "How a /bind travels"`, with a comma after the page or not), or the old
   spec outside the repository (`shared/spec`).

Prints each finding as file:line: what. Usage: check_docs.py [--expect FILE] [repository root]
(default: the repository holding this script). With --expect, succeeds when the findings are
exactly FILE's lines (the check's own test runs it on a tree that must fail).
"""
import glob
import os
import re
import sys

ARGS = sys.argv[1:]
EXPECT = None
if ARGS[:1] == ["--expect"] and len(ARGS) >= 2:
    EXPECT, ARGS = ARGS[1], ARGS[2:]
ROOT = os.path.abspath(ARGS[0] if ARGS else os.path.join(os.path.dirname(__file__), ".."))
# Folders that are build products or not part of the sources.
SKIP_DIRS = {".git", "out", "node_modules", "__pycache__"}
SOURCE_EXTENSIONS = (".h", ".cpp", ".cc", ".in", ".py", ".sh", ".cmake", ".txt", ".yaml", ".yml",
                     ".html", ".js", ".md", ".json")
BARE_FILE_EXTENSIONS = (".h", ".cpp", ".py", ".sh", ".cmake", ".in", ".md")
# Every page of docs/ (numbered sections or not: a number after a page name is a section number).
PAGES = tuple(sorted(os.path.splitext(f)[0] for f in os.listdir(os.path.join(ROOT, "docs"))
                    if f.endswith(".md")))

findings = []


def skipped_dir(name):
    return name in SKIP_DIRS or name.startswith("build") or name.startswith(".")


def walk(top):
    for dirpath, dirnames, filenames in os.walk(top):
        # Test fixtures are data (captures, manifests, trees this check must fail on), not sources.
        dirnames[:] = sorted(d for d in dirnames if not skipped_dir(d) and
                             os.path.join(dirpath, d) != os.path.join(ROOT, "tests", "fixtures"))
        for f in sorted(filenames):
            yield os.path.join(dirpath, f)


def rel(path):
    return os.path.relpath(path, ROOT)


def slug(heading):
    """GitHub's anchor of a heading: lower-case, inline code marks and punctuation dropped."""
    text = heading.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def markdown_lines(path):
    """(line number, line, in a fenced block) for every line of a Markdown file."""
    fenced = False
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if line.lstrip().startswith("```"):
                fenced = not fenced
                yield number, line, True
                continue
            yield number, line, fenced


_anchor_cache = {}


def anchors(path):
    if path not in _anchor_cache:
        seen = {}
        out = set()
        for _, line, fenced in markdown_lines(path):
            m = re.match(r"^(#{1,6})\s+(.*?)\s*#*\s*$", line)
            if fenced or not m:
                continue
            base = slug(m.group(2))
            n = seen.get(base, 0)
            out.add(base if n == 0 else f"{base}-{n}")
            seen[base] = n + 1
        _anchor_cache[path] = out
    return _anchor_cache[path]


TOP_LEVEL = {e for e in os.listdir(ROOT) if not skipped_dir(e)}
BASENAMES = {os.path.basename(p) for p in walk(ROOT)}


def expand_braces(text):
    m = re.search(r"\{([^{}]*)\}", text)
    if not m:
        return [text]
    out = []
    for choice in m.group(1).split(","):
        out.extend(expand_braces(text[:m.start()] + choice + text[m.end():]))
    return out


def path_exists(candidate):
    for expanded in expand_braces(candidate):
        full = os.path.join(ROOT, expanded)
        if any(c in expanded for c in "*?["):
            if not glob.glob(full, recursive=True):
                return False
        elif not os.path.exists(full):
            return False
    return True


def check_named_path(where, token):
    token = token.strip().rstrip(".,;:")
    if not token or " " in token or token.startswith(("/", "$", "-", "http")) or "<" in token:
        return
    if token.startswith("../"):
        return  # the machine's, not the repository's
    token = token[2:] if token.startswith("./") else token
    token, _, anchor = token.partition("#")
    head = token.split("/", 1)[0]
    if "/" in token:
        if head in TOP_LEVEL and not path_exists(token):
            findings.append(f"{where}: `{token}` does not exist")
        elif head in TOP_LEVEL and anchor and token.endswith(".md") and \
                anchor not in anchors(os.path.join(ROOT, token)):
            findings.append(f"{where}: `{token}#{anchor}`: no such heading")
        return
    if token.endswith(BARE_FILE_EXTENSIONS) and re.fullmatch(r"\w[\w.\-]*", token):
        if token not in BASENAMES:
            findings.append(f"{where}: no file of the repository is named `{token}`")


def check_link(where, page_dir, target):
    if re.match(r"^[a-z]+:", target):  # a URL
        return
    path, _, anchor = target.partition("#")
    full = os.path.normpath(os.path.join(page_dir, path)) if path else None
    if full is not None:
        if not full.startswith(ROOT + os.sep) and full != ROOT:
            findings.append(f"{where}: link `{target}` leaves the repository")
            return
        if not os.path.exists(full):
            findings.append(f"{where}: link `{target}` names no file")
            return
    if anchor and full is not None and full.endswith(".md") and anchor not in anchors(full):
        findings.append(f"{where}: link `{target}`: {rel(full)} has no heading #{anchor}")


def check_page(path):
    page_dir = os.path.dirname(path)
    for number, line, fenced in markdown_lines(path):
        if fenced:
            continue
        where = f"{rel(path)}:{number}"
        for span in re.findall(r"`([^`]+)`", line):
            check_named_path(where, span)
        check_citations(where, re.sub(r"`[^`]+`", "", line))
        for target in re.findall(r"\]\(([^)\s]+)\)", line):
            if target.startswith("#"):
                if target[1:] not in anchors(path):
                    findings.append(f"{where}: link `{target}`: no such heading here")
                continue
            check_link(where, page_dir, target)


CITATION = re.compile(r"docs/([\w\-]+\.md)(?:#([\w\-]+))?")
LOOSE = [
    (re.compile(r"\b(?:%s)(?:\.md)?[ ,:]*(?:§ ?|sections? )?\d+(?:\.\d+)*\b" % "|".join(PAGES)),
     "cites a section by number"),
    (re.compile(r"(?<![\w/])(?:§ ?\d|sections? \d)"), "cites a bare section"),
    (re.compile(r"shared/spec"), "cites the old spec outside the repository"),
    (re.compile(r"\b(?:%s)\.md,? \"" % "|".join(PAGES)),
     "cites a heading by its quoted title"),
]


# The old spec's section numbers, written bare in a comment as names of its rules.
OLD_NUMBER = re.compile(r"(?<![\w/.\-])(0\.1|1\.[1-3])(?![\w.%/])")
# Words before a number that make it a version or a value, not a section.
# A comparison or arithmetic before it ("<= 0.1 s", "x 1.2") makes it a value too.
NOT_A_SECTION = re.compile(r"(YAML|TLS|HTTP|version|v|--[\w-]+|[:=<>*+×~])\s*$", re.IGNORECASE)
# A unit after a number makes it a quantity ("0.1 s", "1.2 ms", "1.1x", "1.3 cpu"), and so does
# the rest of an interval ("(0.1, 1]").
A_QUANTITY = re.compile(r"\s*(?:(?:s|ms|us|µs|ns|sec|seconds?|minutes?|x|cpus?|cores?|[KMGT]i?B?|"
                        r"pods?/s)\b|,\s*[\d.]+\s*[\])])", re.IGNORECASE)


# A file of the repository named in a comment (its first segment a top-level folder, an extension
# last: `extender/v1`, an API, is not a file), and a Markdown page named bare.
NAMED_PATH = re.compile(r"(?<![\w./\-])((?:%s)/[\w./\-*{},]*\.[a-z]+)(?![\w/])" %
                        "|".join(re.escape(e) for e in sorted(TOP_LEVEL) if os.path.isdir(
                            os.path.join(ROOT, e))))
NAMED_PAGE = re.compile(r"(?<![\w./\-])([\w\-]+\.md)\b")


def comment_of(path, line):
    """The comment part of a line of code ("" when none); the whole line for prose files."""
    if path.endswith((".h", ".cpp", ".cc", ".js")):
        at = line.find("//")
        return line[at + 2:] if at >= 0 else ""
    if path.endswith((".py", ".sh", ".cmake", ".txt", ".yaml", ".yml")):
        at = line.find("#")
        return line[at + 1:] if at >= 0 else (line if path.endswith((".yaml", ".yml")) else "")
    return line


def check_citations(where, text):
    for page, anchor in CITATION.findall(text):
        full = os.path.join(ROOT, "docs", page)
        if not os.path.exists(full):
            findings.append(f"{where}: cites docs/{page}, which does not exist")
        elif anchor and anchor not in anchors(full):
            findings.append(f"{where}: cites docs/{page}#{anchor}: no such heading")


def check_source(path):
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.readlines()
    except (UnicodeDecodeError, OSError):
        return
    for number, line in enumerate(lines, 1):
        where = f"{rel(path)}:{number}"
        check_citations(where, line)
        if "RFC" in line:
            continue
        taken = []  # spans already reported on this line
        for pattern, what in LOOSE:
            for m in pattern.finditer(line):
                if any(s <= m.start() < e for s, e in taken):
                    continue
                taken.append(m.span())
                findings.append(f"{where}: \"{m.group(0)}\" {what} "
                                "(write docs/<page>.md#<heading>)")
        comment = comment_of(path, line)
        offset = len(line) - len(comment)
        for m in NAMED_PATH.finditer(comment):
            folders = []  # the commenting file's folder and those above it, up to the root
            folder = os.path.dirname(path)
            while folder != ROOT and folder.startswith(ROOT):
                folders.append(os.path.relpath(folder, ROOT))
                folder = os.path.dirname(folder)
            if not path_exists(m.group(1)) and \
                    not any(path_exists(os.path.join(f, m.group(1))) for f in folders):
                findings.append(f"{where}: `{m.group(1)}` does not exist")
        for m in NAMED_PAGE.finditer(comment):
            if m.group(1) not in BASENAMES:
                findings.append(f"{where}: no file of the repository is named `{m.group(1)}`")
        for m in OLD_NUMBER.finditer(comment):
            if any(s <= offset + m.start() < e for s, e in taken):
                continue
            if not NOT_A_SECTION.search(comment[:m.start()]) and \
                    not A_QUANTITY.match(comment, m.end()):
                findings.append(f"{where}: \"{m.group(0)}\" names a rule by the old spec's "
                                "number (name it, and cite docs/<page>.md#<heading>)")


def main():
    pages = sorted(glob.glob(os.path.join(ROOT, "docs", "*.md")))
    readme = os.path.join(ROOT, "README.md")
    if os.path.exists(readme):
        pages.append(readme)
    for page in pages:
        check_page(page)
    own = {os.path.abspath(__file__), os.path.abspath(EXPECT) if EXPECT else None}
    for path in walk(ROOT):
        if path.endswith(SOURCE_EXTENSIONS) and os.path.abspath(path) not in own and \
                path not in pages:
            check_source(path)
    if EXPECT is not None:
        with open(EXPECT, encoding="utf-8") as f:
            expected = [line.rstrip("\n") for line in f if line.strip()]
        if findings == expected:
            print(f"check_docs: the {len(findings)} expected finding(s), no other")
            return 0
        print("check_docs: findings differ from " + EXPECT)
        for line in expected:
            if line not in findings:
                print("  missing: " + line)
        for line in findings:
            if line not in expected:
                print("  unexpected: " + line)
        return 1
    for f in findings:
        print(f)
    if findings:
        print(f"check_docs: {len(findings)} finding(s): docs/ and the code disagree "
              "(docs/README.md#citing-the-docs)", file=sys.stderr)
        return 1
    print("check_docs: every path and citation resolves")
    return 0


if __name__ == "__main__":
    sys.exit(main())
