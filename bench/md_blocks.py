"""md_blocks.py — what the generators of docs/results.md share (bench/results_md.py,
bench/ftl_results_md.py, bench/nvm_results_md.py import it from their own directory).

A generated block is the text between a marker line and `<!-- end: NAME -->`; each generator has
its own marker (MARK: group 1 the marker line, 2 the block's name, 4 the end line), so no
generator touches another's blocks. render() replaces every block's body with what its
generator gives (one newline before the end line); write_or_check() writes the file only if it
changed, or with --check says whether it is stale, never writing.
"""
import json
import sys


def load(path):
    """The JSON in the file at `path`; OSError or ValueError if it cannot be read."""
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def fmt(x, digits=3):
    """A figure: "–" if missing, whole with thousands commas from 1000 on, else `digits`
    significant digits."""
    if x is None:
        return "–"
    if abs(x) >= 1000:
        return f"{x:,.0f}"
    return f"{x:.{digits}g}"


def verdict(v):
    """A claim's verdict: True **yes**, False **no**, None "not run", a word in bold."""
    return {True: "**yes**", False: "**no**", None: "not run"}.get(v, f"**{v}**")


def render(text, mark, gen, tool):
    """`text` with the body of every block `mark` finds made by gen[NAME](), and the names
    found. A block no generator makes ends the run (SystemExit naming `tool`)."""
    seen = set()

    def repl(m):
        name = m.group(2)
        if name not in gen:
            raise SystemExit(f"{tool}: unknown block '{name}'")
        seen.add(name)
        return m.group(1) + gen[name]().rstrip("\n") + "\n" + m.group(4)

    return mark.sub(repl, text), seen


def lacks_blocks(path, gen, seen, tool):
    """2 (said on stderr) if the markdown at `path` lacks some of gen's blocks, else 0."""
    if seen != set(gen):
        print(f"{tool}: {path} lacks the blocks {', '.join(sorted(set(gen) - seen))}",
              file=sys.stderr)
        return 2
    return 0


def write_or_check(path, text, new, check, tool, rerun):
    """With `check`: 1 (said on stderr, with how to `rerun`) if `new` differs from `text`, else
    0. Without: writes `new` to `path` if it differs; 0."""
    if check:
        if new != text:
            print(f"{tool}: {path} is stale: rerun {rerun}", file=sys.stderr)
            return 1
        return 0
    if new != text:
        with open(path, "w", encoding="utf-8") as f:
            f.write(new)
    return 0
