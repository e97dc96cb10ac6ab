#!/usr/bin/env python3
"""Deterministic answer generator for differential fuzzing of the reference answer reader.

The public implementation reads an LLM's answer (a formula or a regular
expression) in a very particular way: logic answers are lower-cased, pass
through a handful of plain substring substitutions and are then read by
nltk's ``read_logic`` (one formula per ``str.splitlines()`` line, each line
``str.strip()``-ed, ``#`` lines skipped) before Prover9 judges
``phi0 <-> phi1``; regex answers are stripped, lose their spaces and
backslashes and are handed to a JavaScript tool on its command line.  This
script writes answers that sit on the edges of that reading so that the
public code and a re-implementation can be run on the same answers and
compared.

Every answer is built from a dataset item (the item's formula is parsed into
a small tree and printed back with the chosen spellings, rewrites or
mutations) or from an answer of the answer corpus (character-level
mutations).  The output is JSON Lines, one case per line::

    {"id", "dataset", "phi0", "phi0_source", "answer", "category", "note", "hard"}

The output is a pure function of ``--seed``: every random choice comes from
``random.Random`` instances seeded with a string derived from the seed, and
all collections are iterated in insertion or sorted order, so two runs with
the same seed give byte-identical output whatever ``PYTHONHASHSEED`` is.

Inputs, relative to the project root given with ``--root``::

    tests/reference-oracle/datasets/<dataset>/seed-<n>.json
    tests/reference-oracle/answers/corpus.jsonl

Usage::

    python3 generate_answers.py --root <project root> [--seed 0] [--out answers.jsonl]

Without ``--out`` the cases go to standard output.  A table of counts per
dataset and category is printed to standard error.
"""

import argparse
import collections
import json
import os
import random
import sys

DATASETS = ("plogic", "ksat", "fol", "fol_human", "regex")
LOGIC_DATASETS = ("plogic", "ksat", "fol", "fol_human")
FIRST_ORDER = ("fol", "fol_human")
SEEDS = {"plogic": (0, 1, 2), "ksat": (0, 1, 2), "fol": (0, 1, 2),
         "fol_human": (0, 1, 2), "regex": (0,)}
TARGETS = {"plogic": 1500, "ksat": 500, "fol": 1300, "fol_human": 800, "regex": 900}
CORPUS_SHARE = {"plogic": 130, "ksat": 30, "fol": 100, "fol_human": 70, "regex": 70}
MAX_ANSWER = 59000

LOGIC_CATEGORIES = (
    "rewrite_equivalent", "rewrite_mutated", "connective_spelling",
    "quantifier_spelling", "spacing", "line_breaks", "comment_lines",
    "whitespace_strip", "symbols", "equality", "terms", "lambda",
    "depth_parens", "depth_negations", "depth_chain", "names_nonascii",
    "names_prover_variable", "names_ascii_edge", "bound_v", "prose", "fences",
    "mixed_scripts", "case_folding",
)
FIRST_ORDER_ONLY = ("quantifier_spelling",)
REGEX_CATEGORIES = (
    "regex_rewrite", "regex_mutated", "regex_spelling", "regex_whitespace",
    "regex_line_breaks", "regex_code_units", "regex_leading_dash",
    "regex_prose", "regex_malformed", "regex_depth",
)
CORPUS_CATEGORY = "corpus_mutation"
# Rules added after the first 5,000 answers: each dataset's cases of these
# come after its others, so the earlier answers and their ids stay as they were.
LATER_RULES = collections.OrderedDict((
    ("quoted_names", {"plogic": 40, "ksat": 20, "fol": 40, "fol_human": 40}),
    ("bound_proposition", {"plogic": 40, "ksat": 20, "fol": 40, "fol_human": 30}),
))

# Characters on which Python's str.splitlines() splits (besides "\n", which
# the public code deletes before reading).
LINE_BREAKS = ("\r\n", "\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85",
               "\u2028", "\u2029")
# Characters removed by Python's str.strip() (str.isspace()).
STRIP_WS = ("\t", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x1f", "\x85",
            "\xa0", "\u1680") + tuple(chr(c) for c in range(0x2000, 0x200B)) + (
            "\u2028", "\u2029", "\u202f", "\u205f", "\u3000")
# Invisible characters that str.strip() keeps.
NON_STRIP = ("\u200b", "\ufeff", "\u180e", "\u2060", "\u200c", "\u200d")
# Characters outside the Basic Multilingual Plane (two UTF-16 code units).
ASTRAL = ("😀", "𝟎", "𝟏", "𝟘", "𝟙", "🙂", "𐐀", "𝑎", "🂡", "𠀀", "𝔵", "🔥")

# Depths near the points where nltk's recursive reading and printing run out of
# Python's default recursion limit (1000 frames, 3-6 frames per nesting level).
K_NEAR = tuple(sorted({t + d for t in (124, 164, 200, 248, 328, 333, 497, 664, 995)
                       for d in range(-12, 13, 3)}))
K_FORCED = (1, 3000, 1000, 333, 500, 2, 1500, 250)

DATASET_STYLE = {"and": " ∧ ", "or": " v ", "not": "¬", "imp": " -> ", "iff": " <-> ",
                 "all": "∀ ", "ex": "∃ ", "qsep": ".", "argsep": ",", "group": True,
                 "wrapq": False, "outer": True, "lpar": "(", "rpar": ")"}
NLTK_STYLE = dict(DATASET_STYLE, **{"and": " & ", "or": " | ", "not": "-",
                                    "all": "all ", "ex": "exists "})

AND_VALID = (" ∧ ", "∧", " & ", "&", " and ", " AND ", " ^ ", "^", "  ∧  ", " ∧", "∧ ", " And ")
AND_ODD = (" ⋀ ", " && ", " /\\ ", " · ", " ∩ ", " ＆ ", " and&", " an d ")
OR_VALID = (" v ", " ∨ ", " | ", "|", " or ", " OR ", " V ", " Or ", "  v  ")
OR_ODD = (" ∨", "∨ ", "∨", " ⋁ ", " || ", " \\/ ", " + ", " ∪ ", "v", " ｖ ", " ν ", "\tv\t")
NOT_VALID = ("¬", "¬ ", "-", "- ", "!", "! ", "not ", "NOT ", "Not ", "¬¬¬", "--")
NOT_ODD = ("~", "~ ", "∼", "￢", "−", "not", "¬~", "‐")
IMP_VALID = (" -> ", "->", " → ", "→", " => ", " implies ", " IMPLIES ", "=>")
IMP_ODD = (" ⇒ ", " ⊃ ", " —> ", " - > ", " --> ", " ->> ", " ⟶ ")
IFF_VALID = (" <-> ", " ↔ ", "↔", " <=> ", " iff ", "<->", " IFF ")
IFF_ODD = (" ⇔ ", " ≡ ", " <- > ", " <==> ", " = ", " == ", " ⟷ ")
ALL_VALID = ("∀ ", "∀", "all ", "forall ", "ALL ", "Forall ", "∀  ")
ALL_ODD = ("∀_", "for all ", "Ａll ", "∀:", "A ", "∀ ∀ ")
EX_VALID = ("∃ ", "∃", "exists ", "some ", "exist ", "EXISTS ", "Some ")
EX_ODD = ("∃!", "there exists ", "∃_", "E ", "∄ ", "iota ")
QSEP_VALID = (".", " .", ". ", " . ", "PAREN", "PAREN_TIGHT")
QSEP_ODD = (":", ",", " ", "..", "·", "|")

SYMBOL_NAMES = ("0", "1", "7", "42", "007", "3.14", "1e5", "1p", "2x1", "9pred", "12",
                "p$1", "$p", "p_1", "_p", "__", "$", "p1_", "pred_1", "a$b", "$1",
                "_1", "p01", "p1$", "0x1f", "1_000", "p-1", "p+1")
NONASCII_NAMES = ("pé1", "café", "naïve", "ñandú", "ωμέγα", "πρ1", "λόγος", "кот",
                  "пред1", "猫", "述語1", "名前", "😀", "🙂1", "p😀", "ß", "straße",
                  "øre", "åse", "ǆ", "ﬁle", "İstanbul", "ΣΟΦΙΑΣ", "\u212a1", "Ⅻ", "ｐ１",
                  "p\u0301", "e\u0301", "𝑝1", "p٣", "p¹", "élan", "ĳ", "ǅx", "ﬀ",
                  "中文谓词", "Ωmega", "ábc", "ǰ1")
NONASCII_UZ_NAMES = ("über", "ü1", "ûx", "ýes", "ÿ", "ŵ1", "ẋ", "ẑeta", "výška", "žena",
                     "zé", "xé1", "yπ", "wкот", "v猫", "uñ", "x😀", "vé", "Über", "Ünï",
                     "Ẍ", "ｖ1", "ⅴ", "ν1", "ʋ", "уes", "хр", "z\u0301", "Ŷ2", "ŭ")
PROVER_VAR_NAMES = ("u", "v", "w", "x", "y", "z", "u1", "v2", "w3", "x13", "y0", "z9",
                    "var", "vote", "world", "xeno", "yes", "zed", "under1", "V1", "X",
                    "Y7", "ux", "vv", "wp1", "x1", "x2", "zpred", "v1v")
ASCII_EDGE_NAMES = ("a", "b", "c", "d", "e", "f", "p", "q", "r", "s", "t", "e1", "e12",
                    "e01", "e0", "E3", "P1", "PRED1", "Pred1", "pReD1", "and", "or", "not",
                    "all", "some", "exists", "exist", "forall", "iota", "implies", "iff",
                    "true", "false", "T", "F", "allx", "notp", "p1and", "orp", "p" * 200,
                    "pred" + "1" * 50, "p000001", "ee", "abc", "A", "Q")
BOUND_VAR_ODD = ("abc", "var", "pp", "xx1", "X1", "E", "e", "e7", "a", "f1", "P", "1", "x_1", "x$")

PROSE_TEMPLATES = (
    "The formula is {F}", "{F}.", "Answer: {F}", "Formula: {F}", "φ1 = {F}",
    "Here is the formula:{LB}{F}", "{F}{LB}{LB}This formula says that the conditions hold.",
    "Sure! {F}", "I think the answer is {F}.", "{F} is the answer", "\"{F}\"", "'{F}'",
    "{F};", "{F},", "The answer:{LB}{F}{LB}Explanation: each symbol is kept.",
    "{F} (as requested)", "ok", "I cannot translate this.", "formula", "{F} {F}",
    "{F}{LB}{F}", "Translation{LB}{F}", "{F} -- done", "{F} // comment", "{F} % comment",
    "{F}!", "Answer{LB}{F}", "{F}{LB}ok", "ok{LB}{F}", "{LB}{F}{LB}Hope this helps",
    "FOL: {F}", "{F} ∎", "=> {F}", "{F} <=", "answer = {F}", "{F}\n\n",
)
FENCE_TEMPLATES = (
    "```\n{F}\n```", "```logic\n{F}\n```", "```{LB}{F}{LB}```", "```fol{LB}{F}{LB}```",
    "`{F}`", "**{F}**", "$ {F} $", "$${F}$$", "\\({F}\\)", "<formula>{F}</formula>",
    "```{F}```", "~~~{LB}{F}{LB}~~~", "    {F}", "> {F}", "- {F}", "* {F}", "1. {F}",
    "{F}{LB}```", "```{LB}{F}", "```\n{F}", "<code>{F}</code>", "[{F}]", "{{{F}}}",
    "__{F}__", "_{F}_", "```text\r\n{F}\r\n```", "```python\n{F}\n```",
)


# ---------------------------------------------------------------------------
# Input
# ---------------------------------------------------------------------------

class Item:
    """One dataset item: its formula string, parsed tree and provenance."""

    __slots__ = ("dataset", "fs", "tree", "source", "complexity")

    def __init__(self, dataset, fs, tree, source, complexity):
        """Store the fields."""
        self.dataset = dataset
        self.fs = fs
        self.tree = tree
        self.source = source
        self.complexity = complexity


def load_items(root, dataset):
    """Read every seed file of a dataset and parse its formulas."""
    items = []
    field = "depth" if dataset == "regex" else "num_operators"
    for seed in SEEDS[dataset]:
        path = os.path.join(root, "tests", "reference-oracle", "datasets", dataset,
                            "seed-%d.json" % seed)
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)["data"]
        for entry in data:
            fs = entry["fs"]
            tree = parse_regex(fs) if dataset == "regex" else parse_formula(fs)
            src = "seed-%d idx %d (%s=%s)" % (seed, entry["idx"], field, entry[field])
            items.append(Item(dataset, fs, tree, src, entry[field]))
    return items


def load_corpus(root):
    """Read the answer corpus, skipping the slow parity cases."""
    path = os.path.join(root, "tests", "reference-oracle", "answers", "corpus.jsonl")
    out = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if not line.strip():
                continue
            rec = json.loads(line)
            if rec.get("hard") or rec.get("category", "").startswith("hard_"):
                continue
            out.append(rec)
    return out


# ---------------------------------------------------------------------------
# Logic formulas: tree, parser, printer
# ---------------------------------------------------------------------------
# Nodes: ("atom", name) ("pred", name, args) ("raw", text) ("not", x)
# ("and", xs) ("or", xs) ("imp", a, b) ("iff", a, b) ("q", kind, vars, body)

PREC = {"¬": 2, "Q": 5, "∧": 6, "∨": 7, None: 10}


def lex_formula(s):
    """Split a dataset formula into tokens (a lone 'v' is the or-operator)."""
    toks = []
    i = 0
    while i < len(s):
        c = s[i]
        if c.isspace():
            i += 1
        elif c in "(),.¬∧∨∀∃":
            toks.append(c)
            i += 1
        else:
            j = i
            while j < len(s) and (s[j].isalnum() or s[j] in "_$"):
                j += 1
            if j == i:
                raise ValueError("unexpected character %r in %r" % (c, s))
            word = s[i:j]
            toks.append("∨" if word == "v" else word)
            i = j
    return toks


class _FormulaParser:
    """Precedence parser mirroring nltk's reading of the dataset's formulas."""

    def __init__(self, toks):
        """Start at the first token."""
        self.toks = toks
        self.i = 0

    def peek(self):
        """Return the next token or None."""
        return self.toks[self.i] if self.i < len(self.toks) else None

    def take(self, expected=None):
        """Consume one token, optionally checking it."""
        tok = self.peek()
        if tok is None or (expected is not None and tok != expected):
            raise ValueError("expected %r, got %r" % (expected, tok))
        self.i += 1
        return tok

    def expr(self, ctx):
        """Parse one expression in the given precedence context."""
        tok = self.take()
        if tok == "¬":
            node = ("not", self.expr("¬"))
        elif tok in ("∀", "∃"):
            names = []
            while self.peek() not in (".", "(", None) and self.peek()[0].isalnum():
                names.append(self.take())
            if self.peek() == ".":
                self.take()
            node = ("q", "all" if tok == "∀" else "exists", tuple(names), self.expr("Q"))
        elif tok == "(":
            node = self.expr(None)
            self.take(")")
        elif tok[0].isalnum() or tok[0] in "_$":
            if self.peek() == "(":
                self.take("(")
                args = [self.take()]
                while self.peek() == ",":
                    self.take(",")
                    args.append(self.take())
                self.take(")")
                node = ("pred", tok, tuple(args))
            else:
                node = ("atom", tok)
        else:
            raise ValueError("unexpected token %r" % tok)
        chained = False
        while self.peek() in ("∧", "∨") and PREC[self.peek()] < PREC[ctx]:
            op = self.take()
            rhs = self.expr(op)
            kind = "and" if op == "∧" else "or"
            if chained and node[0] == kind:
                node = (kind, node[1] + (rhs,))
            else:
                node = (kind, (node, rhs))
            chained = True
        return node


def parse_formula(s):
    """Parse a dataset formula into a tree."""
    p = _FormulaParser(lex_formula(s))
    node = p.expr(None)
    if p.peek() is not None:
        raise ValueError("trailing tokens in %r" % s)
    return node


def kids(n):
    """Return the sub-formulas of a node as a list."""
    t = n[0]
    if t == "not":
        return [n[1]]
    if t in ("and", "or"):
        return list(n[1])
    if t in ("imp", "iff"):
        return [n[1], n[2]]
    if t == "q":
        return [n[3]]
    return []


def with_kids(n, ks):
    """Rebuild a node with new sub-formulas."""
    t = n[0]
    if t == "not":
        return ("not", ks[0])
    if t in ("and", "or"):
        return (t, tuple(ks))
    if t in ("imp", "iff"):
        return (t, ks[0], ks[1])
    if t == "q":
        return ("q", n[1], n[2], ks[0])
    return n


def subnodes(n, path=(), children=None):
    """Yield (path, node) for every node in pre-order (`children` gives a node's children)."""
    children = children or kids
    yield path, n
    for i, k in enumerate(children(n)):
        yield from subnodes(k, path + (i,), children)


def replace_at(n, path, new, children=None, rebuild=None):
    """Return the tree with the node at path replaced (`children`/`rebuild` read and remake a node)."""
    children, rebuild = children or kids, rebuild or with_kids
    if not path:
        return new
    ks = children(n)
    ks[path[0]] = replace_at(ks[path[0]], path[1:], new, children, rebuild)
    return rebuild(n, ks)


def nodes_of(n, types):
    """List (path, node) of the nodes whose type is in types."""
    return [(p, x) for p, x in subnodes(n) if x[0] in types]


def neg(x):
    """Negate a formula, cancelling a leading negation."""
    return x[1] if x[0] == "not" else ("not", x)


def map_names(n, f):
    """Rename symbols: f(kind, name) with kind in prop, pred, arg, qvar."""
    t = n[0]
    if t == "atom":
        return ("atom", f("prop", n[1]))
    if t == "pred":
        return ("pred", f("pred", n[1]), tuple(f("arg", a) for a in n[2]))
    if t == "q":
        return ("q", n[1], tuple(f("qvar", v) for v in n[2]), map_names(n[3], f))
    if t == "raw":
        return n
    return with_kids(n, [map_names(k, f) for k in kids(n)])


def vocab(n):
    """Collect the symbols of a formula in order of first occurrence."""
    out = {"prop": [], "pred": [], "const": [], "qvar": []}
    arity = {}

    def add(kind, name):
        """Record a name once."""
        if name not in out[kind]:
            out[kind].append(name)

    for _, x in subnodes(n):
        if x[0] == "atom":
            add("prop", x[1])
        elif x[0] == "pred":
            add("pred", x[1])
            arity.setdefault(x[1], len(x[2]))
            for a in x[2]:
                if not is_var_name(a):
                    add("const", a)
        elif x[0] == "q":
            for v in x[2]:
                add("qvar", v)
    out["arity"] = arity
    return out


def is_var_name(a):
    """True for the dataset's variable names (x1, x2, ...)."""
    return len(a) >= 2 and a[0] == "x" and a[1:].isdigit()


def render(n, st, top=True):
    """Print a tree with the given spelling style."""
    t = n[0]
    if t in ("atom", "raw"):
        return n[1]
    if t == "pred":
        return n[1] + "(" + st["argsep"].join(n[2]) + ")"
    if t == "not":
        return st["not"] + render(n[1], st, False)
    if t in ("and", "or", "imp", "iff"):
        op = st[{"and": "and", "or": "or", "imp": "imp", "iff": "iff"}[t]]
        parts = []
        for k in kids(n):
            s = render(k, st, False)
            if k[0] == "q" and st["wrapq"]:
                s = "(" + s + ")"
            parts.append(s)
        body = op.join(parts)
        if top and not st["outer"]:
            return body
        return st["lpar"] + body + st["rpar"]
    if t == "q":
        word = st["all"] if n[1] == "all" else st["ex"]
        heads = [word + " ".join(n[2])] if st["group"] else [word + v for v in n[2]]
        out = render(n[3], st, False)
        for h in reversed(heads):
            sep = st["qsep"]
            if sep == "PAREN":
                out = h + " (" + out + ")"
            elif sep == "PAREN_TIGHT":
                out = h + "(" + out + ")"
            else:
                out = h + sep + out
        return out
    raise ValueError("unknown node %r" % (t,))


def style(**kw):
    """Return the dataset style with some fields overridden."""
    st = dict(DATASET_STYLE)
    st.update(kw)
    return st


def show(n, **kw):
    """Render a tree in the dataset style with overrides."""
    return render(n, style(**kw))


# ---------------------------------------------------------------------------
# Logic rewrites (equivalent) and mutations (meaning-changing)
# ---------------------------------------------------------------------------

def nnf(n, pos=True):
    """Push negations down to the atoms."""
    t = n[0]
    if t in ("atom", "pred", "raw"):
        return n if pos else ("not", n)
    if t == "not":
        return nnf(n[1], not pos)
    if t in ("and", "or"):
        kind = t if pos else ("or" if t == "and" else "and")
        return (kind, tuple(nnf(k, pos) for k in n[1]))
    a, b = (n[1], n[2]) if t in ("imp", "iff") else (None, None)
    if t == "imp":
        if pos:
            return ("or", (nnf(a, False), nnf(b, True)))
        return ("and", (nnf(a, True), nnf(b, False)))
    if t == "iff":
        if pos:
            return ("and", (("or", (nnf(a, False), nnf(b, True))),
                            ("or", (nnf(a, True), nnf(b, False)))))
        return ("or", (("and", (nnf(a, True), nnf(b, False))),
                       ("and", (nnf(a, False), nnf(b, True)))))
    if t == "q":
        kind = n[1] if pos else ("exists" if n[1] == "all" else "all")
        return ("q", kind, n[2], nnf(n[3], pos))
    raise ValueError(t)


def commute(n, rng):
    """Shuffle the operands of every and/or node."""
    ks = [commute(k, rng) for k in kids(n)]
    if n[0] in ("and", "or"):
        rng.shuffle(ks)
    return with_kids(n, ks) if ks else n


def regroup(n, rng):
    """Turn flat and/or chains into nested binary ones."""
    ks = [regroup(k, rng) for k in kids(n)]
    if n[0] in ("and", "or") and len(ks) > 2:
        if rng.random() < 0.5:
            acc = ks[0]
            for k in ks[1:]:
                acc = (n[0], (acc, k))
        else:
            acc = ks[-1]
            for k in reversed(ks[:-1]):
                acc = (n[0], (k, acc))
        return acc
    return with_kids(n, ks) if ks else n


def some_literal(n, rng):
    """Pick an atomic formula of the tree."""
    leaves = nodes_of(n, ("atom", "pred"))
    return rng.choice(leaves)[1]


def ground_literal(n, rng):
    """Pick an atomic formula without variables, or any atom."""
    leaves = [x for _, x in nodes_of(n, ("atom", "pred"))
              if x[0] == "atom" or not any(is_var_name(a) for a in x[2])]
    return rng.choice(leaves) if leaves else some_literal(n, rng)


def rename_bound(n, old, new):
    """Rename a bound variable inside a quantifier's scope."""
    def f(kind, name):
        """Map one name."""
        return new if name == old and kind in ("arg", "qvar") else name
    return map_names(n, f)


# Rewrites that put the formula twice into the answer; Prover9's clause form of
# the equivalence grows multiplicatively with them, so they are kept to small formulas.
GROWING_REWRITES = ("idempotent", "iff_true", "absorption")
SMALL_LEAVES = 12


def eq_rewrite(tree, rng, is_fo):
    """Apply one equivalence-preserving rewrite; return (tree, name)."""
    ops = ["commute", "double_negation", "de_morgan", "nnf", "implication", "regroup",
           "tautology_conjunct", "contradiction_disjunct", "idempotent", "iff_true",
           "double_negation_inner", "absorption"]
    if is_fo:
        ops += ["alpha_rename", "quantifier_duality", "vacuous_quantifier", "split_quantifiers"]
    op = rng.choice(ops)
    if op in GROWING_REWRITES and len(nodes_of(tree, ("atom", "pred"))) > SMALL_LEAVES:
        op = "commute"
    if op == "commute":
        return commute(tree, rng), op
    if op == "double_negation":
        return ("not", ("not", tree)), op
    if op == "double_negation_inner":
        path, x = rng.choice(list(subnodes(tree)))
        return replace_at(tree, path, ("not", ("not", x))), op
    if op == "de_morgan":
        cands = nodes_of(tree, ("and", "or"))
        if not cands:
            return ("not", ("not", tree)), "double_negation"
        path, x = rng.choice(cands)
        dual = "or" if x[0] == "and" else "and"
        return replace_at(tree, path, ("not", (dual, tuple(neg(k) for k in x[1])))), op
    if op == "nnf":
        return nnf(tree), op
    if op == "implication":
        cands = nodes_of(tree, ("or",))
        if not cands:
            lit = ground_literal(tree, rng)
            return ("imp", ("not", tree), ("and", (lit, ("not", lit)))), "implication_from_false"
        path, x = rng.choice(cands)
        ks = list(x[1])
        i = rng.randrange(len(ks))
        first = ks.pop(i)
        rest = ks[0] if len(ks) == 1 else ("or", tuple(ks))
        return replace_at(tree, path, ("imp", neg(first), rest)), op
    if op == "regroup":
        return regroup(tree, rng), op
    lit = ground_literal(tree, rng)
    if op == "tautology_conjunct":
        return ("and", (tree, ("or", (lit, ("not", lit))))), op
    if op == "contradiction_disjunct":
        return ("or", (tree, ("and", (lit, ("not", lit))))), op
    if op == "idempotent":
        return (rng.choice(("and", "or")), (tree, tree)), op
    if op == "iff_true":
        return ("iff", tree, ("or", (lit, ("not", lit)))), op
    if op == "absorption":
        return ("and", (tree, ("or", (tree, lit)))), op
    qs = nodes_of(tree, ("q",))
    if op == "vacuous_quantifier" or not qs:
        return ("q", rng.choice(("all", "exists")), (rng.choice(("x9", "y", "z3")),), tree), \
            "vacuous_quantifier"
    path, q = rng.choice(qs)
    if op == "alpha_rename":
        old = rng.choice(q[2])
        new = rng.choice(("y", "z", "x9", "w1", "a1", "x17", "y2"))
        return replace_at(tree, path, rename_bound(q, old, new)), op
    if op == "quantifier_duality":
        dual = "exists" if q[1] == "all" else "all"
        return replace_at(tree, path, ("not", ("q", dual, q[2], neg(q[3])))), op
    # split_quantifiers: one variable per quantifier
    body = q[3]
    for v in reversed(q[2]):
        body = ("q", q[1], (v,), body)
    return replace_at(tree, path, body), op


def mutate(tree, rng, is_fo, voc):
    """Apply one meaning-changing mutation; return (tree, name)."""
    ops = ["drop_negation", "add_negation", "swap_and_or", "rename_atom", "drop_operand",
           "negate_all", "duplicate_other_atom"]
    if is_fo:
        ops += ["swap_args", "drop_quantifier", "swap_quantifier", "narrow_scope",
                "widen_scope", "rename_predicate", "change_arity"]
    op = rng.choice(ops)
    if op == "drop_negation":
        cands = nodes_of(tree, ("not",))
        if cands:
            path, x = rng.choice(cands)
            return replace_at(tree, path, x[1]), op
        op = "add_negation"
    if op == "add_negation":
        path, x = rng.choice(list(subnodes(tree)))
        return replace_at(tree, path, ("not", x)), op
    if op == "swap_and_or":
        cands = nodes_of(tree, ("and", "or"))
        if cands:
            path, x = rng.choice(cands)
            return replace_at(tree, path, ("or" if x[0] == "and" else "and", x[1])), op
        return ("not", tree), "negate_all"
    if op == "drop_operand":
        cands = nodes_of(tree, ("and", "or"))
        if cands:
            path, x = rng.choice(cands)
            ks = list(x[1])
            ks.pop(rng.randrange(len(ks)))
            return replace_at(tree, path, ks[0] if len(ks) == 1 else (x[0], tuple(ks))), op
        return ("not", tree), "negate_all"
    if op == "negate_all":
        return ("not", tree), op
    if op == "duplicate_other_atom":
        lit = some_literal(tree, rng)
        return (rng.choice(("and", "or")), (tree, lit)), op
    leaves = nodes_of(tree, ("atom", "pred"))
    if op == "rename_atom":
        path, x = rng.choice(leaves)
        if x[0] == "atom":
            pool = [p for p in voc["prop"] if p != x[1]] or ["p13"]
            return replace_at(tree, path, ("atom", rng.choice(pool + ["p13", "p0"]))), op
        if x[2]:
            args = list(x[2])
            i = rng.randrange(len(args))
            pool = [c for c in voc["const"] if c != args[i]] or ["p13"]
            args[i] = rng.choice(pool)
            return replace_at(tree, path, ("pred", x[1], tuple(args))), "rename_argument"
    if op == "swap_args":
        cands = [(p, x) for p, x in leaves if x[0] == "pred" and len(x[2]) == 2
                 and x[2][0] != x[2][1]]
        if cands:
            path, x = rng.choice(cands)
            return replace_at(tree, path, ("pred", x[1], (x[2][1], x[2][0]))), op
    if op == "rename_predicate":
        preds = [(p, x) for p, x in leaves if x[0] == "pred"]
        if preds:
            path, x = rng.choice(preds)
            same = [p for p in voc["pred"] if p != x[1] and voc["arity"][p] == len(x[2])]
            new = rng.choice(same) if same and rng.random() < 0.7 else rng.choice(voc["pred"])
            return replace_at(tree, path, ("pred", new, x[2])), op
    if op == "change_arity":
        preds = [(p, x) for p, x in leaves if x[0] == "pred"]
        if preds:
            path, x = rng.choice(preds)
            args = x[2][:1] if len(x[2]) > 1 else x[2] + x[2]
            return replace_at(tree, path, ("pred", x[1], args)), op
    qs = nodes_of(tree, ("q",))
    if qs:
        path, q = rng.choice(qs)
        if op == "drop_quantifier":
            return replace_at(tree, path, q[3]), op
        if op == "swap_quantifier":
            return replace_at(tree, path, ("q", "exists" if q[1] == "all" else "all",
                                           q[2], q[3])), op
        if op == "narrow_scope" and q[3][0] in ("and", "or"):
            body = q[3]
            new = (body[0], (("q", q[1], q[2], body[1][0]),) + body[1][1:])
            return replace_at(tree, path, new), op
        if op == "widen_scope":
            cands = [(p, x) for p, x in nodes_of(tree, ("and", "or")) if x[1][0][0] == "q"]
            if cands:
                p2, x = rng.choice(cands)
                q2 = x[1][0]
                new = ("q", q2[1], q2[2], (x[0], (q2[3],) + x[1][1:]))
                return replace_at(tree, p2, new), op
        return replace_at(tree, path, q[3]), "drop_quantifier"
    return ("not", tree), "negate_all"


# ---------------------------------------------------------------------------
# Helpers shared by the edge categories
# ---------------------------------------------------------------------------

def pick_k(rng, i):
    """Choose a depth, concentrated around Python's recursion limit."""
    if i < len(K_FORCED):
        return K_FORCED[i]
    r = rng.random()
    if r < 0.07:
        return rng.randint(1, 20)
    if r < 0.13:
        return rng.randint(21, 99)
    if r < 0.35:
        return rng.choice(K_NEAR)
    if r < 0.60:
        return rng.randint(100, 400)
    if r < 0.88:
        return rng.randint(401, 1500)
    return rng.randint(1501, 3000)


def boundary_positions(s):
    """Indices where a token boundary of the printed formula lies."""
    out = [i for i in range(1, len(s)) if s[i - 1] in " (),." or s[i] in " (),."]
    return out or [len(s)]


def insert_at_boundary(s, rng, ins):
    """Insert text at a random token boundary."""
    i = rng.choice(boundary_positions(s))
    return s[:i] + ins + s[i:]


def name_positions(s):
    """Indices strictly inside alphanumeric names."""
    return [i for i in range(1, len(s)) if s[i - 1].isalnum() and s[i].isalnum()]


def lb(rng, newline=0.1):
    """Choose a line break (occasionally the deleted '\\n')."""
    return "\n" if rng.random() < newline else rng.choice(LINE_BREAKS)


def random_style(rng, odd=0.2, is_fo=False):
    """Choose a spelling style, mostly accepted spellings, some odd ones."""
    def ch(valid, odd_list):
        """Pick from the valid list, sometimes from the odd list."""
        return rng.choice(odd_list) if rng.random() < odd else rng.choice(valid)
    st = style(**{"and": ch(AND_VALID, AND_ODD), "or": ch(OR_VALID, OR_ODD),
                  "not": ch(NOT_VALID, NOT_ODD), "imp": ch(IMP_VALID, IMP_ODD),
                  "iff": ch(IFF_VALID, IFF_ODD)})
    if is_fo:
        st["all"] = ch(ALL_VALID, ALL_ODD)
        st["ex"] = ch(EX_VALID, EX_ODD)
        st["qsep"] = ch(QSEP_VALID, QSEP_ODD)
        st["group"] = rng.random() < 0.7
        st["wrapq"] = rng.random() < 0.3
    if rng.random() < 0.1:
        st["lpar"], st["rpar"] = rng.choice((("[", "]"), ("[", ")"), ("(", "]"), ("{", "}")))
    st["outer"] = rng.random() < 0.8
    return st


def describe_style(st):
    """Summarise the non-default spellings of a style."""
    parts = []
    for key in ("and", "or", "not", "imp", "iff", "all", "ex", "qsep"):
        if st[key] != DATASET_STYLE[key]:
            parts.append("%s=%r" % (key, st[key]))
    if st["lpar"] != "(":
        parts.append("brackets %s%s" % (st["lpar"], st["rpar"]))
    if not st["outer"]:
        parts.append("no outer parens")
    if not st["group"]:
        parts.append("split quantifiers")
    if st["wrapq"]:
        parts.append("wrapped quantifiers")
    return ", ".join(parts) or "dataset spelling"


def replace_leaf(tree, rng, make):
    """Replace one atomic formula by make(leaf); return (tree, old leaf)."""
    path, x = rng.choice(nodes_of(tree, ("atom", "pred")))
    return replace_at(tree, path, make(x)), x


def rename_symbol(tree, rng, names, allow_qvar=False):
    """Rename one symbol (everywhere or once) to a name from the list."""
    voc = vocab(tree)
    kinds = [k for k in ("prop", "pred", "const") if voc[k]]
    if allow_qvar and voc["qvar"]:
        kinds.append("qvar")
    kind = rng.choice(kinds)
    old = rng.choice(voc[kind])
    new = rng.choice(names)
    everywhere = rng.random() < 0.75
    if everywhere:
        fkinds = {"prop": ("prop",), "pred": ("pred",), "const": ("arg",),
                  "qvar": ("qvar", "arg")}[kind]

        def f(k, name):
            """Map one name."""
            return new if name == old and k in fkinds else name
        return map_names(tree, f), "%s %s -> %r everywhere" % (kind, old, new)
    cands = [(p, x) for p, x in nodes_of(tree, ("atom", "pred", "q"))
             if (kind == "prop" and x[0] == "atom" and x[1] == old)
             or (kind == "pred" and x[0] == "pred" and x[1] == old)
             or (kind == "const" and x[0] == "pred" and old in x[2])
             or (kind == "qvar" and x[0] == "q" and old in x[2])]
    path, x = rng.choice(cands)
    if x[0] == "atom":
        y = ("atom", new)
    elif x[0] == "q":
        y = ("q", x[1], tuple(new if v == old else v for v in x[2]), x[3])
    elif kind == "pred":
        y = ("pred", new, x[2])
    else:
        args = list(x[2])
        args[args.index(old)] = new
        y = ("pred", x[1], tuple(args))
    return replace_at(tree, path, y), "%s %s -> %r once" % (kind, old, new)


def operand(s):
    """Parenthesise a printed formula unless it already is."""
    return s if s.startswith("(") and s.endswith(")") else "(" + s + ")"


# ---------------------------------------------------------------------------
# Logic edge categories: each returns (answer, note)
# ---------------------------------------------------------------------------

def cat_rewrite_equivalent(item, rng, i):
    """Equivalent rewrites printed in the dataset or nltk spelling."""
    is_fo = item.dataset in FIRST_ORDER
    tree = item.tree
    names = []
    for _ in range(rng.choice((1, 1, 2, 3))):
        tree, name = eq_rewrite(tree, rng, is_fo)
        names.append(name)
    st = NLTK_STYLE if rng.random() < 0.2 else DATASET_STYLE
    tag = " (nltk spelling)" if st is NLTK_STYLE else ""
    return render(tree, st), "+".join(names) + tag


def cat_rewrite_mutated(item, rng, i):
    """Meaning-changing mutations, sometimes combined with a rewrite."""
    is_fo = item.dataset in FIRST_ORDER
    tree, name = mutate(item.tree, rng, is_fo, vocab(item.tree))
    names = [name]
    if rng.random() < 0.3:
        tree, extra = eq_rewrite(tree, rng, is_fo)
        names.append(extra)
    return show(tree), "+".join(names)


def cat_connective_spelling(item, rng, i):
    """Every connective spelled one of the accepted or odd ways."""
    is_fo = item.dataset in FIRST_ORDER
    tree = item.tree
    extra = ""
    r = rng.random()
    if r < 0.3:
        tree, extra = eq_rewrite(tree, rng, is_fo)
        extra = " after " + extra
    elif r < 0.45 and len(nodes_of(tree, ("atom", "pred"))) <= SMALL_LEAVES:
        lit = ground_literal(tree, rng)
        tree = ("iff", tree, ("or", (lit, ("not", lit))))
        extra = " with <-> tautology"
    elif r < 0.6:
        cands = nodes_of(tree, ("or",))
        if cands:
            path, x = rng.choice(cands)
            ks = list(x[1])
            rest = ks[1] if len(ks) == 2 else ("or", tuple(ks[1:]))
            tree = replace_at(tree, path, ("imp", neg(ks[0]), rest))
            extra = " with implication"
    st = random_style(rng, odd=0.2, is_fo=is_fo)
    return render(tree, st), describe_style(st) + extra


def cat_quantifier_spelling(item, rng, i):
    """Quantifier words, dots, parentheses and variable lists."""
    tree = item.tree
    if not nodes_of(tree, ("q",)):
        tree = ("q", rng.choice(("all", "exists")), ("x1",), tree)
    odd = 0.25
    st = style(all=rng.choice(ALL_ODD) if rng.random() < odd else rng.choice(ALL_VALID),
               ex=rng.choice(EX_ODD) if rng.random() < odd else rng.choice(EX_VALID),
               qsep=rng.choice(QSEP_ODD) if rng.random() < odd else rng.choice(QSEP_VALID),
               group=rng.random() < 0.6, wrapq=rng.random() < 0.3)
    r = rng.random()
    note = describe_style(st)
    if r < 0.1:
        # comma-separated variable lists
        qs = nodes_of(tree, ("q",))
        path, q = rng.choice(qs)
        tree = replace_at(tree, path, ("q", q[1], (", ".join(q[2] + ("x9",)),), q[3]))
        note += ", comma variable list"
    elif r < 0.2:
        qs = nodes_of(tree, ("q",))
        path, q = rng.choice(qs)
        odd_var = rng.choice(BOUND_VAR_ODD)
        tree = replace_at(tree, path, rename_bound(q, q[2][0], odd_var))
        note += ", bound variable %r" % odd_var
    elif r < 0.3:
        st["all"] = st["all"].rstrip() or "all"
        st["ex"] = st["ex"].rstrip() or "exists"
        note += ", no space after quantifier word"
    return render(tree, st), note


def cat_spacing(item, rng, i):
    """Spaces removed, doubled, tabs, and the ' v ' spacing variants."""
    s = item.fs
    r = rng.random()
    if r < 0.12:
        return s.replace(" ", ""), "all spaces removed"
    if r < 0.22:
        return s.replace(" ", "  "), "spaces doubled"
    if r < 0.32:
        return s.replace(" ", "\t"), "tabs instead of spaces"
    if r < 0.55 and " v " in s:
        forms = (" v ", "v", " v", "v ", "  v  ", "\tv\t", " v\t", "\tv ", " ∨ ", "∨",
                 " ∨", "∨ ", " V ", "V")
        parts = s.split(" v ")
        out = parts[0]
        used = []
        for p in parts[1:]:
            f = rng.choice(forms)
            used.append(f)
            out += f + p
        return out, "or spelled %s" % "/".join(sorted(set(repr(u) for u in used)))
    if r < 0.65:
        return s.replace("(", "( ").replace(")", " )").replace(",", " , "), \
            "spaces inside parentheses"
    if r < 0.72:
        out = []
        for c in s:
            out.append(c)
            if c in "¬∀∃":
                out.append(" ")
        return "".join(out), "space after ¬ ∀ ∃"
    if r < 0.78 and "." in s:
        sep = rng.choice((" . ", " .", ". ", " .  "))
        return s.replace(".", sep), "spaced quantifier dot %r" % sep
    if r < 0.84 and "(" in s:
        pos = [j for j in range(1, len(s)) if s[j] == "(" and s[j - 1].isalnum()]
        if pos:
            j = rng.choice(pos)
            return s[:j] + " " + s[j:], "space before argument list"
    if r < 0.92:
        pos = name_positions(s)
        if pos:
            j = rng.choice(pos)
            return s[:j] + " " + s[j:], "space inside a name"
    return s.replace(" ∧ ", "∧"), "∧ without spaces"


def cat_line_breaks(item, rng, i):
    """Line breaks before, after and inside a formula, and between lines."""
    s = item.fs
    b = lb(rng)
    r = rng.random()
    if r < 0.12:
        k = rng.randint(1, 4)
        return b * k + s, "%d x %r before" % (k, b)
    if r < 0.24:
        k = rng.randint(1, 4)
        return s + b * k, "%d x %r after" % (k, b)
    if r < 0.32:
        b2 = lb(rng)
        return b + s + b2, "%r before, %r after" % (b, b2)
    if r < 0.46:
        return insert_at_boundary(s, rng, b), "%r inside at a token boundary" % b
    if r < 0.52:
        pos = name_positions(s)
        if pos:
            j = rng.choice(pos)
            return s[:j] + b + s[j:], "%r inside a name" % b
    if r < 0.60:
        prose = rng.choice(("This is the formula.", "ok", "Explanation: as stated",
                            "p1", "Note:", "done"))
        return s + b + prose, "formula %r then line %r" % (b, prose)
    if r < 0.68:
        prose = rng.choice(("Here is the formula:", "Answer", "ok", "p1", "FOL"))
        return prose + b + s, "line %r %r then formula" % (prose, b)
    if r < 0.80:
        other, what = second_line(item, rng)
        if rng.random() < 0.5:
            return s + b + other, "formula, %r, %s" % (b, what)
        return other + b + s, "%s, %r, formula" % (what, b)
    if r < 0.90:
        st = style(**{"and": " ∧" + b, "or": " v" + b}) if rng.random() < 0.5 \
            else style(**{"and": b + "∧ ", "or": b + " v "})
        return render(item.tree, st), "operators at line ends %r" % b
    mix = rng.choice(("\n\r", "\r\n\r\n", "\n\x85", "\x1c\x1d\x1e", "\u2028\u2029", "\r\r"))
    return mix + s + mix, "mixed breaks %r around" % mix


def second_line(item, rng):
    """A second formula line: the same, a mutation, an atom, or a variant."""
    r = rng.random()
    if r < 0.3:
        return item.fs, "same formula again"
    if r < 0.6:
        tree, name = mutate(item.tree, rng, item.dataset in FIRST_ORDER, vocab(item.tree))
        return show(tree), "mutated formula (%s)" % name
    if r < 0.8:
        return render(some_literal(item.tree, rng), DATASET_STYLE), "one atom"
    return render(item.tree, NLTK_STYLE), "nltk spelling of the formula"


def cat_comment_lines(item, rng, i):
    """Lines starting with '#' around and instead of the formula."""
    s = item.fs
    b = lb(rng)
    c = rng.choice(("# comment", "#", "##", "#!", "# " + s, "#p1", "# answer:", "#" + b))
    r = rng.random()
    if r < 0.2:
        return c + b + s, "comment %r, %r, formula" % (c, b)
    if r < 0.35:
        return s + b + c, "formula, %r, comment %r" % (b, c)
    if r < 0.45:
        return "#" + s, "whole formula commented out"
    if r < 0.55:
        return c + "\n" + s, "comment then deleted newline (joins lines)"
    if r < 0.65:
        w = rng.choice(STRIP_WS)
        return w + "#x" + b + s, "comment after stripped %r" % w
    if r < 0.72:
        w = rng.choice(NON_STRIP)
        return w + "#x" + b + s, "'#' after unstripped %r" % w
    if r < 0.80:
        return s + " # trailing comment", "comment on the formula line"
    if r < 0.90:
        b2 = lb(rng)
        return "#a" + b + s + b2 + "#b" + b2 + "#c", "formula between comment lines"
    half = insert_at_boundary(s, rng, b + "# mid" + b)
    return half, "comment line inside the formula"


def cat_whitespace_strip(item, rng, i):
    """Python-whitespace at the ends and in the middle; invisible non-whitespace."""
    s = item.fs
    chars = STRIP_WS + NON_STRIP
    w = chars[i % len(chars)]
    kind = "stripped" if w in STRIP_WS else "unstripped"
    where = (i // len(chars) + rng.randrange(2)) % 6
    if where == 0:
        k = rng.randint(1, 3)
        return w * k + s, "%d x %s %r at start" % (k, kind, w)
    if where == 1:
        k = rng.randint(1, 3)
        return s + w * k, "%d x %s %r at end" % (k, kind, w)
    if where == 2:
        seq = "".join(rng.choice(chars) for _ in range(rng.randint(1, 4)))
        return w + seq + s + seq[::-1] + w, "%s %r plus mix %r around" % (kind, w, seq)
    if where == 3:
        return insert_at_boundary(s, rng, w), "%s %r at a token boundary" % (kind, w)
    if where == 4:
        if " v " in s and rng.random() < 0.4:
            return s.replace(" v ", w + "v" + w), "' v ' spaces replaced by %r" % w
        if " " in s and rng.random() < 0.5:
            return s.replace(" ", w), "every space replaced by %r" % w
        return insert_at_boundary(s, rng, w * 2), "2 x %s %r in the middle" % (kind, w)
    pos = name_positions(s)
    if pos and rng.random() < 0.8:
        j = rng.choice(pos)
        return s[:j] + w + s[j:], "%s %r inside a name" % (kind, w)
    seq = "".join(rng.choice(chars) for _ in range(rng.randint(1, 5)))
    return w + seq, "whitespace-like characters only"


def cat_symbols(item, rng, i):
    """Numerals, digit-initial names and names with '$' or '_'."""
    r = rng.random()
    if r < 0.75:
        tree, note = rename_symbol(item.tree, rng, SYMBOL_NAMES)
        return show(tree), note
    if item.dataset in FIRST_ORDER:
        num = rng.choice(("0", "1", "42", "7", "1p", "p_1", "$c"))
        tree, old = replace_leaf(item.tree, rng, lambda x: ("pred", x[1], (num,) + x[2][1:])
                                 if x[0] == "pred" else x)
        return show(tree), "first argument of %s -> %r" % (old[1], num)
    num = rng.choice(("0", "1", "12", "p", "p1p", "1$", "_"))
    lit = rng.choice(("pred1(%s)", "q(%s)", "%s", "r(%s,%s)")).replace("%s", num)
    tree = ("and", (item.tree, ("or", (("raw", lit), ("not", ("raw", lit))))))
    return show(tree), "tautology conjunct over %r" % lit


def equality_snippet(item, rng):
    """An equation between objects, variables or terms, and its description."""
    voc = vocab(item.tree)
    objs = voc["const"] or ["c1", "c2"]
    a = rng.choice(objs)
    b = rng.choice(objs + ["c7"])
    op = rng.choice(("=", "==", "!=", " = ", " == ", " != ", "= ", " =", "=="))
    forms = [
        ("(%s%s%s)" % (a, op, b), "objects"),
        ("(%s%s%s)" % (a, op, a), "reflexive"),
        ("∀ x1.(x1%sx1)" % op, "variable in ∀"),
        ("∀ x1.x1%s%s" % (op, a), "∀ body ending in equation"),
        ("∃ x1.(x1%s%s)" % (op, a), "∃ equation"),
        ("∀ x1 x2.(x1%sx2)" % op, "two variables"),
        ("(f(%s)%s%s)" % (a, op, b), "function term"),
        ("(f(g(%s))%sg(f(%s)))" % (a, op, b), "nested terms"),
        ("(%s%s%s%s%s)" % (a, op, b, op, a), "chained equation"),
        ("(¬%s%s%s)" % (a, op, b), "negated lhs"),
        ("¬(%s%s%s)" % (a, op, b), "negated equation"),
        ("∃ x1.(x1%s%s ∧ x1%s%s)" % (op, a, op, b), "∃ two equations"),
        ("(%s = = %s)" % (a, b), "split '= ='"),
        ("(%s === %s)" % (a, b), "'==='"),
        ("(%s ≠ %s)" % (a, b), "'≠'"),
        ("(%s =! %s)" % (a, b), "'=!'"),
    ]
    if item.dataset in FIRST_ORDER and voc["pred"]:
        p = voc["pred"][0]
        ar = voc["arity"][p]
        args = ",".join([a] * ar)
        forms += [("(%s(%s)%s%s(%s))" % (p, args, op, p, args), "formulas equated"),
                  ("∀ x1.(x1%s%s -> %s(%s))" % (op, a, p, ",".join(["x1"] * ar)),
                   "equation guard in ∀")]
    else:
        p = (voc["prop"] or ["p1"])[0]
        forms += [("(%s%s%s)" % (p, op, p), "proposition equated"),
                  ("(%s%sc1)" % (p, op), "proposition = object")]
    text, what = rng.choice(forms)
    return text, what + " " + repr(op.strip())


def cat_equality(item, rng, i):
    """Equations '=', '==', '!=' combined with or replacing parts of the formula."""
    snip, what = equality_snippet(item, rng)
    r = rng.random()
    if r < 0.45:
        op = rng.choice(("and", "or", "imp"))
        tree = (op, ("raw", snip), item.tree) if op == "imp" else \
            (op, (item.tree, ("raw", snip)))
        return show(tree), "%s with %s" % (op, what)
    if r < 0.75:
        tree, old = replace_leaf(item.tree, rng, lambda x: ("raw", snip))
        return show(tree), "atom replaced by %s" % what
    if r < 0.9 and nodes_of(item.tree, ("q",)):
        path, q = rng.choice(nodes_of(item.tree, ("q",)))
        v = q[2][0]
        eq = "(%s = %s)" % (v, v)
        tree = replace_at(item.tree, path, ("q", q[1], q[2], ("and", (("raw", eq), q[3]))))
        return show(tree), "x = x conjunct inside quantifier"
    return snip, "equation alone: " + what


def term_variant(arg, rng, bound):
    """A term in argument position built around an argument."""
    v = rng.choice(bound) if bound else "x1"
    forms = (("f(%s)" % arg, "f(a)"), ("g(f(%s))" % arg, "g(f(a))"),
             ("f(%s,%s)" % (arg, arg), "binary f"), ("-%s" % arg, "negated term"),
             ("not %s" % arg, "'not' term"), ("¬%s" % arg, "¬ term"), ("(%s)" % arg, "(a)"),
             ("f(%s)" % v, "f(bound var)"), ("f(g(%s))" % v, "nested over bound var"),
             ("%s & %s" % (arg, arg), "a & a"), ("pred9(%s)" % arg, "predicate as term"),
             ("f()", "empty call"), ("", "empty argument"), ("%s b" % arg, "two words"),
             ("f(%s)(%s)" % (arg, arg), "curried call"), ("-f(%s)" % arg, "negated function"),
             ("%s = %s" % (arg, arg), "equation as term"), ("((%s))" % arg, "((a))"),
             ("f(-%s)" % arg, "f(-a)"), ("--%s" % arg, "double negated term"))
    return rng.choice(forms)


def cat_terms(item, rng, i):
    """Function applications and negated terms in argument position."""
    tree = item.tree
    bound = vocab(tree)["qvar"]
    preds = nodes_of(tree, ("pred",))
    if preds and rng.random() < 0.85:
        path, x = rng.choice(preds)
        args = list(x[2])
        j = rng.randrange(len(args))
        term, what = term_variant(args[j], rng, bound)
        args[j] = term
        return show(replace_at(tree, path, ("raw", x[1] + "(" + ",".join(args) + ")"))), what
    arg = rng.choice(("p1", "c1", "a"))
    term, what = term_variant(arg, rng, bound)
    lit = "pred1(%s)" % term
    r = rng.random()
    if r < 0.5:
        new, old = replace_leaf(tree, rng, lambda x: ("raw", lit))
        return show(new), "atom replaced by pred1 over " + what
    return show(("and", (tree, ("or", (("raw", lit), ("not", ("raw", lit))))))), \
        "tautology over pred1 of " + what


def cat_lambda(item, rng, i):
    """Lambda abstractions applied and unapplied."""
    tree = item.tree
    preds = nodes_of(tree, ("pred",))
    r = rng.random()
    lam = rng.choice(("\\", "\\", "\\ ", "λ", "\\\\"))
    if preds and r < 0.55:
        path, x = rng.choice(preds)
        names = ("x", "y", "z")[:len(x[2])]
        if rng.random() < 0.2:
            names = ("v", "x")[:len(x[2])]
        body = "%s(%s)" % (x[1], ",".join(names))
        forms = [("(%s%s.%s)(%s)" % (lam, " ".join(names), body, ",".join(x[2])), "applied"),
                 ("%s%s.%s" % (lam, " ".join(names), body), "unapplied"),
                 ("(%s%s.%s)" % (lam, " ".join(names), body), "unapplied in parens")]
        if len(names) == 2:
            forms.append(("(%s%s.%s%s.%s)(%s)(%s)" % (lam, names[0], lam, names[1], body,
                                                      x[2][0], x[2][1]), "curried"))
            forms.append(("(%s%s .%s)(%s)" % (lam, " ".join(names), body, ",".join(x[2])),
                          "space before dot"))
        text, what = rng.choice(forms)
        return show(replace_at(tree, path, ("raw", text))), "%s lambda %r for %s" % (
            what, lam, x[1])
    leaves = nodes_of(tree, ("atom", "pred"))
    path, x = rng.choice(leaves)
    a = render(x, DATASET_STYLE)
    forms = (("(%sx.x)(%s)" % (lam, a), "identity applied"),
             ("(%sx.%s)(c1)" % (lam, a), "vacuous lambda applied"),
             ("(%sP.P)(%s)" % (lam, a), "uppercase lambda variable"),
             ("(%sx.(x ∧ %s))(%s)" % (lam, a, a), "applied to a formula"),
             ("%sx.%s" % (lam, a), "unapplied vacuous"),
             ("(%sx y.%s)(c1,c2)" % (lam, a), "two variables applied"),
             ("(%sx v.%s)(c1,c2)" % (lam, a), "variable named v"),
             ("(%sx v .%s)(c1,c2)" % (lam, a), "' v ' in lambda head"))
    text, what = rng.choice(forms)
    if r < 0.85:
        return show(replace_at(tree, path, ("raw", text))), "atom %s as %s (%r)" % (a, what, lam)
    whole = rng.choice(("%sx.%s", "(%sx.%s)(c1)", "%sx y.%s"))
    return whole % (lam, show(tree)), "whole formula under lambda (%r)" % lam


def fit_k(k, unit, base, limit=MAX_ANSWER):
    """Largest depth not above k that keeps the answer under the limit."""
    room = limit - base
    if unit <= 0:
        return k
    return max(1, min(k, room // unit))


def cat_depth_parens(item, rng, i):
    """k nested parentheses around the formula or an atom."""
    k = pick_k(rng, i)
    s = item.fs
    r = rng.random()
    if r < 0.4:
        k = fit_k(k, 2, len(s))
        return "(" * k + s + ")" * k, "k=%d parens around formula" % k
    if r < 0.55:
        k = fit_k(k, 4, len(s))
        return "( " * k + s + " )" * k, "k=%d spaced parens around formula" % k
    if r < 0.65:
        k = fit_k(k, 2, len(s))
        return "[" * k + s + "]" * k, "k=%d brackets around formula" % k
    if r < 0.75:
        k = fit_k(k, 2, len(s))
        if rng.random() < 0.5:
            return "(" * (k + 1) + s + ")" * k, "k=%d parens, one unclosed" % k
        return "(" * k + s + ")" * (k + 1), "k=%d parens, one extra close" % k
    path, x = rng.choice(nodes_of(item.tree, ("atom", "pred")))
    a = render(x, DATASET_STYLE)
    k = fit_k(k, 2, len(s))
    tree = replace_at(item.tree, path, ("raw", "(" * k + a + ")" * k))
    return show(tree), "k=%d parens around atom %s" % (k, a)


def cat_depth_negations(item, rng, i):
    """Chains of k negations around the formula or an atom."""
    k = pick_k(rng, i)
    spell = rng.choice(("¬", "¬", "¬ ", "-", "- ", "!", "not ", "¬(", "mixed"))
    r = rng.random()
    if r < 0.6:
        target = operand(item.fs) if not item.fs.startswith(("¬", "(")) else item.fs
        where = "formula"
    else:
        path, x = rng.choice(nodes_of(item.tree, ("atom", "pred")))
        target = render(x, DATASET_STYLE)
        where = "atom " + target
    base = len(item.fs) + len(target)
    if spell == "¬(":
        k = fit_k(k, 3, base)
        text = "¬(" * k + target + ")" * k
    elif spell == "mixed":
        k = fit_k(k, 4, base)
        text = "".join(rng.choice(("¬", "-", "!", "not ")) for _ in range(k)) + target
    else:
        k = fit_k(k, len(spell), base)
        text = spell * k + target
    note = "k=%d %r around %s (%s)" % (k, spell, where, "even" if k % 2 == 0 else "odd")
    if where == "formula":
        return text, note
    return show(replace_at(item.tree, path, ("raw", text))), note


def cat_depth_chain(item, rng, i):
    """Flat and nested chains of k binary operators."""
    k = pick_k(rng, i)
    leaves = nodes_of(item.tree, ("atom", "pred"))
    path, x = min(rng.sample(leaves, min(3, len(leaves))),
                  key=lambda px: len(render(px[1], DATASET_STYLE)))
    a = render(x, DATASET_STYLE)
    base = len(item.fs)
    r = rng.random()
    op = rng.choice((" ∧ ", " v ", "∧", " & ", "|", " ∨ ", " -> ", " and ", " or "))
    if r < 0.4:
        k = fit_k(k, len(a) + len(op), base)
        chain = "(" + op.join([a] * (k + 1)) + ")"
        return show(replace_at(item.tree, path, ("raw", chain))), \
            "atom %s repeated, k=%d %r" % (a, k, op)
    if r < 0.55:
        k = fit_k(k, len(a) + len(op) + 2, base)
        chain = a
        for _ in range(k):
            chain = "(" + a + op + chain + ")"
        return show(replace_at(item.tree, path, ("raw", chain))), \
            "right-nested k=%d %r over %s" % (k, op, a)
    if r < 0.65:
        k = fit_k(k, len(a) + len(op) + 2, base)
        chain = "(" * k + a + "".join(op + a + ")" for _ in range(k))
        return show(replace_at(item.tree, path, ("raw", chain))), \
            "left-nested k=%d %r over %s" % (k, op, a)
    if r < 0.8:
        # one operator only: a flat chain of literals stays small in clause form
        atoms = [render(y, DATASET_STYLE) for _, y in leaves]
        unit = max(len(t) for t in atoms) + len(op) + 1
        k = fit_k(k, unit, base)
        chain = rng.choice(atoms)
        for _ in range(k):
            chain += op + rng.choice(("", "¬")) + rng.choice(atoms)
        joiner = rng.choice((" ∧ ", " v "))
        return "(" + item.fs + joiner + "(" + chain + "))", \
            "formula%schain of k=%d literals %r" % (joiner, k, op)
    # copies of the whole formula multiply its clause form: only a few
    s = item.fs
    n = rng.choice((2, 3))
    return "(" + op.join([s] * n) + ")", "formula repeated %d times %r (shallow)" % (n, op)


def cat_names_nonascii(item, rng, i):
    """Non-ASCII names, including ones starting with u-z."""
    names = NONASCII_UZ_NAMES if rng.random() < 0.45 else NONASCII_NAMES
    tree, note = rename_symbol(item.tree, rng, names, allow_qvar=rng.random() < 0.1)
    return show(tree), note


def cat_names_prover_variable(item, rng, i):
    """ASCII names starting with u-z (Prover9 variables)."""
    tree, note = rename_symbol(item.tree, rng, PROVER_VAR_NAMES)
    st = DATASET_STYLE if rng.random() < 0.7 else NLTK_STYLE
    return render(tree, st), note


def cat_names_ascii_edge(item, rng, i):
    """Single letters, e+digits, upper case, keywords and long names."""
    tree, note = rename_symbol(item.tree, rng, ASCII_EDGE_NAMES,
                               allow_qvar=item.dataset in FIRST_ORDER and rng.random() < 0.3)
    return show(tree), note


BOUND_V_SPELLINGS = (("∀ ", "."), ("∃ ", " ("), ("all ", "."), ("∀", "."), ("exists ", "."),
                     ("∃ ", "."), ("forall ", " ("), ("∀ ", " ."), ("some ", "("), ("∃", ". "),
                     ("all ", " ("), ("∀ ", "("))


def cat_bound_v(item, rng, i):
    """The letter 'v' as a bound variable."""
    tree = item.tree
    qs = nodes_of(tree, ("q",))
    word, sep = BOUND_V_SPELLINGS[i % len(BOUND_V_SPELLINGS)]
    other = rng.choice(("∀ ", "∃ ", "all ", "exists "))
    word_all, word_ex = (word, other) if word in ("∀ ", "∀", "all ", "forall ") else (other, word)
    st = style(all=word_all, ex=word_ex,
               qsep={" (": "PAREN", "(": "PAREN_TIGHT"}.get(sep, sep),
               group=rng.random() < 0.7)
    if qs and rng.random() < 0.75:
        kind = "all" if word is word_all else "exists"
        path, q = rng.choice([pq for pq in qs if pq[1][1] == kind] or qs)
        old = rng.choice(q[2])
        if rng.random() < 0.2:
            q2 = ("q", q[1], q[2] + ("v",), q[3]) if rng.random() < 0.5 else \
                ("q", q[1], ("v",) + q[2], q[3])
            return render(replace_at(tree, path, q2), st), "extra bound v in list %r" % sep
        return render(replace_at(tree, path, rename_bound(q, old, "v")), st), \
            "bound %s renamed v, sep %r" % (old, sep)
    r = rng.random()
    f = render(tree, st)
    if r < 0.4:
        w = word
        body = f if sep in (".", " .", ". ") else "(" + f + ")"
        joiner = sep if sep in (".", " .", ". ") else sep.rstrip("(")
        return w + "v" + joiner + body, "vacuous %rv%r around formula" % (w, sep)
    if r < 0.7:
        p = rng.choice(("pred1", "q", "r"))
        ex = "%sv.(%s(v) v ¬%s(v))" % (word_all, p, p)
        return "(" + f + " ∧ " + ex + ")", "tautology %s" % ex
    forms = ("∀ v.pred1(v)", "∃ v (pred1(v))", "all v.pred1(v)", "∀v.pred1(v)",
             "∃ v.(pred1(v) ∧ pred2(v))", "∀ v x1.pred2(v,x1)", "∀ x1 v.pred2(x1,v)",
             "exists v.v = v", "∀ v.(v = v)", "(pred1(v) v ¬pred1(v))")
    g = rng.choice(forms)
    return "(" + f + rng.choice((" ∧ ", " v ")) + g + ")", "combined with %s" % g


def cat_prose(item, rng, i):
    """Prose around or instead of the formula."""
    t = rng.choice(PROSE_TEMPLATES)
    b = lb(rng, newline=0.3)
    return t.replace("{LB}", b).replace("{F}", item.fs), "template %r, break %r" % (t, b)


def cat_fences(item, rng, i):
    """Markdown code fences, back-ticks, LaTeX and markup."""
    t = rng.choice(FENCE_TEMPLATES)
    b = lb(rng, newline=0.3)
    return t.replace("{LB}", b).replace("{F}", item.fs), "template %r, break %r" % (t, b)


HOMOGLYPHS = (
    ("p", "р", "Cyrillic er for p"), ("v", "ν", "Greek nu for v"), ("v", "ⅴ", "roman five for v"),
    ("v", "ᴠ", "small capital V"), ("v", "ｖ", "fullwidth v"), ("¬", "￢", "fullwidth not"),
    ("∧", "⋀", "n-ary and"), ("∧", "Λ", "Greek Lambda for ∧"), ("(", "（", "fullwidth paren"),
    (")", "）", "fullwidth close paren"), (",", "，", "fullwidth comma"), (".", "．", "fullwidth dot"),
    ("¬", "−", "minus sign for ¬"), ("x", "х", "Cyrillic ha for x"), ("1", "１", "fullwidth 1"),
    ("∀", "Ɐ", "turned A"), ("∃", "Ǝ", "reversed E"), ("e", "е", "Cyrillic ie for e"),
    ("¬", "¬\ufe0f", "variation selector"), ("∧", "∧\u0338", "combining stroke"),
    ("d", "ԁ", "Cyrillic komi de"), ("2", "²", "superscript 2"),
)


def cat_mixed_scripts(item, rng, i):
    """Look-alike characters from other scripts for symbols and operators."""
    s = item.fs
    cands = [h for h in HOMOGLYPHS if h[0] in s]
    src, dst, what = rng.choice(cands)
    if src == "v":
        occ = [j for j in range(len(s)) if s[j] == "v" and s[j - 1:j + 2] == " v "]
    else:
        occ = [j for j in range(len(s)) if s[j] == src]
    if not occ:
        occ = [s.index(src)]
    if rng.random() < 0.5:
        j = rng.choice(occ)
        return s[:j] + dst + s[j + 1:], what + " (once)"
    out = list(s)
    for j in occ:
        out[j] = dst
    return "".join(out), what + " (everywhere)"


CASE_TRICKS = (("p", "P"), ("v", "V"), ("e", "E"), ("x", "X"), ("k", "\u212a"),
               ("i", "İ"), ("s", "Σ"), ("a", "A"), ("r", "R"))


def cat_case_folding(item, rng, i):
    """Upper case, mixed case and characters whose lower case is special."""
    s = item.fs
    r = rng.random()
    if r < 0.2:
        return s.upper(), "upper case"
    if r < 0.35:
        return "".join(c.upper() if rng.random() < 0.5 else c for c in s), "random case"
    if r < 0.5:
        words = style(**{"and": " AND ", "or": " OR ", "not": "NOT ", "all": "ALL ",
                         "ex": "EXISTS "})
        return render(item.tree, words), "upper-case words"
    if r < 0.6 and " v " in s:
        return s.replace(" v ", " V "), "V for or"
    cands = [t for t in CASE_TRICKS if t[0] in s]
    if not cands:
        return s.upper(), "upper case"
    src, dst = rng.choice(cands)
    occ = [j for j in range(len(s)) if s[j] == src]
    j = rng.choice(occ)
    if rng.random() < 0.5:
        return s[:j] + dst + s[j + 1:], "%r for %r once" % (dst, src)
    return s.replace(src, dst), "%r for %r everywhere" % (dst, src)


# Text inside a pair of double quotes: names of the prover's own characters, its
# operators and comment signs, letters it takes for variables, other scripts,
# and nothing at all.
QUOTED_INNER = ("p1", "p3", "x", "x1", "v", "u", "", "a+b", "p'", "%", "%a", "#", "é", "😀",
                "P1", "Jamya", "a*b", "e", "all", "1", "a$b", "_", "ñandú")
# Quotes the prover cannot take as one symbol, and quoted text the logic
# library cannot read as one name.
QUOTED_MALFORMED = ('"p3', 'p"3"', '"p"3', '"p""3"', '"ab"c"', '"a b"', '"a,b"', '"a.b"',
                    '"a-b"', '"a&b"', '"(p)"', '"é"x')


def quoted(rng):
    """A double-quoted name, mostly well formed."""
    if rng.random() < 0.15:
        return rng.choice(QUOTED_MALFORMED)
    return '"%s"' % rng.choice(QUOTED_INNER)


def cat_quoted_names(item, rng, i):
    """Double-quoted names as propositions, predicates, arguments and in equations."""
    tree, f = item.tree, show(item.tree)
    voc = vocab(tree)
    r = rng.random()
    if r < 0.35:
        kinds = [k for k in ("prop", "pred", "const") if voc[k]]
        if voc["qvar"] and rng.random() < 0.2:
            kinds.append("qvar")
        kind = rng.choice(kinds)
        old = rng.choice(voc[kind])
        new = '"%s"' % old if rng.random() < 0.7 else quoted(rng)
        if rng.random() < 0.2:
            new = new.upper()
        fkinds = {"prop": ("prop",), "pred": ("pred",), "const": ("arg",), "qvar": ("arg",)}[kind]
        everywhere = rng.random() < 0.6
        done = [False]

        def g(k, name):
            """Quote one name, everywhere or at its first place."""
            if name == old and k in fkinds and (everywhere or not done[0]):
                done[0] = True
                return new
            return name
        how = "everywhere" if everywhere else "once"
        return show(map_names(tree, g)), "%s %s -> %s %s" % (kind, old, new, how)
    q, q2 = quoted(rng), quoted(rng)
    if item.dataset in FIRST_ORDER:
        pred = rng.choice(voc["pred"]) if voc["pred"] else "pred1"
        arity = voc["arity"].get(pred, 1)
        args = ",".join(rng.choice((q, q2, '"x1"', '""')) for _ in range(arity))
        forms = ("(%s = %s)" % (q, q), "(%s = %s)" % (q, q2), "¬(%s = %s)" % (q, q2),
                 "(%s = %s)" % (q, q.strip('"') or "a"), "(%s(%s) v ¬%s(%s))" % (pred, args, pred, args),
                 "%s(%s)" % (pred, args), "(%s(%s) -> %s(%s))" % (q, q2, q, q2),
                 "∃ x9.(x9 = %s)" % q, "∀ x9.(%s(x9) -> %s(x9))" % (q, q))
    else:
        forms = ("(%s v ¬%s)" % (q, q), "(%s ∧ ¬%s)" % (q, q), q, "(%s -> %s)" % (q, q2),
                 "(%s <-> %s)" % (q, q), "¬%s" % q)
    g = rng.choice(forms)
    op = rng.choice((" ∧ ", " v "))
    return "(" + f + op + g + ")", "combined with %s" % g


# Names the logic library binds (a letter other than e, then digits), and
# names it does not, or that the prover takes for variables.
BINDABLE = ("p3", "p5", "p9", "q", "r1", "a2", "p12", "p1")
UNBINDABLE_OR_VARIABLE = ("x", "x2", "v", "z1", "pred1", "abc", "e1", "P3")


def cat_bound_proposition(item, rng, i):
    """A quantifier binding a name that stands as a proposition, bound and free."""
    tree, f = item.tree, show(item.tree)
    voc = vocab(tree)
    props = voc["prop"] or ["p5"]
    all_w = rng.choice(("∀ ", "∀", "all ", "forall "))
    ex_w = rng.choice(("∃ ", "∃", "exists ", "some "))
    wq = lambda: rng.choice((all_w, ex_w))
    n = rng.choice(BINDABLE) if rng.random() < 0.85 else rng.choice(UNBINDABLE_OR_VARIABLE)
    m = rng.choice([b for b in BINDABLE if b != n])
    r = rng.random()
    if r < 0.3 and item.dataset not in FIRST_ORDER:
        b = rng.choice(props)
        return "%s%s.(%s)" % (wq(), b, f), "formula under a quantifier binding its own %s" % b
    if r < 0.4 and item.dataset in FIRST_ORDER:
        qs = nodes_of(tree, ("q",))
        if qs:
            path, qn = rng.choice(qs)
            inner = rng.choice(("(%s v ¬%s)", "%s", "¬%s", "(%s ∧ %s)")).replace("%s", qn[2][0])
            body = ("and", (qn[3], ("raw", inner)))
            t2 = replace_at(tree, path, ("q", qn[1], qn[2], body))
            return show(t2), "bound %s also a proposition: %s" % (qn[2][0], inner)
    forms = ("%s%s.(%s v ¬%s)" % (wq(), n, n, n), "%s%s.%s" % (wq(), n, n),
             "%s%s.¬%s" % (wq(), n, n), "%s%s.(%s -> %s)" % (wq(), n, n, n),
             "%s%s.%s%s.(%s <-> %s)" % (wq(), n, wq(), m, n, m),
             "(%s%s.(%s v %s) ∧ %s%s.(¬%s v %s))" % (all_w, n, n, props[0], all_w, m, m, props[0]),
             "%s%s.((%s v %s) ∧ (¬%s v %s))" % (wq(), n, n, props[0], n, props[0]),
             "(%s%s.%s v %s)" % (wq(), n, n, n),
             "%s%s.(%s ∧ %s)" % (wq(), n, n, rng.choice(props)))
    if item.dataset in FIRST_ORDER:
        pred = rng.choice(voc["pred"]) if voc["pred"] else "pred1"
        arity = voc["arity"].get(pred, 1)
        forms += ("∀ x9.(%s%s.(%s <-> %s(%s)))" % (wq(), n, n, pred, ",".join(["x9"] * arity)),
                  "%s%s.%s(%s)" % (wq(), n, pred, ",".join([n] * arity)),
                  "%s%s.(%s ∧ %s(%s))" % (wq(), n, n, pred, ",".join([n] * arity)))
    g = rng.choice(forms)
    if rng.random() < 0.3:
        return "%s%s.(%s%s%s)" % (wq(), n, f, rng.choice((" ∧ ", " v ")), g.replace(n + ".", m + ".", 1)), \
            "formula and %s under a quantifier binding %s" % (g, n)
    return "(" + f + rng.choice((" ∧ ", " v ", " -> ", " <-> ")) + g + ")", "combined with %s" % g


LOGIC_GENERATORS = {
    "rewrite_equivalent": cat_rewrite_equivalent, "rewrite_mutated": cat_rewrite_mutated,
    "connective_spelling": cat_connective_spelling, "quantifier_spelling": cat_quantifier_spelling,
    "spacing": cat_spacing, "line_breaks": cat_line_breaks, "comment_lines": cat_comment_lines,
    "whitespace_strip": cat_whitespace_strip, "symbols": cat_symbols, "equality": cat_equality,
    "terms": cat_terms, "lambda": cat_lambda, "depth_parens": cat_depth_parens,
    "depth_negations": cat_depth_negations, "depth_chain": cat_depth_chain,
    "names_nonascii": cat_names_nonascii, "names_prover_variable": cat_names_prover_variable,
    "names_ascii_edge": cat_names_ascii_edge, "bound_v": cat_bound_v, "prose": cat_prose,
    "fences": cat_fences, "mixed_scripts": cat_mixed_scripts, "case_folding": cat_case_folding,
    "quoted_names": cat_quoted_names, "bound_proposition": cat_bound_proposition,
}
# Categories whose answers embed the whole formula many times or verbatim: prefer short items.
LONG_OK = ("rewrite_equivalent", "rewrite_mutated", "connective_spelling", "depth_parens",
           "depth_negations")
NEEDS_QUANTIFIER = ("quantifier_spelling", "bound_v")


# ---------------------------------------------------------------------------
# Regular expressions
# ---------------------------------------------------------------------------
# Nodes: ("sym", c) ("grp", node) ("star", node) ("cat", [nodes]) ("alt", [nodes])

def parse_regex(s):
    """Parse a dataset regex (symbols, groups, stars, concatenation)."""
    pos = [0]

    def seq():
        """Parse a concatenation."""
        items = []
        while pos[0] < len(s) and s[pos[0]] != ")":
            items.append(factor())
        return ("cat", items)

    def factor():
        """Parse a symbol or group with its stars."""
        c = s[pos[0]]
        if c == "(":
            pos[0] += 1
            node = ("grp", seq())
            if pos[0] >= len(s) or s[pos[0]] != ")":
                raise ValueError("unbalanced regex %r" % s)
            pos[0] += 1
        elif c == "*":
            raise ValueError("dangling star in %r" % s)
        else:
            node = ("sym", c)
            pos[0] += 1
        while pos[0] < len(s) and s[pos[0]] == "*":
            node = ("star", node)
            pos[0] += 1
        return node

    node = seq()
    if pos[0] != len(s):
        raise ValueError("trailing text in regex %r" % s)
    return node


def rshow(n):
    """Print a regex tree."""
    t = n[0]
    if t == "sym":
        return n[1]
    if t == "grp":
        return "(" + rshow(n[1]) + ")"
    if t == "cat":
        return "".join(rshow(k) for k in n[1])
    if t == "alt":
        return "|".join(rshow(k) for k in n[1])
    if t == "star":
        inner = rshow(n[1])
        single = n[1][0] == "cat" and len(n[1][1]) == 1 and n[1][1][0][0] in ("sym", "grp")
        if n[1][0] in ("star", "cat", "alt") and not single:
            inner = "(" + inner + ")"
        return inner + "*"
    raise ValueError(t)


def rkids(n):
    """Children of a regex node."""
    t = n[0]
    if t in ("grp", "star"):
        return [n[1]]
    if t in ("cat", "alt"):
        return list(n[1])
    return []


def rwith(n, ks):
    """Rebuild a regex node with new children."""
    t = n[0]
    if t in ("grp", "star"):
        return (t, ks[0])
    if t in ("cat", "alt"):
        return (t, list(ks))
    return n


def rnodes(n, path=()):
    """Yield (path, node) for every regex node."""
    return subnodes(n, path, rkids)


def rreplace(n, path, new):
    """Replace the regex node at path."""
    return replace_at(n, path, new, rkids, rwith)


def rpick(tree, rng, types):
    """Pick a (path, node) among nodes of the given types, or None."""
    c = [(p, x) for p, x in rnodes(tree) if x[0] in types]
    return rng.choice(c) if c else None


def rreverse(n):
    """Reverse every concatenation (the reversed language)."""
    ks = [rreverse(k) for k in rkids(n)]
    if n[0] == "cat":
        ks.reverse()
    return rwith(n, ks) if ks else n


def regex_equivalent(tree, rng):
    """One language-preserving regex rewrite; return (tree, name)."""
    op = rng.choice(("wrap_all", "wrap_factor", "star_of_star", "star_twice", "alt_same",
                     "group_star_body", "unwrap_group", "symbol_groups", "alt_whole"))
    if op == "wrap_all":
        return ("grp", tree), op
    if op == "alt_whole":
        return ("cat", [("grp", ("alt", [tree, tree]))]), op
    if op == "symbol_groups":
        def g(n):
            """Group every symbol."""
            if n[0] == "sym":
                return ("grp", ("cat", [n]))
            return rwith(n, [g(k) for k in rkids(n)])
        return g(tree), op
    if op in ("star_of_star", "star_twice", "group_star_body"):
        hit = rpick(tree, rng, ("star",))
        if hit:
            path, x = hit
            if op == "star_of_star":
                return rreplace(tree, path, ("star", ("grp", ("cat", [x])))), op
            if op == "group_star_body":
                return rreplace(tree, path, ("star", ("grp", ("cat", [x[1]])))), op
            return rreplace(tree, path, ("grp", ("cat", [x, x]))), op
    if op == "unwrap_group":
        for path, x in rnodes(tree):
            if x[0] == "cat":
                for j, k in enumerate(x[1]):
                    if k[0] == "grp" and k[1][0] == "cat":
                        new = x[1][:j] + k[1][1] + x[1][j + 1:]
                        return rreplace(tree, path, ("cat", new)), op
    hit = rpick(tree, rng, ("sym", "grp", "star"))
    if op == "alt_same" and hit:
        path, x = hit
        return rreplace(tree, path, ("grp", ("alt", [x, x]))), op
    path, x = hit
    return rreplace(tree, path, ("grp", ("cat", [x]))), "wrap_factor"


def regex_mutation(tree, rng):
    """One language-changing regex mutation; return (tree, name)."""
    op = rng.choice(("drop_star", "add_star", "flip_symbol", "drop_factor", "duplicate_factor",
                     "swap_alphabet", "reverse", "letters", "plus_for_star", "alt_other",
                     "star_whole"))
    if op == "drop_star":
        hit = rpick(tree, rng, ("star",))
        if hit:
            return rreplace(tree, hit[0], hit[1][1]), op
        op = "add_star"
    if op == "add_star":
        path, x = rpick(tree, rng, ("sym",))
        return rreplace(tree, path, ("star", x)), op
    if op == "flip_symbol":
        path, x = rpick(tree, rng, ("sym",))
        return rreplace(tree, path, ("sym", "1" if x[1] == "0" else "0")), op
    if op in ("drop_factor", "duplicate_factor"):
        cats = [(p, x) for p, x in rnodes(tree) if x[0] == "cat" and len(x[1]) >= 2]
        if cats:
            path, x = rng.choice(cats)
            j = rng.randrange(len(x[1]))
            ks = list(x[1])
            if op == "drop_factor":
                ks.pop(j)
            else:
                ks.insert(j, ks[j])
            return rreplace(tree, path, ("cat", ks)), op
        return ("cat", [tree, ("sym", "0")]), "append_symbol"
    if op == "swap_alphabet":
        return parse_regex(rshow(tree).translate(str.maketrans("01", "10"))), \
            "swap 0/1 (same DFA shape)"
    if op == "reverse":
        return rreverse(tree), "reversed regex"
    if op == "letters":
        return ("sym", rshow(tree).translate(str.maketrans("01", "ab"))), "0/1 as a/b"
    if op == "plus_for_star":
        return ("sym", rshow(tree).replace("*", "+", 1)), "first * as +"
    if op == "alt_other":
        other = rng.choice(("0", "1", "0*", "(01)*", "1*0"))
        return ("cat", [("grp", ("alt", [tree, parse_regex(other)]))]), "alternation with " + other
    return ("star", ("grp", tree)), "star_whole"


def cat_regex_rewrite(item, rng, i):
    """Language-preserving regex rewrites."""
    tree = item.tree
    names = []
    for _ in range(rng.choice((1, 1, 2, 3))):
        tree, name = regex_equivalent(tree, rng)
        names.append(name)
    return rshow(tree), "+".join(names)


def cat_regex_mutated(item, rng, i):
    """Language-changing regex mutations."""
    tree, name = regex_mutation(item.tree, rng)
    if rng.random() < 0.3:
        tree, extra = regex_equivalent(tree, rng)
        name += "+" + extra
    return rshow(tree), name


def scatter(s, rng, ins, p):
    """Insert text before characters with probability p."""
    out = []
    for c in s:
        if rng.random() < p:
            out.append(ins if isinstance(ins, str) else rng.choice(ins))
        out.append(c)
    return "".join(out)


def cat_regex_spelling(item, rng, i):
    """Spaces and backslashes (deleted), and other spellings of the operators."""
    s = item.fs
    r = rng.random()
    if r < 0.2:
        p = rng.choice((0.2, 0.5, 1.0))
        return scatter(s, rng, " ", p), "spaces inserted p=%.1f" % p
    if r < 0.35:
        p = rng.choice((0.2, 0.5, 1.0))
        return scatter(s, rng, ("\\", "\\\\", " \\"), p), "backslashes inserted p=%.1f" % p
    if r < 0.42:
        return s.replace("*", "\\*").replace("(", "\\(").replace(")", "\\)"), \
            "escaped operators"
    if r < 0.50:
        ins = rng.choice(("\t", "\u3000", "\xa0"))
        return scatter(s, rng, ins, 0.3), "%r inside (not deleted)" % ins
    repl = rng.choice((("*", "∗", "asterisk operator"), ("*", "⋆", "star operator"),
                       ("*", "＊", "fullwidth star"), ("0", "０", "fullwidth 0"),
                       ("1", "１", "fullwidth 1"), ("(", "（", "fullwidth paren"),
                       ("*", "+", "plus for star"), ("*", "?", "question mark for star"),
                       ("*", "{0,}", "brace quantifier"), ("0", "a", "letter a"),
                       ("1", "b", "letter b"), ("0", "ε", "epsilon"), ("0", "[0]", "class"),
                       ("0", ".", "dot"), ("1", "2", "digit 2"), ("0", "()", "empty group")))
    src, dst, what = repl
    if src not in s:
        return s + " ", "trailing space"
    if rng.random() < 0.5:
        j = s.index(src) if rng.random() < 0.5 else s.rindex(src)
        return s[:j] + dst + s[j + 1:], what + " (once)"
    return s.replace(src, dst), what + " (everywhere)"


def cat_regex_whitespace(item, rng, i):
    """Python-stripped whitespace at the ends, unstripped and inner whitespace."""
    s = item.fs
    w = STRIP_WS[i % len(STRIP_WS)]
    r = rng.random()
    if r < 0.3:
        k = rng.randint(1, 3)
        if rng.random() < 0.5:
            return w * k + s, "%d x %r at start" % (k, w)
        return s + w * k, "%d x %r at end" % (k, w)
    if r < 0.45:
        seq = "".join(rng.choice(STRIP_WS) for _ in range(rng.randint(2, 5)))
        return seq + s + seq, "mixed %r around" % seq
    if r < 0.6:
        z = rng.choice(NON_STRIP)
        return (z + s) if rng.random() < 0.5 else (s + z), "unstripped %r at an end" % z
    if r < 0.8:
        z = rng.choice(STRIP_WS + NON_STRIP)
        j = rng.randrange(1, max(2, len(s)))
        return s[:j] + z + s[j:], "%r in the middle" % z
    if r < 0.9:
        return " " + w + " " + s + " " + w + " ", "space/%r/space at both ends" % w
    seq = "".join(rng.choice(STRIP_WS + (" ",)) for _ in range(rng.randint(1, 4)))
    return seq, "whitespace only"


def cat_regex_line_breaks(item, rng, i):
    """Line breaks at the ends (stripped) and inside (kept as symbols)."""
    s = item.fs
    b = lb(rng, newline=0.2)
    r = rng.random()
    if r < 0.3:
        return (b + s) if rng.random() < 0.5 else (s + b), "%r at an end" % b
    if r < 0.4:
        return b + s + b, "%r at both ends" % b
    if r < 0.65:
        j = rng.randrange(1, max(2, len(s)))
        return s[:j] + b + s[j:], "%r inside" % b
    if r < 0.8:
        return s + b + rng.choice(("This is the regex.", "ok", "0*1")), "regex, %r, text" % b
    if r < 0.9:
        return rng.choice(("Regex:", "Answer", "```")) + b + s, "text, %r, regex" % b
    return s + b + s, "regex twice split by %r" % b


def cat_regex_code_units(item, rng, i):
    """Characters outside the BMP: alone, starred, in groups."""
    s = item.fs
    a = rng.choice(ASTRAL)
    r = rng.random()
    if r < 0.2:
        return s.replace("0", "𝟎").replace("1", "𝟏"), "0/1 as mathematical bold digits"
    if r < 0.35:
        j = [k for k, c in enumerate(s) if c in "01"]
        k = rng.choice(j)
        return s[:k] + a + s[k + 1:], "one symbol as %r" % a
    if r < 0.5:
        form = rng.choice(("%s*", "(%s)*", "(%s%s)*", "%s|0", "(%s*)"))
        return s + form.replace("%s", a), "appended %r" % form.replace("%s", a)
    if r < 0.6:
        return s.replace("0", a), "every 0 as %r" % a
    forms = ("%s", "%s*", "(%s)*", "%s%s", "(%s)", "%s**", "(%s|%s)*", "%s*%s", "0%s1*",
             "(0%s)*1", "é*", "e\u0301*", "(e\u0301)*")
    form = rng.choice(forms)
    return form.replace("%s", a), "standalone %r" % form.replace("%s", a)


SAFE_NPM_FLAGS = ("-v", "-h", "--help", "--version", "-s", "--silent", "-q", "--quiet", "-d",
                  "--json", "--", "-", "--loglevel=silent", "--color=false", "-dd", "--usage",
                  "-l", "--long", "-0", "-1", "--0", "-*", "-(", "-)")


def cat_regex_leading_dash(item, rng, i):
    """Answers beginning with '-' (read as options by the command line)."""
    s = item.fs
    r = rng.random()
    if r < 0.3:
        d = rng.choice(("-", "--", "---"))
        return d + s, "%r before regex" % d
    if r < 0.55:
        return rng.choice(SAFE_NPM_FLAGS), "bare option-like answer"
    if r < 0.65:
        f = rng.choice(SAFE_NPM_FLAGS)
        return f + " " + s, "option %r then regex (space deleted)" % f
    if r < 0.75:
        return "- " + s, "'- ' before regex (space deleted)"
    if r < 0.82:
        return "\\-" + s, "backslash-dash before regex"
    if r < 0.9:
        w = rng.choice(STRIP_WS + NON_STRIP)
        return w + "-" + s, "%r then dash" % w
    return rng.choice(("-0*1", "-(01)*", "-1*0", "--0*1", "-0", "-01*")), "fixed dash regex"


REGEX_PROSE = ("The regex is {R}", "{R}.", "Answer: {R}", "Regex: {R}", "`{R}`", "```\n{R}\n```",
               "```{LB}{R}{LB}```", "^{R}$", "/{R}/", "r'{R}'", "\"{R}\"", "{R} (over 0 and 1)",
               "Sure!{LB}{R}", "{R}{LB}Explanation: stars repeat.", "I think {R}", "{R};",
               "{R} is the answer", "**{R}**", "$ {R} $", "regex = {R}", "L = {R}")


def cat_regex_prose(item, rng, i):
    """Prose, markup and anchors around a regex."""
    t = rng.choice(REGEX_PROSE)
    b = lb(rng, newline=0.4)
    return t.replace("{LB}", b).replace("{R}", item.fs), "template %r, break %r" % (t, b)


def cat_regex_malformed(item, rng, i):
    """Unbalanced parentheses, misplaced stars, empty alternatives."""
    s = item.fs
    r = rng.random()
    if r < 0.6:
        forms = (("%s**", "double star"), ("*%s", "leading star"), ("%s)", "extra )"),
                 ("(%s", "unclosed ("), ("%s|", "trailing |"), ("|%s", "leading |"),
                 ("%s||0", "empty alternative"), ("%s()", "empty group"), ("(*)%s", "(*)"),
                 ("%s(*)", "star in empty group"), (")%s(", "reversed parens"),
                 ("%s*?", "lazy star"), ("%s{2}", "braces"), ("[%s]", "class"),
                 ("%s(|)", "(|)"), ("((%s)", "two opens"))
        form, what = rng.choice(forms)
        return form.replace("%s", s), what
    if r < 0.8:
        if "(" in s and rng.random() < 0.5:
            j = rng.choice([k for k, c in enumerate(s) if c == "("])
            return s[:j] + s[j + 1:], "one ( removed"
        if ")" in s:
            j = rng.choice([k for k, c in enumerate(s) if c == ")"])
            return s[:j] + s[j + 1:], "one ) removed"
        return s + ")", "extra )"
    return rng.choice(("", "**", "*", "(", ")", "()", "|", "||", "(*)", "((", "))", "*0",
                       "0**1", "(|)", "?", "+")), "fixed malformed"


def cat_regex_depth(item, rng, i):
    """Deep nesting and long sequences."""
    k = pick_k(rng, i)
    s = item.fs
    r = rng.random()
    if r < 0.3:
        k = fit_k(k, 2, len(s))
        return "(" * k + s + ")" * k, "k=%d parens around regex" % k
    if r < 0.5:
        k = fit_k(k, 3, len(s))
        return "(" * k + s + ")*" * k, "k=%d nested stars" % k
    if r < 0.65:
        k = fit_k(k, 1, 0)
        return "".join(rng.choice("01") for _ in range(k)), "k=%d symbols concatenated" % k
    if r < 0.75:
        k = fit_k(k, 2, 0)
        return "|".join(rng.choice("01") for _ in range(k + 1)), "k=%d alternatives" % k
    if r < 0.85:
        # copies of a starred regex can make the subset construction large: few copies
        k = fit_k(min(k, 40), len(s), 0)
        return s * k, "regex repeated k=%d (capped at 40)" % k
    k = fit_k(k, 2, len(s))
    return s + "0*" * k, "k=%d trailing 0*" % k


REGEX_GENERATORS = {
    "regex_rewrite": cat_regex_rewrite, "regex_mutated": cat_regex_mutated,
    "regex_spelling": cat_regex_spelling, "regex_whitespace": cat_regex_whitespace,
    "regex_line_breaks": cat_regex_line_breaks, "regex_code_units": cat_regex_code_units,
    "regex_leading_dash": cat_regex_leading_dash, "regex_prose": cat_regex_prose,
    "regex_malformed": cat_regex_malformed, "regex_depth": cat_regex_depth,
}


# ---------------------------------------------------------------------------
# Corpus mutations
# ---------------------------------------------------------------------------

LOGIC_EDIT_CHARS = (tuple("().,¬∧∨v-&|!=\\") + tuple("0123456789") + tuple("pxvaeqz")
                    + (" ", " ", "\n") + LINE_BREAKS)
REGEX_EDIT_CHARS = tuple("01*()|\\ -+?.") + ("\n", "\r", "😀", "𝟎", "\xa0")


def corpus_mutation(rec, rng):
    """Apply 1-3 character edits to a corpus answer."""
    s = rec["answer"]
    chars = REGEX_EDIT_CHARS if rec["dataset"] == "regex" else LOGIC_EDIT_CHARS
    edits = []
    for _ in range(rng.choice((1, 1, 2, 3))):
        op = rng.choice(("insert", "delete", "substitute")) if s else "insert"
        j = rng.randrange(len(s) + (1 if op == "insert" else 0)) if s or op == "insert" else 0
        if op == "insert":
            c = rng.choice(chars)
            s = s[:j] + c + s[j:]
            edits.append("ins %r@%d" % (c, j))
        elif op == "delete":
            edits.append("del %r@%d" % (s[j], j))
            s = s[:j] + s[j + 1:]
        else:
            c = rng.choice(chars)
            edits.append("sub %r->%r@%d" % (s[j], c, j))
            s = s[:j] + c + s[j + 1:]
    return s, "; ".join(edits)


# ---------------------------------------------------------------------------
# Driver
# ---------------------------------------------------------------------------

class Picker:
    """Chooses dataset items, spread over complexity and biased to short ones."""

    def __init__(self, items):
        """Index the items by complexity."""
        self.items = items

    def pick(self, rng, maxlen=None, need_q=False):
        """Pick an item: a complexity value first, then an item with it."""
        pool = self.items
        if maxlen is not None:
            pool = [it for it in pool if len(it.fs) <= maxlen] or pool
        if need_q:
            q = [it for it in pool if "∀" in it.fs or "∃" in it.fs]
            pool = q or pool
        by = collections.OrderedDict()
        for it in pool:
            by.setdefault(it.complexity, []).append(it)
        key = rng.choice(sorted(by))
        return rng.choice(by[key])


def categories_for(dataset):
    """The generator categories that apply to a dataset."""
    if dataset == "regex":
        return list(REGEX_CATEGORIES)
    return [c for c in LOGIC_CATEGORIES
            if dataset in FIRST_ORDER or c not in FIRST_ORDER_ONLY]


def quotas(dataset):
    """Number of cases per category for a dataset."""
    cats = categories_for(dataset)
    rest = TARGETS[dataset] - CORPUS_SHARE[dataset]
    base, extra = divmod(rest, len(cats))
    out = collections.OrderedDict()
    for j, c in enumerate(cats):
        out[c] = base + (1 if j < extra else 0)
    out[CORPUS_CATEGORY] = CORPUS_SHARE[dataset]
    for rule, counts in LATER_RULES.items():
        if dataset in counts:
            out[rule] = counts[dataset]
    return out


def generate(root, seed):
    """Generate all cases as a list of dicts."""
    corpus = load_corpus(root)
    cases = []
    for dataset in DATASETS:
        items = load_items(root, dataset)
        picker = Picker(items)
        recs = [r for r in corpus if r["dataset"] == dataset]
        seen = set()
        counter = 0
        for cat, n in quotas(dataset).items():
            rng = random.Random("%d/%s/%s" % (seed, dataset, cat))
            for i in range(n):
                for _attempt in range(40):
                    if cat == CORPUS_CATEGORY:
                        rec = rng.choice(recs)
                        answer, note = corpus_mutation(rec, rng)
                        phi0, src = rec["phi0"], "corpus " + rec["id"]
                    else:
                        maxlen = None
                        if dataset != "regex" and cat not in LONG_OK:
                            maxlen = 320 if rng.random() < 0.9 else None
                        item = picker.pick(rng, maxlen=maxlen,
                                           need_q=dataset in FIRST_ORDER
                                           and cat in NEEDS_QUANTIFIER and rng.random() < 0.85)
                        gen = REGEX_GENERATORS[cat] if dataset == "regex" \
                            else LOGIC_GENERATORS[cat]
                        answer, note = gen(item, rng, i)
                        phi0, src = item.fs, item.source
                    if len(answer) > MAX_ANSWER or answer == phi0:
                        continue
                    if (phi0, answer) not in seen:
                        break
                seen.add((phi0, answer))
                counter += 1
                cases.append(collections.OrderedDict((
                    ("id", "fuzz-%s-%05d" % (dataset, counter)), ("dataset", dataset),
                    ("phi0", phi0), ("phi0_source", src), ("answer", answer),
                    ("category", cat), ("note", note), ("hard", False))))
    return cases


def dump_line(case):
    """One JSON line; line-separator characters are escaped to keep one case per line."""
    text = json.dumps(case, ensure_ascii=False)
    for c in ("\x85", "\u2028", "\u2029"):
        text = text.replace(c, "\\u%04x" % ord(c))
    return text + "\n"


def print_table(cases, out):
    """Write counts per dataset and category."""
    counts = collections.Counter((c["dataset"], c["category"]) for c in cases)
    cats = sorted({c for _, c in counts})
    header = "%-24s" % "category" + "".join("%10s" % d for d in DATASETS) + "%8s" % "total"
    out.write(header + "\n")
    for cat in cats:
        row = [counts.get((d, cat), 0) for d in DATASETS]
        out.write("%-24s" % cat + "".join("%10d" % v for v in row) + "%8d\n" % sum(row))
    tot = [sum(v for (d, _), v in counts.items() if d == ds) for ds in DATASETS]
    out.write("%-24s" % "total" + "".join("%10d" % v for v in tot) + "%8d\n" % sum(tot))
    long_ = sum(1 for c in cases if len(c["answer"]) > 1000)
    out.write("answers longer than 1000 chars: %d; longest: %d chars\n"
              % (long_, max(len(c["answer"]) for c in cases)))


def main(argv=None):
    """Parse arguments, generate, write JSONL and the counts table."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", required=True, help="project root (holds tests/reference-oracle)")
    ap.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    ap.add_argument("--out", help="output JSONL path (default: standard output)")
    args = ap.parse_args(argv)
    cases = generate(args.root, args.seed)
    if args.out:
        with open(args.out, "w", encoding="utf-8", newline="\n") as fh:
            for c in cases:
                fh.write(dump_line(c))
    else:
        out = open(sys.stdout.fileno(), "w", encoding="utf-8", newline="\n", closefd=False)
        for c in cases:
            out.write(dump_line(c))
        out.flush()
    print_table(cases, sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
