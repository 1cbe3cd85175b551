#!/usr/bin/env python3
"""Independent reference for zerotrain's tokenizers (stdlib only; no `regex`, no `tokenizers`).

  train  --text F --merges N --out tokenizer.json   learn N byte-level BPE merges on F (pre-tokenized
         with the Llama 3 split below) and write a Llama-3-style tokenizer.json: vocab (256 byte tokens,
         then one per merge), merges (alternately "a b" strings and [a, b] arrays), added_tokens
         <|begin_of_text|> and <|end_of_text|>, pre_tokenizer Sequence[Split(Llama 3 regex), ByteLevel].
  encode --tokenizer tokenizer.json --inputs inputs.json   print the ids of each string in inputs.json
         (a JSON list), one JSON list of lists on stdout.
  gpt2   --dir DIR --out tokenizer.json   convert GPT-2's encoder.json + vocab.bpe into a tokenizer.json
         (ByteLevel pre-tokenizer with use_regex, [a, b] array merges, <|endoftext|> as added token).
  spm    --model M --inputs inputs.json   [ids, decode(ids)] per string from Debian's python3-sentencepiece
         (exit 3 if it is missing).

The Llama 3 pre-tokenizer regex
  (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+
is written out by hand with unicodedata (Python's `re` has no \\p{..}); the BPE merge loop is the plain
O(n^2) form of HF's Word::merge_all: merge the lowest (rank, position) pair, one pair at a time.
"""
import argparse
import json
import sys
import unicodedata

LLAMA3_PATTERN = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|"
                  r" ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")
BEGIN, END = "<|begin_of_text|>", "<|end_of_text|>"

# PCRE2 \s under UCP: \h, \v and \p{Z}.
_SPACE = set("\t\n\v\f\r \x85\xa0\u1680\u180e\u2028\u2029\u202f\u205f\u3000") | {chr(c) for c in range(0x2000, 0x200B)}


def is_space(c):
    return c in _SPACE or unicodedata.category(c) in ("Zs", "Zl", "Zp")


def is_letter(c):
    return unicodedata.category(c).startswith("L")


def is_number(c):
    return unicodedata.category(c).startswith("N")


def is_other(c):
    return not (is_space(c) or is_letter(c) or is_number(c))


def llama3_match(t, i):
    """Length of the regex match at t[i:], trying the alternatives in order."""
    n = len(t)
    c = t[i]
    if c == "'":
        for suf in ("s", "t", "re", "ve", "m", "ll", "d"):
            if t[i + 1:i + 1 + len(suf)].lower() == suf:
                return 1 + len(suf)
    j = i
    if c not in "\r\n" and not is_letter(c) and not is_number(c) and i + 1 < n and is_letter(t[i + 1]):
        j = i + 1
    if is_letter(t[j]):
        while j < n and is_letter(t[j]):
            j += 1
        return j - i
    if is_number(c):
        j = i
        while j < n and j - i < 3 and is_number(t[j]):
            j += 1
        return j - i
    j = i + 1 if (c == " " and i + 1 < n and is_other(t[i + 1])) else i
    if j < n and is_other(t[j]):
        while j < n and is_other(t[j]):
            j += 1
        while j < n and t[j] in "\r\n":
            j += 1
        return j - i
    # whitespace alternatives
    j = i
    while j < n and is_space(t[j]):
        j += 1
    last_nl = max((k for k in range(i, j) if t[k] in "\r\n"), default=-1)
    if last_nl >= 0:
        return last_nl + 1 - i
    if j == n:
        return j - i
    if j - 1 > i:
        return j - 1 - i
    return j - i


def llama3_split(t):
    out, i = [], 0
    while i < len(t):
        k = llama3_match(t, i)
        assert k > 0
        out.append(t[i:i + k])
        i += k
    return out


def bytes_to_unicode():
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {b: chr(c) for b, c in zip(bs, cs)}


B2U = bytes_to_unicode()


def spell(s):
    return "".join(B2U[b] for b in s.encode("utf-8"))


def train(args):
    text = open(args.text, encoding="utf-8").read()
    words = {}
    for w in llama3_split(text):
        key = tuple(spell(w))
        words[key] = words.get(key, 0) + 1
    vocab = {B2U[b]: b for b in range(256)}
    merges = []
    for _ in range(args.merges):
        counts = {}
        for w, f in words.items():
            for p in zip(w, w[1:]):
                counts[p] = counts.get(p, 0) + f
        if not counts:
            break
        best = min(counts, key=lambda p: (-counts[p], p))
        merges.append(best)
        vocab[best[0] + best[1]] = len(vocab)
        new_words = {}
        for w, f in words.items():
            out, k = [], 0
            while k < len(w):
                if k + 1 < len(w) and (w[k], w[k + 1]) == best:
                    out.append(w[k] + w[k + 1])
                    k += 2
                else:
                    out.append(w[k])
                    k += 1
            new_words[tuple(out)] = new_words.get(tuple(out), 0) + f
        words = new_words
    n = len(vocab)
    doc = {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [
            {"id": n, "content": BEGIN, "single_word": False, "lstrip": False, "rstrip": False,
             "normalized": False, "special": True},
            {"id": n + 1, "content": END, "single_word": False, "lstrip": False, "rstrip": False,
             "normalized": False, "special": True},
        ],
        "normalizer": None,
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": LLAMA3_PATTERN}, "behavior": "Isolated", "invert": False},
            {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False},
        ]},
        "post_processor": None,
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False,
                  "ignore_merges": True, "vocab": vocab,
                  "merges": [(a + " " + b) if k % 2 == 0 else [a, b] for k, (a, b) in enumerate(merges)]},
    }
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(doc, f, ensure_ascii=False)


def bpe(word, ranks, vocab):
    syms = list(word)
    while len(syms) > 1:
        best = None
        for k in range(len(syms) - 1):
            r = ranks.get((syms[k], syms[k + 1]))
            if r is not None and (best is None or r < best[0]):
                best = (r, k)
        if best is None:
            break
        k = best[1]
        syms[k:k + 2] = [syms[k] + syms[k + 1]]
    return [vocab[s] for s in syms]


def encode(args):
    doc = json.load(open(args.tokenizer, encoding="utf-8"))
    model = doc["model"]
    vocab = model["vocab"]
    ranks = {}
    for r, m in enumerate(model["merges"]):
        a, b = m.split(" ") if isinstance(m, str) else m
        ranks.setdefault((a, b), r)
    added = sorted(doc["added_tokens"], key=lambda a: -len(a["content"]))
    ignore_merges = model.get("ignore_merges", False)
    results = []
    for text in json.load(open(args.inputs, encoding="utf-8")):
        ids, start, i = [], 0, 0
        segments = []
        while i < len(text):
            hit = next((a for a in added if text.startswith(a["content"], i)), None)
            if hit is None:
                i += 1
                continue
            segments.append(text[start:i])
            segments.append(hit)
            i += len(hit["content"])
            start = i
        segments.append(text[start:])
        for seg in segments:
            if isinstance(seg, dict):
                ids.append(seg["id"])
                continue
            for w in llama3_split(seg):
                sw = spell(w)
                if ignore_merges and sw in vocab:
                    ids.append(vocab[sw])
                else:
                    ids.extend(bpe(sw, ranks, vocab))
        results.append(ids)
    json.dump(results, sys.stdout)


def gpt2(args):
    encoder = json.load(open(args.dir + "/encoder.json", encoding="utf-8"))
    lines = open(args.dir + "/vocab.bpe", encoding="utf-8").read().split("\n")[1:]
    merges = [l.split() for l in lines if l.strip()]
    doc = {
        "version": "1.0",
        "added_tokens": [{"id": 50256, "content": "<|endoftext|>", "single_word": False, "lstrip": False,
                          "rstrip": False, "normalized": True, "special": True}],
        "normalizer": None,
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True},
        "post_processor": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": False, "use_regex": True},
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": "",
                  "end_of_word_suffix": "", "fuse_unk": False, "vocab": encoder, "merges": merges},
    }
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(doc, f, ensure_ascii=False)


def spm(args):
    try:
        import sentencepiece
    except ImportError:
        print("python3-sentencepiece is not installed", file=sys.stderr)
        sys.exit(3)
    sp = sentencepiece.SentencePieceProcessor(model_file=args.model)
    out = []
    for s in json.load(open(args.inputs, encoding="utf-8")):
        ids = sp.encode(s)
        out.append([ids, sp.decode(ids)])
    json.dump(out, sys.stdout)


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("train")
    t.add_argument("--text", required=True)
    t.add_argument("--merges", type=int, default=200)
    t.add_argument("--out", required=True)
    e = sub.add_parser("encode")
    e.add_argument("--tokenizer", required=True)
    e.add_argument("--inputs", required=True)
    g = sub.add_parser("gpt2")
    g.add_argument("--dir", required=True)
    g.add_argument("--out", required=True)
    s = sub.add_parser("spm")
    s.add_argument("--model", required=True)
    s.add_argument("--inputs", required=True)
    args = p.parse_args()
    {"train": train, "encode": encode, "gpt2": gpt2, "spm": spm}[args.cmd](args)


if __name__ == "__main__":
    main()
