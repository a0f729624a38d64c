"""Training and evaluation data for the `capable-v2` family, in tokens of the v2 SentencePiece vocabulary.

Owns the v2 task generators (NIAH variants, variable tracking, common/frequent word extraction,
essay QA, passage and JSON copying, plain text), their templates and word lists, and the exact
sizing of samples in v2 tokens. It must not touch the byte-level `capable` data (data.py), which
stays as it is so that the first family's commands reproduce.

Corpus split as data.py: bytes [0, data.HELDOUT_END) of the essays are held out (evaluation
haystacks and the word lists RULER's generators draw from them); training text is the rest.
Templates and word lists differ from RULER's (suites/ruler_*.cpp): no template contains "special
magic", "mentioned in the provided text", "Memorize and track", "VAR ", "numbered list of words" or
"coded text"; the cwe pool and the needle-key words exclude every word of the held-out essays, so
RULER's essay-derived lists on the held-out bytes never occur as training list words.

  /usr/bin/python3 models/training/data_v2.py --selftest   # generator checks (no pytest needed)
"""
import hashlib
import os
import random
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import data as D  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
SPM_RELPATH = "models/training/v2/spm-v2.model"
SPM_PATH = os.path.join(HERE, "v2", "spm-v2.model")

# ---------------------------------------------------------------- word lists (hand-written)
# Needle keys are "<adjective>-<noun>" from these, minus the held-out essays' words and the first
# family's evaluation lists (data.EVAL_ADJ / EVAL_NOUN). RULER's keys come from the held-out
# essays' own words, so the two never share a word.
KEY_ADJ_ALL = [
    "amber", "azure", "beige", "bronze", "coral", "crimson", "golden", "indigo", "ivory", "jade",
    "lilac", "maroon", "ochre", "olive", "scarlet", "silver", "teal", "violet", "dusty", "frosty",
    "glossy", "grumpy", "hasty", "itchy", "jumpy", "leafy", "lumpy", "misty", "muddy", "nimble",
    "plucky", "rusty", "salty", "shaggy", "sleepy", "snowy", "soggy", "spicy", "stormy", "sunny",
    "tangy", "thorny", "velvet", "wobbly", "woolly", "zesty", "breezy", "chilly", "cloudy", "fluffy",
    "fuzzy", "gloomy", "lanky", "mellow", "murky", "pebbly", "sandy", "silky", "smoky", "speckled",
]
KEY_NOUN_ALL = [
    "otter", "badger", "heron", "walrus", "lemur", "ferret", "gecko", "marmot", "pelican", "beaver",
    "lobster", "sparrow", "turtle", "weasel", "hamster", "puffin", "raven", "trout", "salmon", "koala",
    "lantern", "teapot", "anchor", "compass", "thimble", "trumpet", "violin", "banjo", "kayak",
    "canoe", "sled", "barrel", "bucket", "ribbon", "button", "whistle", "marble", "pebble", "acorn",
    "almond", "apricot", "mango", "papaya", "walnut", "pepper", "radish", "turnip", "parsnip",
    "cabbage", "pumpkin", "lagoon", "fjord", "dune", "geyser", "volcano", "prairie", "tundra",
    "cavern", "marsh", "orchid",
]
# Verbs and nouns for multi-key and multi-query samples' other key kinds.
KEY_KINDS = ["adj-noun", "number", "uuid", "two-words"]

# Needle and question templates of v2 ({k} key, {v} value, {a} adjective, {n} noun). data.py's
# first-family templates are reused as they are (they avoid RULER's strings by construction) and
# these add plural and list forms for the multi-value and multi-query tasks.
NEEDLES = D.NEEDLES
QUESTIONS = D.QUESTIONS
INTROS = D.INTROS
MV_QUESTIONS = [  # several values for one key: all of them, in text order
    "\nList every {a} {n} given for {k}, in the order they appear.\nAnswer:",
    "\nWhich {n}s belong to {k}? Give all of them:",
    "\nAll the {a} {n}s recorded for {k} are",
]
MQ_QUESTIONS = [  # several keys: one value each, in the order asked
    "\nGive the {a} {n}s of {ks}, in that order.\nAnswer:",
    "\nWhat {n}s were assigned to {ks}? In order, they are",
    "\nLook up {ks}. Their {n}s, in order:",
]
# RULER-frame paraphrases for a share of single-needle samples: data.FRAME_* (the first family's)
# with another intro, since data.FRAME_INTRO keeps RULER's "Make sure to memorize it."; plural
# frames carry the same idea to multi-value/query answers without RULER's words.
FRAME_INTRO = ("A {a} {n} is hidden within the following {src}. Keep it in mind; you will be asked "
               "for the {n} afterwards.\n")


def frame_template(rng):
    """data.frame_template's draws with this file's intro: (adj, noun, needle, intro, question,
    separator)."""
    a, n, src = rng.choice(D.FRAME_ADJ), rng.choice(["number", "code", "figure"]), \
        rng.choice(D.FRAME_SOURCE)
    intro = FRAME_INTRO.format(a=a, n=n, src=src) if rng.random() < 0.7 else ""
    return a, n, D.FRAME_NEEDLE, intro, D.FRAME_QUESTION.replace("{src}", src), " "


FRAME_MULTI_INTRO = "Several {a} {n}s are hidden in the {src} below. Keep them in mind; questions follow.\n"
FRAME_MULTI_QUESTION = "\nWhat are all the {a} {n}s for {ks} in the {src}? The {a} {n}s for {ks} in the {src} are"

# Variable tracking: statement forms (a name takes a value or the value of another name).
VT_FORMS = [
    ("let {x} = {v};", "let {x} = {y};"),
    ("{x} := {v}", "{x} := {y}"),
    ("SET {X} TO {v}.", "SET {X} TO {Y}."),
    ("assign {v} to {x}.", "assign {y} to {x}."),
    ("define {x} as {v}.", "define {x} as {y}."),
]
VT_INTROS = [
    "The text below hides some assignments between names. Follow them.\n",
    "Keep track of which names get which values in the passage that follows.\n",
    "",
]
VT_QUESTIONS = [
    "\nWhich names end up holding the value {v}? Names:",
    "\nList every name whose value is {v}, in the order they were set.\nAnswer:",
    "\nFollowing the assignments, the names equal to {v} are",
]

# Common-word extraction: list formats and templates.
CWE_FORMATS = ["{i}. {w}", "{i}) {w}", "[{i}] {w}", "{w}", "- {w}"]
CWE_SEPS = [" ", "\n", ", "]
CWE_INTROS = [
    "Here are many words; a few of them come up again and again.\n",
    "Count the words in this list. Some repeat far more often than the rest.\n",
    "Word list:\n",
]
CWE_QUESTIONS = [
    "\nWhich {m} words occur most often in the list? Answer:",
    "\nName the {m} most repeated words above.\nAnswer:",
    "\nThe {m} words that appear the most times are:",
]

# Frequent-word extraction over coded (random) words.
FWE_INTROS = [
    "The following is a stream of made-up words. Some are used much more than others.\n",
    "Below, invented words repeat with different frequencies.\n",
    "",
]
FWE_NOISE = ["~", "--", "*", ""]
FWE_QUESTIONS = [
    "\nWhich 3 made-up words are the most frequent? Answer:",
    "\nGive the three invented words that occur most often, most frequent first:",
    "\nTop 3 words by count:",
]

# Essay QA (extractive): essay paragraphs as numbered documents.
QA_INTROS = [
    "Read these documents and answer from them with words taken from the text.\n\n",
    "Some passages follow. Answer with a phrase copied from them.\n\n",
    "",
]
QA_DOC = ["Document {i}:\n", "[{i}]\n", "Passage {i}. "]
QA_CONT_Q = [
    "\nQuestion: in the documents, which words come right after \"{p}\"?\nAnswer:",
    "\nContinue the quote \"{p}\" with the words that follow it in the text:",
    "\nWhat comes after \"{p}\" in the passages above? Answer:",
]
QA_DOC_Q = [
    "\nQuestion: which document contains \"{p}\"?\nAnswer: Document",
    "\nIn which passage is \"{p}\" written? Passage",
]

COPY_LEADS = ["\nRepeat the passage above:\n", "\nNow copy it exactly:\n", "\nSay it again, word for word:\n"]
JSON_FIELDS = ["name", "city", "code", "color", "owner", "tag", "size", "pet"]


# ---------------------------------------------------------------- vocabulary


class Vocab:
    """The v2 SentencePiece model: ids, exact mid-text tokenization and byte-exact decoding."""

    def __init__(self, path=SPM_PATH):
        import sentencepiece as spm
        if not os.path.exists(path):
            raise SystemExit(f"{path}: missing; make it with models/training/vocab_v2.py")
        self.path = path
        self.sha256 = hashlib.sha256(open(path, "rb").read()).hexdigest()
        self.sp = spm.SentencePieceProcessor(model_file=path)
        self.size = self.sp.get_piece_size()
        self.bos, self.eos, self.unk = self.sp.bos_id(), self.sp.eos_id(), self.sp.unk_id()
        self.pieces = [self.sp.id_to_piece(i) for i in range(self.size)]
        self.space = self.sp.piece_to_id("\u2581")
        nl = self.sp.encode("\n")
        if self.pieces[nl[0]] != "\u2581" or self.pieces[nl[1]] != "<0x0A>" or len(nl) != 2:
            raise SystemExit(f"{path}: '\\n' does not encode as [U+2581, <0x0A>]: {nl}")
        self.bytes_of = []
        for i, p in enumerate(self.pieces):
            m = re.fullmatch(r"<0x([0-9A-F]{2})>", p)
            if self.sp.is_byte(i) and m:
                self.bytes_of.append(bytes([int(m.group(1), 16)]))
            elif self.sp.is_control(i) or self.sp.is_unknown(i):
                self.bytes_of.append(b"")
            else:
                self.bytes_of.append(p.replace("\u2581", " ").encode())
        self.word_start = [p.startswith("\u2581") for p in self.pieces]

    def encode(self, text):
        """Tokens of text at the start of a sequence (SentencePiece's dummy space prefix)."""
        return self.sp.encode(text)

    def encode_mid(self, text):
        """Tokens of text that follows other text at a token boundary (before a space or after a
        newline): no dummy prefix. '\\n' is a byte token no merge crosses, so the tokens after it
        are those of the text alone."""
        return self.sp.encode("\n" + text)[2:]

    def decode_bytes(self, ids, first=False):
        b = b"".join(self.bytes_of[i] for i in ids)
        return b[1:] if first and b.startswith(b" ") else b


_VOCAB = None


def vocab():
    global _VOCAB
    if _VOCAB is None:
        _VOCAB = Vocab()
    return _VOCAB


class CorpusV2:
    """The essays split as data.Corpus, tokenized once, and the v2 word lists."""

    def __init__(self, voc=None):
        self.voc = voc or vocab()
        self.base = D.Corpus()
        self.train_text = self.base.train.decode("utf-8")
        self.heldout_text = self.base.heldout.decode("utf-8", "ignore")
        held = set(re.findall(r"[a-z]+", self.heldout_text.lower()))
        evals = set(D.EVAL_ADJ) | set(D.EVAL_NOUN)
        self.key_adj = [w for w in KEY_ADJ_ALL if w not in held and w not in evals]
        self.key_noun = [w for w in KEY_NOUN_ALL if w not in held and w not in evals]
        # cwe pool: lowercase 4-10 letter words of the training essays that never occur in the
        # held-out essays (first-seen order, so the list is a pure function of the file)
        seen, pool = set(), []
        for w in re.findall(r"\b[a-z]{4,10}\b", self.train_text):
            if w not in seen and w not in held and w not in evals:
                seen.add(w)
                pool.append(w)
        self.cwe_pool = pool
        self.train_words = [w for w in self.base.train_words if w not in held]
        self.toks = {"train": self.voc.encode(self.train_text),
                     "heldout": self.voc.encode(self.heldout_text)}
        self.starts = {k: [i for i, t in enumerate(v) if self.voc.word_start[t] and i > 0]
                       for k, v in self.toks.items()}

    def haystack(self, rng, n, split="train"):
        """About n tokens of essay text, as text starting with ' ' at a word start and ending before
        one (so its tokens in any context at a boundary are the same); padded with '\\n' tokens to
        exactly n. Returns (text, tokens)."""
        if n <= 0:
            return "", []
        toks, starts = self.toks[split], self.starts[split]
        if n + 2 >= len(toks):
            raise ValueError(f"haystack of {n} tokens exceeds the {split} text")
        import bisect
        lo = bisect.bisect_left(starts, rng.randrange(0, len(toks) - n - 1))
        s = starts[min(lo, len(starts) - 1)]
        j = bisect.bisect_right(starts, s + n) - 1
        e = starts[j] if j >= 0 and starts[j] > s else s
        ids = toks[s:e]
        text = self.voc.decode_bytes(ids).decode("utf-8")
        pad = n - len(ids)
        return text + "\n" * pad, ids + [self.voc.encode_mid("\n")[0]] * pad


# ---------------------------------------------------------------- sample assembly


def assemble(voc, segs, T):
    """segs: [(text, is_answer)], the first at the start of the text; every later one begins with
    ' ' or '\\n' or follows a segment ending in '\\n' (so tokenizing segments one by one equals
    tokenizing the whole text). Returns (tokens, mask) of exactly T + 1 tokens with BOS and EOS, or
    None when they do not fit."""
    toks, mask = [voc.bos], [0]
    prev = ""
    for i, (text, ans) in enumerate(segs):
        if not text:
            continue
        if i and not (text[0] in " \n" or prev.endswith("\n")):
            raise ValueError(f"segment {i} starts inside a word: {text[:30]!r}")
        ids = voc.encode(text) if len(toks) == 1 else voc.encode_mid(text)
        toks += ids
        mask += [int(ans)] * len(ids)
        prev = text
    toks.append(voc.eos)
    mask.append(1)
    if len(toks) != T + 1:
        return None
    return toks, mask


def seg_len(voc, text):
    return len(voc.encode_mid(text))


def with_haystack(c, rng, T, head, needles, tail, depths=None, split="train", sentence=True):
    """head + haystack(with needles inserted at token depths) + tail, sized to T + 1 tokens.
    head/tail: [(text, is_answer)]; needles: texts starting with ' '. Returns segs or None."""
    voc = c.voc
    fixed = 2 + sum(len(voc.encode(t) if k == 0 else voc.encode_mid(t))
                    for k, (t, _) in enumerate(head)) + sum(seg_len(voc, t) for t, _ in tail)
    fixed += sum(seg_len(voc, n) for n in needles)
    n = T + 1 - fixed
    if n < 16:
        return None
    hay, ids = c.haystack(rng, n, split)
    # insertion points: word starts inside the haystack, by depth
    cut = [0]
    pos, acc = [], 0
    for t in ids:
        pos.append(acc)
        acc += len(voc.bytes_of[t])
    ws = [k for k in range(1, len(ids)) if voc.word_start[ids[k]]]
    if sentence:
        ss = [k for k in ws if voc.bytes_of[ids[k - 1]].rstrip().endswith((b".", b"?", b"!"))]
        ws = ss or ws
    if not ws:
        ws = [len(ids)]
    pos.append(acc)
    hb = hay.encode()
    ds = depths if depths is not None else [rng.random() ** D.NEEDLE_DEPTH_POW for _ in needles]
    places = []
    for d in ds:
        k = ws[min(len(ws) - 1, int(d * len(ws)))]
        places.append(pos[k])
    order = sorted(range(len(needles)), key=lambda i: (places[i], i))
    segs, last = list(head), 0
    for i in order:
        segs.append((hb[last:places[i]].decode(), False))
        segs.append((needles[i], False))
        last = places[i]
    segs.append((hb[last:].decode(), False))
    segs += tail
    if not head:  # the haystack begins the text: drop its leading space (a dummy prefix comes)
        segs[0] = (segs[0][0][1:], False)
    return segs


# ---------------------------------------------------------------- keys and values


def make_key(rng, c, kind):
    if kind == "adj-noun":
        return f"{rng.choice(c.key_adj)}-{rng.choice(c.key_noun)}"
    if kind == "two-words":
        return f"{rng.choice(c.key_adj)} {rng.choice(c.key_noun)}"
    if kind == "number":
        return str(rng.randrange(100, 1000000))
    return D.rand_uuid(rng)


def make_value(rng, c, kind):
    if kind == "num7":
        return str(rng.randrange(1000000, 10000000))
    if kind == "num5":
        return str(rng.randrange(10000, 100000))
    if kind == "word":
        return rng.choice(c.key_noun)
    return D.rand_uuid(rng)


def distinct(rng, n, make):
    out = []
    for _ in range(50 * n + 50):
        if len(out) == n:
            break
        x = make()
        if x not in out:
            out.append(x)
    return out


# ---------------------------------------------------------------- generators
# Each returns a list of (text, is_answer) segments (assemble() sizes and checks them) or None.


def g_niah(rng, c, T, variant="single", split="train"):
    """single: 1 needle (plus 0-3 distractor keys for multikey), one asked; multikey: many needles
    of other keys; multivalue: 2-4 values for the asked key; multiquery: 2-4 keys asked."""
    frame = variant == "single" and rng.random() < 0.35
    key_kind = rng.choice(KEY_KINDS) if rng.random() < 0.5 else "adj-noun"
    val_kind = rng.choice(["num7", "num7", "num7", "num5", "word", "uuid"])
    if variant == "multikey" and rng.random() < 0.3:
        key_kind, val_kind = "uuid", "uuid"
    n_keys = {"single": 1, "multivalue": rng.choice([1, 1, 2]),
              "multiquery": rng.choice([2, 3, 4]),
              "multikey": rng.choice([2, 3, 4, 6, 10, 20, 40])}[variant]
    n_keys = max(1, min(n_keys, T // 100))
    n_vals = rng.choice([2, 3, 4]) if variant == "multivalue" else 1
    keys = distinct(rng, n_keys, lambda: make_key(rng, c, key_kind))
    vals = {k: distinct(rng, n_vals if i == 0 else 1, lambda: make_value(rng, c, val_kind))
            for i, k in enumerate(keys)}
    asked = keys[:1] if variant != "multiquery" else rng.sample(keys, len(keys))
    noun = {"num7": ["number", "code", "pin"], "num5": ["number", "code"],
            "word": ["word", "codeword"], "uuid": ["id", "uuid", "token"]}[val_kind]
    a, n = rng.choice(D.ADJ), rng.choice(noun)
    nt = rng.choice(NEEDLES)
    intro = D.fill(rng.choice(INTROS), a=a, n=n)
    sep = " "
    if frame:
        a, n, nt, intro, q, sep = frame_template(rng)
        q = "\n" + q.replace("{k}", asked[0])
    elif variant in ("single", "multikey"):
        qt, sep = rng.choice(QUESTIONS)
        q = "\n" + D.fill(qt, k=asked[0], a=a, n=n)
    else:
        ks = ", ".join(asked[:-1]) + " and " + asked[-1] if len(asked) > 1 else asked[0]
        if rng.random() < 0.3:
            src = rng.choice(D.FRAME_SOURCE)
            intro = FRAME_MULTI_INTRO.format(a=a, n=n, src=src)
            q = FRAME_MULTI_QUESTION.format(a=a, n=n, ks=ks, src=src)
        else:
            q = rng.choice(MV_QUESTIONS if variant == "multivalue" else MQ_QUESTIONS)
            q = q.format(a=a, n=n, k=ks, ks=ks)
    needles = [" " + D.fill(nt, k=k, v=v, a=a, n=n) for k in keys for v in vals[k]]
    ans = ", ".join(v for k in asked for v in vals[k])
    if sep == "" and q.endswith("\n"):
        tail = [(q, False), (ans, True)]
    else:
        tail = [(q, False), (" " + ans, True)]
    head = [(intro, False)] if intro else []
    if head and not intro.endswith("\n"):
        return None
    return with_haystack(c, rng, T, head, needles, tail, split=split)


def rand_name(rng, upper):
    s = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.choice([3, 4, 5, 6])))
    return s.upper() if upper else s


def g_vt(rng, c, T, split="train"):
    """1-3 chains of 1-5 hops; one chain's value asked; answer: its names in assignment order."""
    hops = rng.choice([1, 2, 3, 4, 5])
    n_chains = rng.choice([1, 2, 2, 3])
    fx, fy = rng.choice(VT_FORMS)
    upper = "{X}" in fx or rng.random() < 0.3
    names = distinct(rng, n_chains * (hops + 1), lambda: rand_name(rng, upper))
    values = distinct(rng, n_chains, lambda: str(rng.randrange(10000, 100000)))
    stmts, depths = [], []
    for ci in range(n_chains):
        ch = names[ci * (hops + 1):(ci + 1) * (hops + 1)]
        ds = sorted(rng.random() for _ in ch)
        for j, x in enumerate(ch):
            if j == 0:
                s = fx.format(x=x, X=x, v=values[ci])
            else:
                s = fy.format(x=x, X=x, y=ch[j - 1], Y=ch[j - 1])
            stmts.append(" " + s)
            depths.append(ds[j])
    asked = rng.randrange(n_chains)
    chain = names[asked * (hops + 1):(asked + 1) * (hops + 1)]
    q = rng.choice(VT_QUESTIONS).format(v=values[asked])
    intro = rng.choice(VT_INTROS)
    head = [(intro, False)] if intro else []
    return with_haystack(c, rng, T, head, stmts, [(q, False), (" " + " ".join(chain), True)],
                         depths=depths, split=split)


def fill_list(voc, budget, make_item, rng, cap=5000):
    """Items from make_item() while their tokens fit in budget; returns the list."""
    items, used = [], 0
    for _ in range(cap):
        it = make_item()
        k = seg_len(voc, " " + it)
        if used + k > budget:
            break
        items.append(it)
        used += k
    return items


def g_cwe(rng, c, T, split="train"):
    """A list of words in which m (3-10) words repeat r times and the others fewer; the answer is
    the m repeated words in order of first appearance."""
    voc = c.voc
    m = rng.choice([3, 5, 10, 10])
    r = rng.choice([3, 4, 5, 6, 8])
    r_other = rng.choice([1, 1, 2]) if r >= 4 else 1
    fmt, sep = rng.choice(CWE_FORMATS), rng.choice(CWE_SEPS)
    intro, q = rng.choice(CWE_INTROS), rng.choice(CWE_QUESTIONS).format(m=m)
    words = rng.sample(c.cwe_pool, len(c.cwe_pool))
    common, spare = words[:m], words[m:]
    # size: tokens per item measured on a probe of this list's own words
    per = sum(seg_len(voc, sep + fmt.format(i=500, w=w)) for w in words[:40]) / 40
    ans_tokens = seg_len(voc, " " + ", ".join(common)) + 1
    budget = T + 1 - 2 - seg_len(voc, intro) - seg_len(voc, q) - ans_tokens - 4
    n_items = int(budget / per) if per else 0
    n_other = min((n_items - m * r) // r_other, len(spare))
    if n_other < 1:
        return None
    others, spare = spare[:n_other], spare[n_other:]
    lst = common * r + others * r_other
    rng.shuffle(lst)
    for _ in range(8):  # the probe is an estimate: drop or add other words until the list fits
        body = sep.join(fmt.format(i=i + 1, w=w) for i, w in enumerate(lst))
        used = len(voc.encode(intro + body)) + seg_len(voc, q) + ans_tokens + 1
        slack = T + 1 - used
        if 0 <= slack <= 2 * per + 2:
            break
        if slack < 0:
            drop = set(others[:max(1, int(-slack / per / r_other) + 1)])
            others = [w for w in others if w not in drop]
            lst = [w for w in lst if w not in drop]
        else:
            add, spare = spare[:int(slack / per / r_other)], spare[int(slack / per / r_other):]
            if not add:
                break
            others += add
            for w in add * r_other:
                lst.insert(rng.randrange(len(lst) + 1), w)
    if not 0 <= slack or len(others) < 1:
        return None
    order, seen = [], set()
    for w in lst:
        if w in common and w not in seen:
            seen.add(w)
            order.append(w)
    pad = T + 1 - used
    # the list starts the text (no haystack): pad with newlines after the list
    return [(intro + body + "\n" * pad, False), (q, False), (" " + ", ".join(order), True)]


def g_fwe(rng, c, T, split="train"):
    """Coded (random) words with Zipf-like counts; the answer is the 3 most frequent, most first."""
    voc = c.voc
    n_words = rng.choice([20, 40, 80, 150])
    vocab_words = distinct(rng, n_words, lambda: rand_name(rng, False))
    alpha = rng.choice([1.5, 2.0, 2.5])
    weights = [1.0 / (i + 1) ** alpha for i in range(n_words)]
    noise = rng.choice(FWE_NOISE)
    intro, q = rng.choice(FWE_INTROS), rng.choice(FWE_QUESTIONS)
    ans_text = " " + " ".join(vocab_words[:3])
    budget = T + 1 - 2 - seg_len(voc, intro + "x") - seg_len(voc, q) - seg_len(voc, ans_text) - 1
    items = fill_list(voc, budget, lambda: rng.choices(vocab_words, weights)[0] +
                      ((" " + noise) if noise and rng.random() < 0.3 else ""), rng,
                      cap=max(8, T))
    cnt = {w: 0 for w in vocab_words}
    for it in items:
        cnt[it.split(" ")[0]] += 1
    ranked = sorted(vocab_words, key=lambda w: -cnt[w])
    if len(ranked) < 4 or not (cnt[ranked[0]] > cnt[ranked[1]] > cnt[ranked[2]] > cnt[ranked[3]]):
        return None
    ans = " " + " ".join(ranked[:3])
    body = " ".join(items)
    head = intro + body
    used = len(voc.encode(head)) + seg_len(voc, q) + seg_len(voc, ans) + 2
    if used > T + 1:
        return None
    return [(head + "\n" * (T + 1 - used), False), (q, False), (ans, True)]


def g_qa(rng, c, T, split="train"):
    """Essay passages (40-400 tokens each, as many as fit) as numbered documents; a quoted phrase
    from one; the answer is either the words that follow it there (extractive) or the document's
    number. (The essays file keeps no paragraph breaks, so documents are token spans.)"""
    voc = c.voc
    intro = rng.choice(QA_INTROS)
    dfmt = rng.choice(QA_DOC)
    p_len, a_len = rng.choice([4, 5, 6, 8]), rng.choice([2, 3, 4, 6])
    cont = rng.random() < 0.7
    qtemp = rng.choice(QA_CONT_Q if cont else QA_DOC_Q)
    # the question quotes p_len words and the answer is a_len words or a number: reserve for both
    reserve = seg_len(voc, qtemp.format(p=" ".join(["wordy"] * p_len))) + 6 * a_len + 8
    budget = T + 1 - 2 - seg_len(voc, intro + "x") - reserve
    bodies, used = [], 0
    while len(bodies) < 60:
        k = len(bodies) + 1
        lab = seg_len(voc, ("\n\n" if bodies else "") + dfmt.format(i=k))
        n = min(rng.randrange(40, 400), budget - used - lab)
        if n < 24:
            break
        text, _ = c.haystack(rng, n, split)
        body = " ".join(text.split())
        bodies.append(body)
        used += lab + seg_len(voc, " " + body)
    if len(bodies) < 2:
        return None
    gold = rng.randrange(len(bodies))
    words = bodies[gold].split()
    if len(words) < p_len + a_len + 2:
        return None
    i = rng.randrange(0, len(words) - p_len - a_len)
    phrase, answer = " ".join(words[i:i + p_len]), " ".join(words[i + p_len:i + p_len + a_len])
    if sum(b.count(phrase) for b in bodies) != 1:
        return None
    q = qtemp.format(p=phrase)
    ans = " " + answer if cont else f" {gold + 1}"
    def compose():
        parts = [("\n\n" if k else "") + dfmt.format(i=k + 1) + b for k, b in enumerate(bodies)]
        head = intro + "".join(parts)
        return head, len(voc.encode(head)) + seg_len(voc, q) + seg_len(voc, ans) + 2

    head, used = compose()
    if T + 1 - used > 8:  # the reserve was generous: lengthen the last document into the gap
        ext = " ".join(c.haystack(rng, T + 1 - used - 2, split)[0].split())
        if phrase not in ext and phrase not in bodies[-1][-200:] + " " + ext[:200]:
            bodies[-1] += " " + ext
            head2, used2 = compose()
            if used2 <= T + 1:
                head, used = head2, used2
            else:
                bodies[-1] = bodies[-1][:-len(ext) - 1]
    if used > T + 1:
        return None
    return [(head + "\n" * (T + 1 - used), False), (q, False), (ans, True)]


def g_copy(rng, c, T, split="train"):
    """A passage (16-300 tokens) in essay text, then a request to repeat it and the copy."""
    voc = c.voc
    n = rng.randrange(16, max(17, min(300, T // 4)))
    _, ids = c.haystack(rng, n, split)
    # the essays are hard-wrapped: line breaks become spaces so words stay apart
    passage = " ".join(voc.decode_bytes(ids).decode("utf-8").split())
    if not passage:
        return None
    lead = rng.choice(COPY_LEADS)
    tail = [("\nPassage: " + passage, False), (lead, False), (passage, True)]
    return with_haystack(c, rng, T, [], [], tail, split=split)


def json_record(rng, c):
    r = {"id": rng.randrange(1, 100000)}
    for f in rng.sample(JSON_FIELDS, rng.choice([2, 3, 4])):
        r[f] = (str(rng.randrange(1000, 1000000)) if f in ("code", "size") else
                D.rand_uuid(rng)[:8] if f == "tag" else rng.choice(c.key_noun if f == "pet"
                                                                    else c.train_words))
    return "{" + ", ".join(f'"{k}": ' + (str(v) if k == "id" else f'"{v}"')
                           for k, v in r.items()) + "}"


def g_json(rng, c, T, split="train"):
    """A JSON list of records, then either one field of one record (by id) or the whole record."""
    voc = c.voc
    recs = fill_list(voc, T - 40, lambda: json_record(rng, c) + ",", rng, cap=600)
    ids_seen, uniq = set(), []
    for r in recs:
        rid = r.split(",")[0]
        if rid not in ids_seen:
            ids_seen.add(rid)
            uniq.append(r.rstrip(","))
    if not uniq:
        return None
    import json
    t = rng.randrange(len(uniq))
    rec = json.loads(uniq[t])
    if rng.random() < 0.7:
        f = rng.choice([k for k in rec if k != "id"])
        q, ans = f'\nWhat is the "{f}" of the record whose "id" is {rec["id"]}?\nAnswer:', \
            " " + str(rec[f])
    else:
        q, ans = f'\nCopy the record with "id" {rec["id"]} exactly:\n', uniq[t]
    while uniq:
        body = "[\n" + ",\n".join(uniq) + "\n]"
        used = len(voc.encode(body)) + seg_len(voc, q) + len(voc.encode_mid(ans)) + 2
        if used <= T + 1:
            break
        if len(uniq) == 1:  # only the asked record is left and it does not fit
            return None
        drop = rng.randrange(len(uniq))
        if drop == t:
            continue
        uniq.pop(drop)
        t -= drop < t
    else:
        return None
    if ans.startswith(" "):
        return [(body + "\n" * (T + 1 - used), False), (q, False), (ans, True)]
    return [(body + "\n" * (T + 1 - used), False), (q, False), (ans, True)]


def g_rrep(rng, c, T, split="train"):
    """A random string, then the same string repeated until the sample is full, every copy after
    the first supervised: data.random_repeat's induction signal (it made copying form within ~1K
    steps in the first family, where copies inside essay text had not after 6.7K) in v2 tokens."""
    voc = c.voc
    n = rng.randrange(8, max(9, min(100, T // 2)))
    alpha = rng.choice(["0123456789", "abcdefghijklmnopqrstuvwxyz", "abcdefghij0123456789 "])
    unit = " [" + "".join(rng.choice(alpha) for _ in range(n)).strip() + "]"
    uids = voc.encode_mid(unit)
    rest = T + 1 - 2 - len(uids)  # after BOS, EOS and the first copy
    k = (rest - rng.randrange(0, max(1, T // 4))) // len(uids)  # repeats; essay text leads
    if k < 1:
        return None
    lead_n = rest - k * len(uids)
    lead = [(c.haystack(rng, lead_n, split)[0][1:], False)] if lead_n > 16 else []
    pad = T + 1 - 2 - len(uids) * (k + 1) - (len(voc.encode(lead[0][0])) if lead else 0)
    if pad < 0:
        return None
    first = [(unit if lead else unit[1:], False)]
    return lead + first + [(unit * k, True), ("\n" * pad, False)]


def g_lm(rng, c, T, split="train"):
    return with_haystack(c, rng, T, [], [], [], split=split)


GENERATORS = {
    "niah": lambda rng, c, T: g_niah(rng, c, T, "single"),
    "niah_mk": lambda rng, c, T: g_niah(rng, c, T, "multikey"),
    "niah_mv": lambda rng, c, T: g_niah(rng, c, T, "multivalue"),
    "niah_mq": lambda rng, c, T: g_niah(rng, c, T, "multiquery"),
    "vt": g_vt, "cwe": g_cwe, "fwe": g_fwe, "qa": g_qa, "copy": g_copy, "json": g_json,
    "lm": g_lm, "rrep": g_rrep,
}
# The v2 mix (share of samples). niah (single) keeps the largest share: train.py's length gates
# are measured on it, as for the first family.
TASKS_V2 = [("niah", 0.22), ("niah_mk", 0.10), ("niah_mv", 0.07), ("niah_mq", 0.07), ("vt", 0.10),
            ("cwe", 0.10), ("fwe", 0.07), ("qa", 0.08), ("copy", 0.06), ("json", 0.06),
            ("lm", 0.07)]
# train.py --induction-warmup-steps: 35% random-string repetition first, as the first family's
TASKS_V2_WARM = [("rrep", 0.35)] + [(n, w * 0.65) for n, w in TASKS_V2]


def make_sample(seed, index, T, corpus, split="train", task=None, mix=None):
    """One sample of exactly T + 1 v2 tokens: (tokens, answer mask, task name). A pure function of
    (seed, split, index, T, task, mix); a task that does not fit in T becomes plain text."""
    mix = mix or TASKS_V2
    rng = random.Random(f"{seed}/v2/{split}/{index}")
    if task is None:
        r, acc = rng.random(), 0.0
        task = mix[-1][0]
        for name, w in mix:
            acc += w
            if r < acc:
                task = name
                break
    segs = GENERATORS[task](rng, corpus, T)
    out = assemble(corpus.voc, segs, T) if segs else None
    if out is None:
        task = "lm"
        out = assemble(corpus.voc, g_lm(rng, corpus, T), T)
    if out is None:
        raise AssertionError(f"plain text of {T} tokens did not assemble (seed {seed}, {index})")
    return out[0], [0] * (T + 1) if task == "lm" else out[1], task


# ---------------------------------------------------------------- evaluation (RULER niah_single_2 form)


def eval_niah_sample(seed, index, T, depth, corpus, style="ruler"):
    """A held-out single-needle sample of exactly T prompt tokens (BOS included) and its answer
    tokens (' ' + 7 digits), in RULER niah_single_2's strings (style 'ruler') or a training
    template (style 'train'). Returns (prompt tokens, answer tokens, value)."""
    rng = random.Random(f"{seed}/v2eval/{index}")
    key = f"{rng.choice(D.EVAL_ADJ)}-{rng.choice(D.EVAL_NOUN)}"
    value = str(rng.randrange(1000000, 10000000))
    if style == "ruler":
        intro, needle, q = D.RULER_INTRO, D.RULER_NEEDLE.format(key=key, value=value), \
            D.RULER_QUESTION.format(key=key)
    else:
        intro = D.fill(D.INTROS[2], a="secret", n="number")
        needle = D.fill(D.NEEDLES[0], k=key, v=value, a="secret", n="number")
        q = "\n" + D.fill(D.QUESTIONS[0][0], k=key, a="secret", n="number")
    voc = corpus.voc
    ans = voc.encode_mid(" " + value)
    segs = with_haystack(corpus, rng, T + len(ans), [(intro, False)], [" " + needle],
                         [(q, False), (" " + value, True)], depths=[depth], split="heldout")
    toks, _ = assemble(voc, segs, T + len(ans))
    toks = toks[:-1]  # no EOS
    return toks[:T], toks[T:], value


# ---------------------------------------------------------------- self-check


def selftest():
    import collections
    c = CorpusV2()
    voc = c.voc
    fails = collections.Counter()
    counts = collections.Counter()
    print(f"vocab {voc.size} pieces, sha256 {voc.sha256}")
    print(f"key words: {len(c.key_adj)} adjectives, {len(c.key_noun)} nouns; cwe pool "
          f"{len(c.cwe_pool)} words")
    # word lists stay away from the held-out essays and RULER's strings
    held = set(re.findall(r"[a-z]+", c.heldout_text.lower()))
    assert not (set(c.key_adj) | set(c.key_noun) | set(c.cwe_pool)) & held
    banned = ["special magic", "mentioned in the provided text", "Memorize and track", "VAR ",
              "numbered list of words", "coded text", "Make sure to memorize"]
    for name in GENERATORS:
        for T in (128, 160, 256, 1024, 4096, 8192):
            for i in range(6 if T < 8192 else 2):
                toks, mask, task = make_sample(7, i, T, c, task=name)
                counts[(name, task == name)] += 1
                assert len(toks) == len(mask) == T + 1, (name, T, len(toks))
                assert toks[0] == voc.bos and toks[-1] == voc.eos and mask[-1] == (task != "lm")
                text = voc.decode_bytes(toks[1:-1], first=True).decode("utf-8")
                # segment-by-segment tokens equal the whole text's tokens
                if voc.encode(text) != toks[1:-1]:
                    fails["retokenize"] += 1
                    print("retokenize mismatch", name, T, i)
                # sizing leftovers are newlines: they must stay a small part of the sample
                run = max([len(x) for x in re.findall(r"\n+", text)] or [0])
                if run > 80:
                    fails["newline-padding"] += 1
                    print("newline run of", run, "in", name, T, i)
                for b in banned:
                    if b in text:
                        fails["ruler-string"] += 1
                        print("RULER string", repr(b), "in", name)
                if task != "lm":
                    ans = voc.decode_bytes([t for t, m in zip(toks, mask) if m][:-1]).decode()
                    assert ans.strip(), (name, T)
                    if name == "cwe":  # the answer words are the most frequent of the list
                        body = text[:text.rfind("\n", 0, len(text) - len(ans))]
                        ws = [w.strip() for w in ans.split(",")]
                        cnt = collections.Counter(re.findall(r"[a-z]+", body))
                        top = min(cnt[w] for w in ws)
                        assert all(cnt[w] < top for w in cnt if w not in ws and w in c.cwe_pool), \
                            ("cwe answer not the most frequent", T, i)
                    if name.startswith("niah") or name == "vt":
                        for a in re.split(r"[ ,]+", ans.strip()):
                            assert a in text[:len(text) - len(ans)], (name, a)
    for T in (1024, 4096, 8192):
        p, a, v = eval_niah_sample(1, 0, T, 0.5, c)
        assert len(p) == T and voc.decode_bytes(a).decode() == " " + v, (T, a, v)
        assert "special magic" in voc.decode_bytes(p).decode()
    # determinism
    assert make_sample(3, 5, 512, c) == make_sample(3, 5, 512, c)
    print("samples per (task, kept):", dict(counts))
    if fails:
        raise SystemExit(f"selftest FAILED: {dict(fails)}")
    print("selftest ok")


if __name__ == "__main__":
    if "--selftest" in sys.argv:
        selftest()
    else:
        print(__doc__)
