"""Training and evaluation data for the `capable` family, made here from the Paul Graham essays.

Everything is bytes: token id = byte value, BOS = 256, EOS = 257 (the synthetic families' byte-level
vocabulary). Every sample is a pure function of (seed, index), so a run is reproducible and resumable.

Corpus split (recorded in the manifest): the file is 49 essays joined in file-name order. The first
five essays, bytes [0, 79259) (addiction, before-the-startup, apple, ...: the text that RULER's and
gkamradt's haystacks start from), are HELD OUT; bytes [79259, end) are training text.

Training templates are deliberately different from RULER's niah templates (see TEMPLATES.md in the
README): no training needle, intro, question or answer prefix contains the RULER strings
"special magic", "mentioned in the provided text" or "Make sure to memorize it".
"""
import hashlib
import os
import random
import re

BOS, EOS, VOCAB = 256, 257, 258
# The essays sit in shared/ beside the checkout; the relative form is what manifests record.
ESSAYS_RELPATH = "../shared/data/niah/paul_graham_essays.txt"
ESSAYS_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ESSAYS_RELPATH)
ESSAYS_SHA256 = "b3a70ebc054f2eab5057baf3c4b7e857711472be8086240a516fd29b648ad857"
HELDOUT_END = 79259  # bytes [0, HELDOUT_END): the first five essays, never trained on


class Corpus:
    def __init__(self, path=ESSAYS_PATH):
        raw = open(path, "rb").read()
        self.sha256 = hashlib.sha256(raw).hexdigest()
        if self.sha256 != ESSAYS_SHA256:
            raise SystemExit(f"{path}: sha256 {self.sha256} is not the recorded {ESSAYS_SHA256}")
        self.heldout = raw[:HELDOUT_END]
        self.train = raw[HELDOUT_END:]
        words = re.findall(rb"\b[a-z]{4,10}\b", self.train)
        seen, uniq = set(), []
        for w in words:
            if w not in seen:
                seen.add(w)
                uniq.append(w.decode())
        self.train_words = uniq  # ~6K lowercase words of the training essays, first-seen order


def span(text, rng, n):
    """n bytes of text from a random offset (valid UTF-8, padded with spaces to exactly n)."""
    if n <= 0:
        return b""
    start = rng.randrange(0, max(1, len(text) - n - 8))
    while start < len(text) and (text[start] & 0xC0) == 0x80:
        start += 1
    s = text[start:start + n].decode("utf-8", "ignore").encode()
    return s.ljust(n, b" ")


def boundary(hay, pos):
    """A sentence boundary (just after '. ' or '.\\n') near pos, else the nearest space, else pos."""
    lo, hi = max(0, pos - 60), min(len(hay), pos + 60)
    best = None
    for m in re.finditer(rb"[.?!][ \n]", hay[lo:hi]):
        p = lo + m.end()
        if best is None or abs(p - pos) < abs(best - pos):
            best = p
    if best is not None:
        return best
    for d in range(0, 40):
        for p in (pos - d, pos + d):
            if 0 <= p < len(hay) and hay[p:p + 1] in (b" ", b"\n"):
                return p + 1
    return pos


# Every needle placed at a random depth (single and multi-needle samples, variable tracking's
# distractor) goes at u ** NEEDLE_DEPTH_POW for uniform u: train.py's --long-range-depth-pow sets it
# for its long-range phase; 1.0 is uniform, with the same draws and bytes as before it existed.
NEEDLE_DEPTH_POW = 1.0


def insert_needles(hay, needles, rng, depths=None):
    """Inserts needle byte strings into hay at random (or given, 0..1) depths; returns bytes."""
    pos = []
    for i, _ in enumerate(needles):
        d = depths[i] if depths is not None else rng.random() ** NEEDLE_DEPTH_POW
        pos.append(boundary(hay, int(d * len(hay))))
    order = sorted(range(len(needles)), key=lambda i: pos[i])
    out, last = [], 0
    for i in order:
        out.append(hay[last:pos[i]])
        out.append(needles[i])
        last = pos[i]
    out.append(hay[last:])
    return b"".join(out)


# ---------------------------------------------------------------- keys and values

def rand_uuid(rng):
    h = "%032x" % rng.getrandbits(128)
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def make_key(rng, words, kind):
    if kind == "word":
        form = rng.random()
        a, b = rng.choice(words), rng.choice(words)
        if form < 0.5:
            return f"{a}-{b}"
        if form < 0.75:
            return a
        return f"{a} {b}"
    if kind == "number":
        return str(rng.randrange(100, 100000))
    return rand_uuid(rng)


def make_value(rng, words, kind):
    if kind == "num7":
        return str(rng.randrange(1000000, 10000000))
    if kind == "num5":
        return str(rng.randrange(10000, 100000))
    if kind == "word":
        return rng.choice(words)
    return rand_uuid(rng)


NOUN = {"num7": ["number", "code", "figure", "pin", "id number"],
        "num5": ["number", "code", "figure"],
        "word": ["word", "password", "codeword", "term"],
        "uuid": ["id", "uuid", "token", "identifier"]}
ADJ = ["secret", "hidden", "lucky", "private", "assigned", "chosen", "reserved", "registered",
       "personal", "stored"]

# Needle templates: {k} key, {v} value, {a} adjective, {n} noun. Key always precedes the value.
NEEDLES = [
    "The {a} {n} of {k} is {v}.",
    "Remember this: {k} has the {a} {n} {v}.",
    "Note that the {n} assigned to {k} is {v}.",
    "For {k}, the {a} {n} is {v}.",
    "{k} => {v}.",
    "Important: the {n} for {k} equals {v}.",
    "Record for {k}: {n} {v}.",
    "The {n} that belongs to {k} is {v}.",
    "Keep in mind that {k} uses the {a} {n} {v}.",
    "Entry {k}, {a} {n}: {v}.",
]
QUESTIONS = [
    ("Question: what is the {a} {n} of {k}?\nAnswer:", " "),
    ("What {n} was given for {k}? The {n} is", " "),
    ("Recall the {a} {n} for {k}. It is", " "),
    ("Q: {k}'s {n}?\nA:", " "),
    ("Look back at the text. Which {n} belongs to {k}? Answer:", " "),
    ("Find the {n} of {k} in the document above.\n", ""),
    ("{k} => ", ""),
    ("Tell me the {a} {n} for {k}: ", ""),
]
INTROS = [
    "",
    "Read the document below. It contains some {n}s that you will be asked about.\n",
    "The text that follows hides a few {a} {n}s.\n",
    "Document:\n",
    "Below is a long passage with facts inserted into it. Pay attention to them.\n",
]


# The canonical training form (used for most retrieval samples from --mix-v3-from-step on): one
# needle sentence and one question whose answer prefix repeats the key, as RULER's does, in other
# words than RULER's.
CANON_NEEDLE = "The secret number for {k} is {v}."
CANON_QUESTION = ("\nWhat is the secret number for {k}? The secret number for {k} is", " ")
CANON_INTRO = "Some secret numbers are written in the text below. Remember them.\n"


# RULER-frame paraphrases (from --mix-v5-from-step on): RULER's niah sentence frames — an intro
# announcing one hidden value, needles "One of the ... for K is: V.", a question whose answer prefix
# repeats "... for K mentioned in the ... is" — with other words. The exact RULER strings never
# occur: FRAME_ADJ excludes "special" and "magic", FRAME_SOURCE excludes "provided text". Added
# after the third attempt learnt retrieval in its own templates (train_2048 8/8) but read 0/8 on
# RULER's: teacher-forced, it copied every digit after the first and put " t" (" the ...") where
# the first digit belongs — a format it had never seen, not a retrieval failure.
FRAME_ADJ = ["secret", "hidden", "lucky", "private", "chosen", "reserved", "registered", "stored",
             "important", "unique"]
FRAME_SOURCE = ["text", "document", "passage", "text above", "given text", "article", "essay"]
FRAME_INTRO = ("A {a} {n} is hidden within the following {src}. Make sure to memorize it. I will "
               "quiz you about the {n} afterwards.\n")
FRAME_NEEDLE = "One of the {a} {n}s for {k} is: {v}."
FRAME_QUESTION = ("What is the {a} {n} for {k} mentioned in the {src}? The {a} {n} for {k} "
                  "mentioned in the {src} is")


def frame_template(rng):
    """(adjective, noun, needle template, intro, question template with {k}, separator)."""
    a, n, src = rng.choice(FRAME_ADJ), rng.choice(["number", "code", "figure"]), \
        rng.choice(FRAME_SOURCE)
    intro = FRAME_INTRO.format(a=a, n=n, src=src) if rng.random() < 0.7 else ""
    q = FRAME_QUESTION.replace("{src}", src)
    return a, n, FRAME_NEEDLE, intro, q, " "


def fill(t, **kw):
    return t.format(**kw)


# ---------------------------------------------------------------- task generators
# Each returns (prompt_bytes, answer_bytes) with the answer ending in EOS handled by the caller,
# sized so that len(BOS + prompt + answer + EOS) == T + 1.

def niah(rng, corpus_text, words, T, key_kind="word", val_kind="num7", n_needles=None,
         n_values=1, n_queries=1, canon=False, frame=False):
    if n_needles is None:
        n_needles = rng.choice([1, 1, 2, 3, 4])
    n_keys = max(n_needles, n_queries)
    a, n = rng.choice(ADJ), rng.choice(NOUN[val_kind])
    nt = rng.choice(NEEDLES)
    if canon:
        a, n, nt = "secret", "number", CANON_NEEDLE
    if frame:
        a, n, nt, f_intro, f_q, f_sep = frame_template(rng)
    keys = []
    while len(keys) < n_keys:
        k = make_key(rng, words, key_kind)
        if k not in keys:
            keys.append(k)
    values = {k: [make_value(rng, words, val_kind) for _ in range(n_values if i == 0 else 1)]
              for i, k in enumerate(keys)}
    queried = [keys[0]] if n_queries == 1 else rng.sample(keys, n_queries)
    needles = [(" " + fill(nt, k=k, v=v, a=a, n=n) + " ").encode()
               for k in keys for v in values[k]]
    rng.shuffle(needles)
    intro = fill(rng.choice(INTROS), a=a, n=n).encode()
    qt, sep = rng.choice(QUESTIONS)
    if canon:
        intro = (CANON_INTRO if rng.random() < 0.5 else "").encode()
        qt, sep = CANON_QUESTION
    if frame:
        intro, qt, sep = f_intro.encode(), f_q, f_sep
    if len(queried) == 1:
        q = "\n" + fill(qt, k=queried[0], a=a, n=n)
    else:
        ks = ", ".join(queried[:-1]) + " and " + queried[-1]
        q = "\n" + f"List the {a} {n}s of {ks}, in that order.\nAnswer:"
        sep = " "
    ans_vals = [v for k in queried for v in values[k]]
    answer = (sep + ", ".join(ans_vals)).encode()
    fixed = 1 + len(intro) + sum(map(len, needles)) + len(q.encode()) + len(answer) + 1
    hay = span(corpus_text, rng, T + 1 - fixed)
    if T + 1 - fixed < 0:
        return None
    ctx = insert_needles(hay, needles, rng)
    return intro + ctx + q.encode(), answer


def niah_seq(rng, corpus_text, words, T, canon=False, frame=False):
    """2-6 needles, then 2-4 question/answer pairs in a row (each answer supervised): several
    retrieval signals per sample. Returns a list of (bytes, is_answer) segments."""
    n_needles = min(rng.choice([2, 3, 4, 5, 6]), max(2, T // 150))
    a, n = rng.choice(ADJ), rng.choice(NOUN["num7"])
    nt = rng.choice(NEEDLES)
    if canon:
        a, n, nt = "secret", "number", CANON_NEEDLE
    if frame:
        a, n, nt, f_intro, f_q, f_sep = frame_template(rng)
    keys = []
    while len(keys) < n_needles:
        k = make_key(rng, words, "word")
        if k not in keys:
            keys.append(k)
    vals = {k: make_value(rng, words, "num7") for k in keys}
    needles = [(" " + fill(nt, k=k, v=vals[k], a=a, n=n) + " ").encode() for k in keys]
    intro = fill(rng.choice(INTROS), a=a, n=n).encode()
    if frame:
        intro = f_intro.encode()
    asked = rng.sample(keys, min(len(keys), rng.choice([2, 3, 4]), max(1, T // 200)))
    qa = []
    for k in asked:
        qt, sep = (f_q, f_sep) if frame else CANON_QUESTION if canon else rng.choice(QUESTIONS)
        qa.append((("\n" + fill(qt, k=k, a=a, n=n)).encode(), False))
        qa.append(((sep + vals[k]).encode(), True))
    fixed = 1 + len(intro) + sum(map(len, needles)) + sum(len(s) for s, _ in qa) + 1
    if T + 1 - fixed < 0:
        return None
    hay = span(corpus_text, rng, T + 1 - fixed)
    ctx = insert_needles(hay, needles, rng)
    return [(intro + ctx, False)] + qa


def random_copy(rng, corpus_text, words, T):
    """A random string (letters and digits), essay text, then the string again (the answer): a dense
    induction-head signal that no language model can predict."""
    n = rng.randrange(12, max(13, min(160, T // 3)))
    alpha = rng.choice(["0123456789", "abcdefghijklmnopqrstuvwxyz", "abcdefghij0123456789 "])
    s = "".join(rng.choice(alpha) for _ in range(n)).encode()
    gap = rng.randrange(0, max(1, T - 2 * n - 40))
    head = b"\n[" + s + b"]\n"
    mid = span(corpus_text, rng, gap) + b"\n[" + s[:1]
    pad = T + 1 - (1 + len(head) + len(mid) + len(s) - 1 + 1)
    if pad < 0:
        return None
    return span(corpus_text, rng, pad) + head + mid, s[1:]


def random_repeat(rng, corpus_text, words, T):
    """A random string, then the same string repeated until the sample is full; every copy after
    the first is supervised. The densest induction-head signal: on this machine a 4-layer model
    learnt to copy from it within ~1K steps, where the same copies embedded in essay text (rcopy,
    15% of samples) had formed no copying at all after 6.7K steps."""
    n = rng.randrange(8, max(9, min(100, T // 4)))
    alpha = rng.choice(["0123456789", "abcdefghijklmnopqrstuvwxyz", "abcdefghij0123456789 "])
    unit = b" [" + "".join(rng.choice(alpha) for _ in range(n)).encode() + b"]"
    lead = span(corpus_text, rng, rng.randrange(0, T // 4))
    rest = T - 1 - len(lead) - len(unit)  # BOS and EOS take the other two of the T + 1 tokens
    if rest < len(unit):
        return None
    reps = (unit * (rest // len(unit) + 1))[:rest]
    return [(lead + unit, False), (reps, True)]


def variable_tracking(rng, corpus_text, words, T):
    names = []
    while len(names) < 5:
        nm = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.choice([3, 4])))
        if nm not in names:
            names.append(nm)
    val = str(rng.randrange(10000, 100000))
    lines = [f" let {names[0]} = {val}; "] + [f" let {names[i]} = {names[i - 1]}; "
                                              for i in range(1, rng.choice([2, 3, 4, 5]))]
    chain = names[:len(lines)]
    # a distractor chain with another value
    dval = str(rng.randrange(10000, 100000))
    dn = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(4))
    distract = [f" let {dn} = {dval}; "]
    q = f"\nWhich names hold the value {val}? Names:"
    answer = (" " + " ".join(chain)).encode()
    needles = [l.encode() for l in lines]
    fixed = 1 + sum(map(len, needles)) + len(distract[0]) + len(q) + len(answer) + 1
    if T + 1 - fixed < 0:
        return None
    hay = span(corpus_text, rng, T + 1 - fixed)
    # chain in order: sorted depths
    depths = sorted(rng.random() for _ in needles)
    ctx = insert_needles(hay, needles, rng, depths)
    ctx = insert_needles(ctx, [distract[0].encode()], rng)
    return ctx + q.encode(), answer


FIELDS = ["name", "city", "code", "color", "owner", "tag"]


def json_copy(rng, corpus_text, words, T):
    """JSON records then a question quoting one field of one record."""
    recs = []
    budget = T - 120
    while True:
        r = {"id": rng.randrange(1, 10000)}
        for f in rng.sample(FIELDS, rng.choice([2, 3, 4])):
            r[f] = (str(rng.randrange(1000, 1000000)) if f == "code"
                    else rng.choice(words) if f != "tag" else rand_uuid(rng)[:8])
        line = "{" + ", ".join(f'"{k}": ' + (str(v) if k == "id" else f'"{v}"')
                               for k, v in r.items()) + "}"
        if sum(len(x) + 2 for x in recs) + len(line) > budget and recs:
            break
        recs.append(line)
        if len(recs) > 400:
            break
    target_i = rng.randrange(len(recs))
    import json as _json
    rec = _json.loads(recs[target_i])
    fields = [f for f in rec if f != "id"]
    f = rng.choice(fields)
    q = f'\nWhat is the "{f}" of the record with "id": {rec["id"]}?\nAnswer:'
    answer = (" " + str(rec[f])).encode()
    body = "[\n" + ",\n".join(recs) + "\n]"
    prompt = body.encode() + q.encode()
    pad = T + 1 - (1 + len(prompt) + len(answer) + 1)
    if pad < 0:
        return None
    # pad in front with essay text so lengths are exact
    return span(corpus_text, rng, pad) + prompt, answer


def repeat_passage(rng, corpus_text, words, T):
    n = rng.randrange(16, min(400, max(17, T // 4)))
    passage = span(corpus_text, rng, n)
    lead = rng.choice(["\nRepeat the passage above:\n", "\nNow copy it exactly:\n",
                       "\nSay it again:\n"])
    body = b"\nPassage: " + passage
    answer = passage
    pad = T + 1 - (1 + len(body) + len(lead) + len(answer) + 1)
    if pad < 0:
        return None
    return span(corpus_text, rng, pad) + body + lead.encode(), answer


TASKS_V2 = [  # from --mix-v2-from-step on: more answers per sample (niah_seq)
    ("niah", 0.25), ("niah_seq", 0.30), ("niah_mixed", 0.10), ("niah_mv", 0.04), ("niah_mq", 0.04),
    ("vt", 0.03), ("json", 0.09), ("repeat", 0.07), ("lm", 0.08),
]
TASKS_V4 = [  # from --mix-v4-from-step on: adds random-string copying (induction signal)
    ("niah", 0.22), ("niah_seq", 0.25), ("rcopy", 0.15), ("niah_mixed", 0.08), ("niah_mv", 0.03),
    ("niah_mq", 0.03), ("vt", 0.03), ("json", 0.08), ("repeat", 0.06), ("lm", 0.07),
]
TASKS_WARM = [("rrep", 0.35)] + [(n, w * 0.65) for n, w in TASKS_V4]  # --induction-warmup-steps
TASKS = [  # (name, weight)
    ("niah", 0.45), ("niah_mixed", 0.12), ("niah_mv", 0.05), ("niah_mq", 0.06), ("vt", 0.04),
    ("json", 0.10), ("repeat", 0.08), ("lm", 0.10),
]


def make_sample(seed, index, T, corpus, split="train", task=None, mix=None, canon_p=0.0,
                frame_p=0.0):
    """One training sample of exactly T+1 tokens: (tokens list, answer mask list, task name).
    canon_p: probability that a niah / niah_seq sample uses the canonical template; frame_p: that
    it uses a RULER-frame paraphrase instead (drawn first; the canonical choice is unchanged
    when frame_p = 0, so earlier runs' samples are reproduced exactly)."""
    mix = mix or TASKS
    rng = random.Random(f"{seed}/{split}/{index}")
    text = corpus.train if split == "train" else corpus.heldout
    words = corpus.train_words
    if task is None:
        r, acc = rng.random(), 0.0
        for name, w in mix:
            acc += w
            if r < acc:
                task = name
                break
        else:
            task = mix[-1][0]
    out = None
    frame = frame_p > 0 and task in ("niah", "niah_seq") and rng.random() < frame_p
    if task == "niah":
        out = niah(rng, text, words, T, canon=rng.random() < canon_p, frame=frame)
    elif task == "niah_mixed":
        out = niah(rng, text, words, T, key_kind=rng.choice(["word", "number", "uuid"]),
                   val_kind=rng.choice(["num7", "num5", "word", "uuid"]))
    elif task == "niah_mv":
        out = niah(rng, text, words, T, n_values=rng.choice([2, 3, 4]),
                   n_needles=rng.choice([1, 2]))
    elif task == "niah_mq":
        nq = rng.choice([2, 3, 4])
        out = niah(rng, text, words, T, n_queries=nq, n_needles=nq)
    elif task == "niah_seq":
        out = niah_seq(rng, text, words, T, canon=rng.random() < canon_p, frame=frame)
    elif task == "rrep":
        out = random_repeat(rng, text, words, T)
    elif task == "rcopy":
        out = random_copy(rng, text, words, T)
    elif task == "vt":
        out = variable_tracking(rng, text, words, T)
    elif task == "json":
        out = json_copy(rng, text, words, T)
    elif task == "repeat":
        out = repeat_passage(rng, text, words, T)
    if out is None:  # plain language modelling (or a task that does not fit in T)
        task = "lm"
        toks = [BOS] + list(span(text, rng, T))
        return toks, [0] * (T + 1), task
    if isinstance(out, list):  # segments
        toks, mask = [BOS], [0]
        for seg, is_ans in out:
            toks += list(seg)
            mask += [int(is_ans)] * len(seg)
        toks.append(EOS)
        mask.append(1)
        assert len(toks) == T + 1, (task, len(toks), T)
        return toks, mask, task
    prompt, answer = out
    toks = [BOS] + list(prompt) + list(answer) + [EOS]
    mask = [0] * (1 + len(prompt)) + [1] * (len(answer) + 1)
    assert len(toks) == T + 1, (task, len(toks), T)
    return toks, mask, task


# ---------------------------------------------------------------- evaluation (RULER niah_single_2 form)
# Held-out haystacks, RULER's template (singular rewrite) and needle, adjective-noun keys from the
# two small lists below, 7-digit values. None of these strings is used in training.

EVAL_ADJ = ["brave", "calm", "eager", "fancy", "gentle", "happy", "jolly", "kind", "lively",
            "nice", "proud", "silly", "witty", "zealous", "ancient", "bitter", "crooked", "damp",
            "fierce", "hollow", "icy", "little", "mighty", "noisy", "odd", "quiet", "rapid",
            "shallow", "tender", "vast"]
EVAL_NOUN = ["apple", "bridge", "candle", "dragon", "engine", "forest", "garden", "harbor",
             "island", "jacket", "kettle", "ladder", "meadow", "needle", "orchard", "pencil",
             "quarry", "river", "saddle", "tunnel", "umbrella", "valley", "wagon", "yacht",
             "zipper", "basket", "canyon", "desert", "falcon", "glacier"]

RULER_INTRO = ("A special magic number is hidden within the following text. Make sure to memorize "
               "it. I will quiz you about the number afterwards.\n")
RULER_NEEDLE = "One of the special magic numbers for {key} is: {value}."
RULER_QUESTION = ("\nWhat is the special magic number for {key} mentioned in the provided text? "
                  "The special magic number for {key} mentioned in the provided text is")


def eval_niah_sample(seed, index, T, depth, corpus, style="ruler"):
    """A held-out single-needle sample whose prompt is exactly T tokens (BOS included).

    Returns (prompt_bytes_without_BOS, value). style 'ruler' = RULER niah_single_2 strings;
    style 'train' = a training template (in-distribution check)."""
    rng = random.Random(f"{seed}/eval/{index}")
    key = f"{rng.choice(EVAL_ADJ)}-{rng.choice(EVAL_NOUN)}"
    value = str(rng.randrange(1000000, 10000000))
    if style == "ruler":
        intro, needle, q = RULER_INTRO, RULER_NEEDLE.format(key=key, value=value), \
            RULER_QUESTION.format(key=key)
    else:
        a, n = "secret", "number"
        intro = fill(INTROS[2], a=a, n=n)
        needle = fill(NEEDLES[0], k=key, v=value, a=a, n=n)
        q = "\n" + fill(QUESTIONS[0][0], k=key, a=a, n=n)
    needle_b = (" " + needle + " ").encode()
    fixed = 1 + len(intro) + len(needle_b) + len(q)
    hay = span(corpus.heldout, rng, T - fixed)
    ctx = insert_needles(hay, [needle_b], rng, [depth])
    prompt = intro.encode() + ctx + q.encode()
    assert len(prompt) + 1 == T, (len(prompt), T)
    return prompt, value
