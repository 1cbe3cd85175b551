#!/usr/bin/env python3
"""Writes the handcrafted corrupt-file corpus of zerotrain's readers (tests/corpus/).

One directory per reader (config, token, safetensors, manifest, latest). Each holds
small files, one failure class per file (after llama.cpp's tests/test-gguf.cpp), plus
valid files, and expected.txt: per file, the substring its error message must contain,
or OK for a file that must parse. corrupt_corpus_test.cc checks every case; the fuzz
harnesses (fuzz/) use the directories as seed corpora.

Deterministic: every run writes the same bytes (and deletes files no longer made).
Python 3 standard library only. Manifest and latest checksums are XXH3-64, taken
through ctypes from libxxhash (libxxhash-dev, which zerotrain links anyway).
Token files: llmc_* are opened as llm.c, raw_* as raw uint16.

    python3 tests/corpus/make_corpus.py
"""
import copy
import ctypes
import ctypes.util
import json
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))


class Corpus:
    """The cases of one reader: file name -> (bytes, expected substring or OK)."""

    def __init__(self, reader):
        self.reader = reader
        self.cases = []

    def add(self, name, data, expect):
        assert all(n != name for n, _, _ in self.cases), name
        assert "\t" not in expect and "\n" not in expect and expect.strip() == expect, expect
        if isinstance(data, str):
            data = data.encode("utf-8")
        self.cases.append((name, data, expect))

    def write(self):
        d = os.path.join(HERE, self.reader)
        os.makedirs(d, exist_ok=True)
        for old in os.listdir(d):
            os.remove(os.path.join(d, old))
        lines = ["# " + self.reader + " corpus, written by tests/corpus/make_corpus.py: do not edit.",
                 "# <file>\\t<substring the error message must contain, or OK: the file must parse>"]
        for name, data, expect in self.cases:
            with open(os.path.join(d, name), "wb") as f:
                f.write(data)
            lines.append(name + "\t" + expect)
        with open(os.path.join(d, "expected.txt"), "w") as f:
            f.write("\n".join(lines) + "\n")
        print("%-12s %3d files" % (self.reader, len(self.cases)))


def edited(base, path, value):
    """A deep copy of base with base[path] = value; path "a.b.0.c"; value DELETE removes it."""
    out = copy.deepcopy(base)
    node = out
    keys = [int(k) if k.isdigit() else k for k in path.split(".")]
    for k in keys[:-1]:
        node = node[k]
    if value is DELETE:
        del node[keys[-1]]
    else:
        node[keys[-1]] = value
    return out


DELETE = object()

# ---------------------------------------------------------------------------------------
# config: parse_json_strict + parse_config + resolve_parallel(world 1) + resolve_batch +
# check_supported.

CONFIG = {
    "train_batch_size": 8,
    "train_micro_batch_size_per_gpu": 4,
    "gradient_accumulation_steps": 2,
    "optimizer": {"type": "AdamW", "params": {"lr": 0.0006, "betas": [0.9, 0.95], "eps": 1e-08, "weight_decay": 0.1}},
    "scheduler": {"type": "WarmupDecayLR",
                  "params": {"warmup_min_lr": 0, "warmup_max_lr": 0.0006, "warmup_num_steps": 10, "total_num_steps": 100}},
    "zero_optimization": {"stage": 1},
    "gradient_clipping": 1.0,
    "model": {"preset": "tiny", "n_positions": 256},
    "data": {"train": "data/train.bin", "seq_len": 64},
    "training": {"steps": 100},
}


def config_text(c):
    return json.dumps(c, indent=2) + "\n"


def make_config():
    k = Corpus("config")
    k.add("valid_tiny.json", config_text(CONFIG), "OK")
    k.add("valid_minimal.json", '{"train_micro_batch_size_per_gpu": 2}\n', "OK")
    # JSON syntax (io/json_strict.cc): nlohmann's messages, with line and column.
    k.add("empty.json", "", "line 1, column 1: syntax error while parsing value - unexpected end of input")
    k.add("truncated.json", '{"train_batch_size": 8, "zero_optimization": {"stage": 1',
          "parse error at line 1, column 57: syntax error while parsing object - unexpected end of input; expected '}'")
    k.add("trailing_comma.json", '{\n  "train_batch_size": 8,\n}\n',
          "line 3, column 1: syntax error while parsing object key - unexpected '}'; expected string literal")
    k.add("trailing_garbage.json", '{"train_batch_size": 8} {}',
          "syntax error while parsing value - unexpected '{'; expected end of input")
    k.add("nan_literal.json", '{"gradient_clipping": NaN}', "invalid literal; last read: '\"gradient_clipping\": N'")
    k.add("comment.json", '{\n  // DeepSpeed configs are JSON, not JSONC\n  "train_batch_size": 8\n}\n',
          "line 2, column 3: syntax error while parsing object key - invalid literal")
    k.add("control_char_in_string.json", '{"data": {"train": "a\nb"}}', "control character U+000A (LF) must be escaped")
    k.add("bad_utf8.json", b'{"data": {"train": "caf\xe9.bin"}}', "ill-formed UTF-8 byte")
    k.add("bad_escape.json", '{"data": {"train": "c:\\data"}}', "invalid string: forbidden character after backslash")
    k.add("number_overflow.json", '{"gradient_clipping": 1e400}', "number overflow parsing '1e400'")
    k.add("nested_too_deep.json", '{"config": ' + "[" * 600 + "]" * 600 + "}",
          "arrays and objects nested deeper than 512 levels")
    k.add("duplicate_key.json", '{"train_batch_size": 8, "train_batch_size": 16}', "/train_batch_size: duplicate key")
    k.add("duplicate_nested_key.json", '{"zero_optimization": {"stage": 1, "stage": 2}}',
          "/zero_optimization/stage: duplicate key")
    # Structure and types (config/json_reader.cc, *_sections.cc).
    k.add("top_level_array.json", "[1, 2]", "config: expected a JSON object at the top level")
    k.add("unknown_key.json", config_text(edited(CONFIG, "train_micro_batch_size", 4)),
          "/train_micro_batch_size: unknown key; allowed here:")
    k.add("unknown_nested_key.json", config_text(edited(CONFIG, "zero_optimization.stag", 2)),
          "/zero_optimization/stag: unknown key")
    k.add("stage_wrong_type.json", config_text(edited(CONFIG, "zero_optimization.stage", "2")),
          '/zero_optimization/stage: expected an integer 0..3, got "2"')
    k.add("stage_out_of_range.json", config_text(edited(CONFIG, "zero_optimization.stage", 4)),
          "/zero_optimization/stage: expected an integer 0..3, got 4")
    k.add("batch_negative.json", config_text(edited(CONFIG, "train_batch_size", -8)),
          "/train_batch_size: expected an integer >= 1, got -8")
    k.add("batch_fraction.json", config_text(edited(CONFIG, "train_micro_batch_size_per_gpu", 2.5)),
          "/train_micro_batch_size_per_gpu: expected an integer >= 1, got 2.5")
    k.add("batch_above_int64.json", config_text(edited(CONFIG, "gradient_accumulation_steps", 18446744073709551616)),
          "/gradient_accumulation_steps: expected an integer >= 1, got 1.8446744073709552e+19")
    k.add("bool_wrong_type.json", config_text(edited(CONFIG, "wall_clock_breakdown", "yes")),
          '/wall_clock_breakdown: expected true or false, got "yes"')
    k.add("section_wrong_type.json", config_text(edited(CONFIG, "model", 5)), "/model: expected an object, got 5")
    k.add("lr_negative.json", config_text(edited(CONFIG, "optimizer.params.lr", -0.1)),
          "/optimizer/params/lr: expected a number >= 0, got -0.1")
    k.add("betas_out_of_range.json", config_text(edited(CONFIG, "optimizer.params.betas", [0.9, 1.5])),
          "/optimizer/params/betas: expected two numbers in [0, 1), got [0.9,1.5]")
    k.add("optimizer_unknown.json", config_text(edited(CONFIG, "optimizer.type", "Adamm")),
          '/optimizer/type: expected one of "Adam", "AdamW"')
    k.add("optimizer_unsupported.json", config_text(edited(CONFIG, "optimizer", {"type": "Lion"})),
          '/optimizer/type: "Lion": not built')
    k.add("sgd_nesterov.json", config_text(edited(CONFIG, "optimizer", {"type": "SGD", "params": {"nesterov": True}})),
          "/optimizer/params/nesterov: true requires momentum > 0 and dampening 0")
    k.add("scheduler_total_zero.json",
          config_text(edited(CONFIG, "scheduler.params.total_num_steps", 0)),
          "/scheduler/params/total_num_steps: expected an integer >= 1, got 0")
    # found by fuzz_smoke: filling total_num_steps into such params threw out of the parser
    k.add("scheduler_params_not_object.json", config_text(edited(CONFIG, "scheduler.params", 1)),
          "/scheduler/params: expected an object, got 1")
    k.add("last_iteration_above_int64.json",
          config_text(edited(CONFIG, "scheduler.params.last_batch_iteration", 18446744073709551615)),
          "/scheduler/params/last_batch_iteration: expected an integer -1..-1, got 18446744073709551615")
    k.add("scheduler_last_iteration.json", config_text(edited(CONFIG, "scheduler.params.last_batch_iteration", 5)),
          "/scheduler/params/last_batch_iteration: expected an integer -1..-1, got 5")
    k.add("data_train_wrong_type.json", config_text(edited(CONFIG, "data.train", 5)),
          "/data/train: expected a string or an array of strings, got 5")
    k.add("data_format_unknown.json", config_text(edited(CONFIG, "data.format", "npy")),
          '/data/format: expected one of "auto", "llmc", "raw_uint16", got "npy"')
    k.add("n_embd_indivisible.json", config_text(edited(CONFIG, "model", {"n_embd": 100, "n_head": 3})),
          "/model/n_embd: 100 is not divisible by n_head=3")
    k.add("padded_vocab_small.json", config_text(edited(CONFIG, "model.padded_vocab_size", 100)),
          "/model/padded_vocab_size: 100 is smaller than vocab_size=50257")
    k.add("seq_len_over_positions.json", config_text(edited(CONFIG, "data.seq_len", 512)),
          "/data/seq_len: 512 exceeds /model/n_positions=256")
    k.add("bounded_without_staleness.json", config_text(edited(CONFIG, "parameter_server", {"mode": "bounded"})),
          '/parameter_server/staleness: required with mode "bounded"')
    k.add("pipeline_stages.json", config_text(edited(CONFIG, "pipeline", {"stages": "many"})),
          '/pipeline/stages: expected an integer (the number of pipeline stages) or "auto", got "many"')
    k.add("wandb_enabled.json", config_text(edited(CONFIG, "wandb", {"enabled": True})),
          "/wandb: needs a network service: Weights & Biases needs its network service")
    k.add("auto_unresolvable.json", config_text(edited(CONFIG, "zero_optimization.allgather_bucket_size", "auto")),
          '/zero_optimization/allgather_bucket_size: "auto" has no value to resolve to here')
    k.add("legacy_and_modern.json",
          config_text(edited(edited(CONFIG, "bf16", {"enabled": False}), "bfloat16", {"enabled": False})),
          "/bfloat16: given together with its modern name /bf16")
    # The batch triple (resolve_batch, one rank) and the parallel layout (resolve_parallel).
    k.add("batch_inconsistent.json", config_text(edited(CONFIG, "train_batch_size", 10)),
          "/train_batch_size: 10 is not train_micro_batch_size_per_gpu 4 x gradient_accumulation_steps 2 x "
          "data-parallel size 1 (= 8)")
    k.add("batch_indivisible.json",
          config_text(edited(edited(CONFIG, "gradient_accumulation_steps", DELETE), "train_batch_size", 10)),
          "/train_batch_size: 10 is not divisible by train_micro_batch_size_per_gpu 4 x data-parallel size 1")
    k.add("batch_missing.json", '{"gradient_accumulation_steps": 2}',
          "/train_batch_size: either train_batch_size or train_micro_batch_size_per_gpu must be given")
    k.add("batch_product_overflow.json",
          '{"train_batch_size": 8, "train_micro_batch_size_per_gpu": 4611686018427387904, '
          '"gradient_accumulation_steps": 4}',
          "x data-parallel size 1 (= more than 2^63)")
    k.add("batch_derived_overflow.json",
          '{"train_micro_batch_size_per_gpu": 4611686018427387904, "gradient_accumulation_steps": 4}',
          "overflows a 64-bit train_batch_size")
    k.add("parallel_too_many_ranks.json", config_text(edited(CONFIG, "parallel", {"pp": 2})),
          "/parallel: 1 ranks are not divisible by pp x tp = 2")
    k.add("parallel_product_overflow.json", config_text(edited(CONFIG, "parallel", {"pp": 1048576, "tp": 1048576})),
          "pp x tp = 1099511627776")
    k.add("parallel_dp_mismatch.json", config_text(edited(CONFIG, "parallel", {"dp": 2})),
          "/parallel/dp: dp 2 x pp 1 x tp 1 = 2 does not match the 1 ranks launched")
    # Features zerotrain refuses (check_supported).
    k.add("fp16_and_bf16.json",
          config_text(edited(edited(CONFIG, "fp16", {"enabled": True}), "bf16", {"enabled": True})),
          "/fp16/enabled and /bf16/enabled are both true")
    k.add("offload_optimizer.json", config_text(edited(CONFIG, "zero_optimization.offload_optimizer", {"device": "nvme"})),
          '/zero_optimization/offload_optimizer/nvme_path: device "nvme" needs a path')
    return k


# ---------------------------------------------------------------------------------------
# token files (data/token_file.h): llm.c header = 256 little-endian int32.

def llmc(ntok, tokens=None, magic=20240520, version=1, payload=None):
    header = [0] * 256
    header[0], header[1], header[2] = magic, version, ntok
    if payload is None:  # llm.c's Llama 3 variant (magic 20240801) stores uint32 tokens
        payload = struct.pack("<%d%s" % (len(tokens), "I" if magic == 20240801 else "H"), *tokens)
    return struct.pack("<256i", *header) + payload


def make_token():
    k = Corpus("token")
    toks = [15496, 11, 995, 0, 50256, 464, 2068, 7586, 21831, 18045]
    k.add("llmc_valid.bin", llmc(10, toks), "OK")
    k.add("raw_valid.bin", struct.pack("<10H", *toks), "OK")
    k.add("raw_looks_like_llmc.bin", llmc(2, [1, 2]), "OK")  # a raw file may hold any uint16
    k.add("llmc_empty.bin", b"", "empty file (0 bytes); an llm.c token file holds a 1024-byte header")
    k.add("raw_empty.bin", b"", "empty file (0 bytes); a raw uint16 token file holds at least one token")
    k.add("raw_odd_length.bin", b"\x01\x00\x02\x00\x03", "odd length 5 bytes")
    k.add("llmc_short_header.bin", llmc(10, toks)[:1000], "file is 1000 bytes, shorter than the 1024-byte llm.c header")
    k.add("llmc_bad_magic.bin", llmc(10, toks, magic=20240521), "bad magic 0x0134d889, expected 20240520")
    k.add("llmc_raw_opened_as_llmc.bin", struct.pack("<600H", *([464] * 600)), "bad magic 0x01d001d0")
    k.add("llmc_llama3.bin", llmc(10, [t + 70000 for t in toks], magic=20240801, version=7), "OK")
    k.add("llmc_llama3_bad_version.bin", llmc(10, toks, magic=20240801, version=1),
          "unsupported llm.c version 1 for magic 20240801; supported: version 7")
    k.add("llmc_llama3_uint16_payload.bin", llmc(10, toks, magic=20240801, version=7,
                                                  payload=struct.pack("<10H", *toks)),
          "truncated: header says 10 tokens, file holds 5 (20 bytes after the 1024-byte header, expected 40)")
    k.add("llmc_bad_version.bin", llmc(10, toks, version=2), "unsupported llm.c version 2")
    k.add("llmc_negative_ntok.bin", llmc(-10, toks), "negative token count -10 in the header")
    k.add("llmc_zero_ntok.bin", llmc(0, toks), "header says 0 tokens")
    k.add("llmc_truncated.bin", llmc(10, toks[:8]),
          "truncated: header says 10 tokens, file holds 8 (16 bytes after the 1024-byte header, expected 20)")
    k.add("llmc_truncated_odd.bin", llmc(10, payload=struct.pack("<8H", *toks[:8]) + b"\x07"),
          "truncated: header says 10 tokens, file holds 8 (17 bytes")
    k.add("llmc_huge_ntok.bin", llmc(2147483647, toks), "truncated: header says 2147483647 tokens")
    k.add("llmc_header_only.bin", llmc(1, []), "truncated: header says 1 tokens, file holds 0")
    k.add("llmc_trailing_bytes.bin", llmc(10, toks + [1, 2]),
          "trailing bytes: header says 10 tokens (20 bytes after the 1024-byte header), file has 4 bytes more")
    k.add("llmc_trailing_odd_byte.bin", llmc(10, payload=struct.pack("<10H", *toks) + b"\x00"),
          "(20 bytes after the 1024-byte header), file has 1 bytes more")
    return k


# ---------------------------------------------------------------------------------------
# safetensors (checkpoint/safetensors.h): 8-byte little-endian header length, JSON, data.

def st(header, data=b"", length=None, pad=True):
    h = header if isinstance(header, bytes) else json.dumps(header, separators=(",", ":")).encode()
    if pad:
        h += b" " * ((8 - len(h) % 8) % 8)
    return struct.pack("<Q", len(h) if length is None else length) + h + data


def t(dtype, shape, begin, end):
    return {"dtype": dtype, "shape": shape, "data_offsets": [begin, end]}


def make_safetensors():
    k = Corpus("safetensors")
    a16 = struct.pack("<4f", 1.0, 2.0, 3.0, 4.0)
    b12 = struct.pack("<3i", 7, 8, 9)
    two = {"__metadata__": {"format": "pt"}, "a": t("F32", [2, 2], 0, 16), "b": t("I32", [3], 16, 28)}
    k.add("valid_two_tensors.safetensors", st(two, a16 + b12), "OK")
    k.add("valid_no_tensors.safetensors", st({}), "OK")
    k.add("valid_unpadded.safetensors", st({"a": t("F32", [2, 2], 0, 16)}, a16, pad=False), "OK")
    # An empty tensor at the offset where another one starts, the empty one named last.
    k.add("valid_empty_tensor.safetensors", st({"a": t("F32", [4], 0, 16), "z": t("F32", [0], 0, 0)}, a16), "OK")
    k.add("short_file.safetensors", b"\x08\x00\x00", "file is 3 bytes, shorter than the 8-byte header length")
    k.add("header_over_limit.safetensors", st(two, a16 + b12, length=200_000_000),
          "header length 200000000 exceeds the 100 MB limit")
    k.add("header_past_eof.safetensors", st(two, a16 + b12, length=4096),
          "header length 4096 runs past the end of the")
    k.add("header_length_zero.safetensors", st(b"", a16, length=0),
          "header: invalid JSON: parse error at line 1, column 1: syntax error while parsing value - unexpected end of input")
    k.add("header_invalid_json.safetensors", st(b'{"a": {"dtype": "F32",', a16),
          "header: invalid JSON: parse error at line 1, column 25: syntax error while parsing object key - "
          "unexpected end of input")
    k.add("header_bad_utf8.safetensors", st(b'{"\xff": {}}', a16), "ill-formed UTF-8 byte")
    k.add("header_nested_too_deep.safetensors", st(("[" * 1000 + "]" * 1000).encode()),
          "header: invalid JSON: arrays and objects nested deeper than 512 levels")
    k.add("header_duplicate_key.safetensors",
          st(b'{"a": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}, "a": {}}', a16),
          "header: /a: duplicate key")
    k.add("header_not_object.safetensors", st([1, 2]), "header is not a JSON object")
    k.add("metadata_not_object.safetensors", st({"__metadata__": 5}), "__metadata__ is not an object")
    k.add("metadata_value_not_string.safetensors", st({"__metadata__": {"step": 5}}), "__metadata__/step is not a string")
    k.add("tensor_missing_offsets.safetensors", st({"a": {"dtype": "F32", "shape": [4]}}, a16),
          "tensor a: expected an object with dtype, shape and data_offsets")
    k.add("unknown_dtype.safetensors", st({"a": t("F8_E4M3", [16], 0, 16)}, a16), 'tensor a: unsupported dtype "F8_E4M3"')
    k.add("dtype_not_string.safetensors", st({"a": t(4, [4], 0, 16)}, a16), "tensor a: unsupported dtype 4")
    k.add("shape_not_array.safetensors", st({"a": t("F32", 4, 0, 16)}, a16), "tensor a: shape is not an array")
    k.add("shape_negative.safetensors", st({"a": t("F32", [-4], 0, 16)}, a16),
          "tensor a: shape [-4] has a non-integer or negative dimension")
    k.add("shape_overflow.safetensors", st({"a": t("F32", [4294967296, 4294967296], 0, 16)}, a16),
          "tensor a: shape overflows")
    k.add("offsets_not_pair.safetensors", st({"a": {"dtype": "F32", "shape": [4], "data_offsets": [0]}}, a16),
          "tensor a: data_offsets must be two non-negative integers")
    k.add("offsets_reversed.safetensors", st({"a": t("F32", [4], 16, 0)}, a16),
          "tensor a: data_offsets [16, 0) end before they begin")
    k.add("shape_bytes_mismatch.safetensors", st({"a": t("F32", [2, 2], 0, 12)}, a16[:12]),
          "tensor a: data_offsets [0, 12) hold 12 bytes, but F32 [2, 2] needs 16")
    k.add("offsets_past_eof.safetensors", st({"a": t("F32", [2, 2], 0, 16)}, a16[:8]),
          "tensor a: data ends at byte 16 of a 8-byte data buffer (truncated file?)")
    k.add("hole.safetensors", st({"a": t("F32", [2], 0, 8), "b": t("F32", [2], 12, 20)}, a16 + b12[:4]),
          "tensor b starts at byte 12 but the previous tensor ends at 8 (hole)")
    k.add("overlap.safetensors", st({"a": t("F32", [2], 0, 8), "b": t("F32", [2], 4, 12)}, a16[:12]),
          "tensor b starts at byte 4 but the previous tensor ends at 8 (overlap)")
    k.add("data_not_at_start.safetensors", st({"a": t("F32", [2], 8, 16)}, a16),
          "tensor a starts at byte 8 but the previous tensor ends at 0 (hole)")
    k.add("trailing_bytes.safetensors", st({"a": t("F32", [2], 0, 8)}, a16),
          "tensors cover 8 bytes but the data buffer has 16 (trailing bytes)")
    return k


# ---------------------------------------------------------------------------------------
# checkpoint manifest (checkpoint/manifest.h) and the latest pointer (latest_file.h).

def _xxh3_function():
    for name in (ctypes.util.find_library("xxhash"), "libxxhash.so.0", "libxxhash.so"):
        if not name:
            continue
        try:
            fn = ctypes.CDLL(name).XXH3_64bits
        except OSError:
            continue
        fn.restype = ctypes.c_uint64
        fn.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
        return fn
    raise SystemExit("make_corpus.py: libxxhash not found (apt-get install libxxhash-dev)")


XXH3 = _xxh3_function()


def xxh3_hex(data):
    return "%016x" % XXH3(data, len(data))


def piece(tensor, kind, file, begin, end, tp_rank=0, tp_size=1):
    return {"tensor": tensor, "kind": kind, "file": file, "tp_rank": tp_rank, "tp_size": tp_size,
            "begin": begin, "end": end, "checksum": "%016x" % (0x1000 + begin * 31 + end)}


def tensor(name, shape, tp_dim=-1, rows=-1, layer=-1, decay=False):
    return {"name": name, "shape": shape, "logical_rows": rows, "tp_dim": tp_dim, "tp_groups": 1,
            "layer": layer, "weight_decay": decay}


MANIFEST = {
    "format": "zerotrain-checkpoint",
    "format_version": 1,
    "zerotrain_version": "0.1.0",
    "tag": "global_step20",
    "model": {"n_layer": 1, "n_head": 2, "n_embd": 4, "vocab_size": 8, "n_positions": 16},
    "layout": {"world": 2, "dp": 2, "pp": 1, "tp": 1, "zero_stage": 1},
    "engine": {
        "global_step": 20,
        "global_samples": 160,
        "optimizer": {"type": "adamw", "step_count": 20},
        "lr_scheduler": {"type": "WarmupDecayLR", "last_batch_iteration": 19, "next_lr": 0.0006},
        "loss_scaler": {"type": "none", "why": "fp32 training has no loss scale"},
        "data_sampler": {"seed": 1234, "train_batch_size": 8, "next_batch": 20},
        "rng": {"seed": 1234, "why": "training draws no random numbers after initialisation (no dropout)"},
        "isa": "avx2",
        "threads_per_rank": 1,
    },
    "config": {"train_batch_size": 8, "model": {"n_layer": 1, "n_head": 2, "n_embd": 4}},
    "state_kinds": ["param", "exp_avg"],
    "tensors": [tensor("wte", [8, 4], tp_dim=0, rows=8, decay=True), tensor("ln_f.w", [4])],
    "files": [{"name": "rank0.safetensors", "rank": 0, "bytes": 1024, "checksum": "0123456789abcdef"},
              {"name": "rank1.safetensors", "rank": 1, "bytes": 1024, "checksum": "fedcba9876543210"}],
    "pieces": [piece("wte", "param", "rank0.safetensors", 0, 16), piece("wte", "param", "rank1.safetensors", 16, 32),
               piece("wte", "exp_avg", "rank0.safetensors", 0, 16), piece("wte", "exp_avg", "rank1.safetensors", 16, 32),
               piece("ln_f.w", "param", "rank0.safetensors", 0, 4), piece("ln_f.w", "exp_avg", "rank1.safetensors", 0, 4)],
}


def manifest_text(m, checksum=None):
    """The file as manifest_to_text writes it: the checksum is XXH3 of nlohmann's compact
    dump (sorted keys) of everything else; None computes it, a string overrides it."""
    body = {k: v for k, v in m.items() if k != "checksum"}
    compact = json.dumps(body, separators=(",", ":"), sort_keys=True, ensure_ascii=False).encode("utf-8")
    out = dict(body)
    out["checksum"] = xxh3_hex(compact) if checksum is None else checksum
    return json.dumps(out, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def make_manifest():
    k = Corpus("manifest")
    add = lambda name, m, expect: k.add(name, manifest_text(m), expect)
    add("valid_dp2.json", MANIFEST, "OK")
    tp2 = edited(MANIFEST, "layout", {"world": 2, "dp": 1, "pp": 1, "tp": 2, "zero_stage": 0})
    tp2["pieces"] = [piece("wte", kind, "rank%d.safetensors" % r, 0, 16, tp_rank=r, tp_size=2)
                     for kind in ("param", "exp_avg") for r in (0, 1)]
    tp2["pieces"] += [piece("ln_f.w", kind, "rank0.safetensors", 0, 4) for kind in ("param", "exp_avg")]
    add("valid_tp2.json", tp2, "OK")
    # Bytes and checksum.
    k.add("invalid_json.json", manifest_text(MANIFEST)[:200], "invalid JSON: parse error at line")
    k.add("duplicate_key.json", '{"tag": "a", "tag": "b"}', "/tag: duplicate key")
    k.add("not_object.json", "[]", "not a JSON object")
    k.add("checksum_missing.json", json.dumps(MANIFEST), "/checksum is missing")
    k.add("checksum_mismatch.json", manifest_text(MANIFEST).replace('"global_step": 20', '"global_step": 21', 1),
          "checksum mismatch: expected")
    # Header values.
    add("format_wrong.json", edited(MANIFEST, "format", "deepspeed"), '/format: expected "zerotrain-checkpoint"')
    add("format_version_2.json", edited(MANIFEST, "format_version", 2),
        "/format_version: 2 is not supported; this zerotrain reads version 1")
    add("unknown_key.json", edited(MANIFEST, "comment", "x"), "/comment: unknown key")
    add("model_missing_key.json", edited(MANIFEST, "model.n_head", DELETE), "/model/n_head: is missing")
    add("layout_inconsistent.json", edited(MANIFEST, "layout.world", 3), "/layout/world: is 3 but dp x pp x tp = 2")
    add("layout_zero_stage.json", edited(MANIFEST, "layout.zero_stage", 4),
        "/layout/zero_stage: expected an integer 0..3, got 4")
    add("engine_negative_step.json", edited(MANIFEST, "engine.global_step", -1),
        "/engine/global_step: expected an integer 0..4611686018427387904, got -1")
    add("engine_samples_inconsistent.json", edited(MANIFEST, "engine.global_samples", 161),
        "/engine/global_samples: 161 is not global_step 20 x data_sampler/train_batch_size 8")
    add("engine_samples_overflow.json",
        edited(edited(edited(MANIFEST, "engine.global_step", 2**62), "engine.data_sampler.train_batch_size", 2**62),
               "engine.global_samples", 0),
        "/engine/global_samples: 0 is not global_step 4611686018427387904 x data_sampler/train_batch_size 4611686018427387904")
    add("engine_iteration_above_int64.json", edited(MANIFEST, "engine.lr_scheduler.last_batch_iteration", 2**64 - 1),
        "/engine/lr_scheduler/last_batch_iteration: expected an integer -1..4611686018427387904, got 18446744073709551615")
    add("engine_optimizer_unknown.json", edited(MANIFEST, "engine.optimizer.type", "adagrad"),
        '/engine/optimizer/type: expected one of "adamw", "sgd", "lamb", "onebitadam", "zerooneadam", "onebitlamb", "", '
        'got "adagrad"')
    add("config_not_object.json", edited(MANIFEST, "config", [1]), "/config: expected an object")
    add("state_kinds_unknown.json", edited(MANIFEST, "state_kinds", ["param", "momentum"]),
        '/state_kinds: expected distinct kinds among param, exp_avg, exp_avg_sq, momentum_buffer, sync_params, exp_avg_sq_fresh, got ["param","momentum"]')
    add("state_kinds_order.json", edited(MANIFEST, "state_kinds", ["exp_avg", "param"]),
        '/state_kinds: must start with "param"')
    # The tensor table.
    add("tensor_shape_rank5.json", edited(MANIFEST, "tensors.1.shape", [1, 1, 1, 1, 4]),
        "/tensors/1/shape: expected 1 to 4 dimensions, got [1,1,1,1,4]")
    add("tensor_shape_dim_too_big.json", edited(MANIFEST, "tensors.1.shape", [1099511627777]),
        "/tensors/1/shape: expected non-negative dimensions below 2^40, got [1099511627777]")
    add("tensor_shape_product_wraps.json", edited(MANIFEST, "tensors.1.shape", [4294967296] * 4),
        "/tensors/1/shape: has more than 2^40 elements: [4294967296,4294967296,4294967296,4294967296]")
    add("tensor_logical_rows.json", edited(MANIFEST, "tensors.0.logical_rows", 9),
        "/tensors/0/logical_rows: expected an integer -1..8, got 9")
    add("tensor_tp_groups.json", edited(MANIFEST, "tensors.0.tp_groups", 3),
        "/tensors/0/tp_groups: 3 does not divide dimension 0")
    add("tensor_duplicate.json", edited(MANIFEST, "tensors.1.name", "wte"), "/tensors/1/name: duplicate tensor wte")
    # The file list.
    add("file_name_slash.json", edited(MANIFEST, "files.1.name", "sub/rank1.safetensors"),
        '/files/1/name: "sub/rank1.safetensors" is not a plain file name inside the checkpoint directory')
    add("file_name_dotdot.json", edited(MANIFEST, "files.1.name", ".."), '/files/1/name: ".." is not a plain file name')
    add("file_checksum_bad.json", edited(MANIFEST, "files.0.checksum", "0123456789ABCDEF"),
        "/files/0/checksum: expected 16 hex digits, got 0123456789ABCDEF")
    add("file_rank_out_of_range.json", edited(MANIFEST, "files.1.rank", 2), "/files/1/rank: expected an integer 0..1, got 2")
    add("file_duplicate.json", edited(MANIFEST, "files.1.name", "rank0.safetensors"),
        "/files/1/name: duplicate file rank0.safetensors")
    # Pieces.
    add("piece_unknown_tensor.json", edited(MANIFEST, "pieces.0.tensor", "wpe"),
        "/pieces/0/tensor: names no tensor of the table: wpe")
    add("piece_kind_not_listed.json", edited(MANIFEST, "pieces.0.kind", "exp_avg_sq"),
        '/pieces/0/kind: "exp_avg_sq" is not in state_kinds')
    add("piece_unknown_file.json", edited(MANIFEST, "pieces.0.file", "rank2.safetensors"),
        "/pieces/0/file: names no file of the file list: rank2.safetensors")
    add("piece_file_dotdot.json", edited(MANIFEST, "pieces.0.file", "../rank0.safetensors"),
        "/pieces/0/file: names no file of the file list: ../rank0.safetensors")
    add("piece_checksum_bad.json", edited(MANIFEST, "pieces.0.checksum", "xyz"),
        "/pieces/0/checksum: expected 16 hex digits, got xyz")
    add("piece_empty_range.json", edited(MANIFEST, "pieces.1.begin", 32),
        "/pieces/1/end: [32, 32) is not a non-empty range of the 32-element slice of wte")
    add("piece_past_slice.json", edited(MANIFEST, "pieces.1.end", 40),
        "/pieces/1/end: [16, 40) is not a non-empty range of the 32-element slice of wte")
    add("piece_tp_size_uncut.json", edited(edited(MANIFEST, "pieces.4.tp_size", 2), "pieces.4.end", 2),
        "/pieces/4/tp_size: must be 1 for a tensor no tp layout cuts")
    add("piece_tp_rank_range.json", edited(MANIFEST, "pieces.0.tp_rank", 1), "/pieces/0/tp_rank: expected an integer 0..0, got 1")
    add("piece_tp_size_indivisible.json", edited(tp2, "pieces.0.tp_size", 3),
        "/pieces/0/tp_size: 3 does not divide dimension 0 of wte into equal slices")
    add("coverage_hole.json", edited(MANIFEST, "pieces.1.begin", 20), "param of tensor wte: slice 0 has a hole at element 16")
    add("coverage_overlap.json", edited(MANIFEST, "pieces.3.begin", 12),
        "exp_avg of tensor wte: slice 0 has an overlap at element 16")
    add("coverage_short.json", edited(MANIFEST, "pieces.1.end", 30),
        "param of tensor wte: the pieces do not cover every element (slice 0 ends at 30 of 32)")
    add("coverage_missing_tp_rank.json", edited(tp2, "pieces.1", DELETE),
        "param of tensor wte: slice 1 (of tp size 2) has no pieces")
    add("coverage_kind_missing.json", edited(MANIFEST, "pieces.5", DELETE), "exp_avg of tensor ln_f.w has no pieces")
    add("coverage_tp_size_disagrees.json",
        edited(edited(edited(tp2, "pieces.1.tp_size", 1), "pieces.1.tp_rank", 0), "pieces.1.end", 32),
        "param of tensor wte: pieces disagree on the tp size")
    return k


def latest_text(tag, manifest_checksum="0123456789abcdef"):
    body = tag + "\nmanifest " + manifest_checksum + "\n"
    return body + "xxh3 " + xxh3_hex(body.encode()) + "\n"


def make_latest():
    k = Corpus("latest")
    good = latest_text("global_step20")
    k.add("valid.txt", good, "OK")
    k.add("too_short.txt", "global_step20\n", "is 14 bytes, too short for its checksum line")
    k.add("too_long.txt", latest_text("global_step20" + "\n" * 4096), "bytes; a latest file is a few lines")
    k.add("checksum_line_damaged.txt", good[:-17] + "zz" + good[-15:], 'damaged checksum line (expected "xxh3 <16 hex digits>")')
    k.add("checksum_mismatch.txt", good.replace("global_step20", "global_step21"),
          "checksum mismatch: expected")
    k.add("tag_dotdot.txt", latest_text(".."), 'first line ".." is not a checkpoint tag')
    k.add("tag_slash.txt", latest_text("ckpt/global_step20"), 'first line "ckpt/global_step20" is not a checkpoint tag')
    k.add("tag_empty.txt", latest_text(""), 'first line "" is not a checkpoint tag')
    k.add("manifest_line_bad.txt", latest_text("global_step20", "0123456789ABCDEF"),
          'second line must be "manifest <16 hex digits>"')
    return k


def main():
    for make in (make_config, make_token, make_safetensors, make_manifest, make_latest):
        make().write()


if __name__ == "__main__":
    main()
