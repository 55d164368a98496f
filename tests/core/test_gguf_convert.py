"""The one GGUF converter (core.models.gguf_convert) on a tiny random Gemma 3 written as GGUF here
with the ``gguf`` package: its model is transformers' own GGUF load weight for weight, Gemma's
norms come back as transformers keeps them (llama.cpp stores 1 + weight), and it runs as the
model transformers loads. The Llama path is tested in test_smollm2.py."""

import pytest

from core.models import gguf_convert

WIDTH, FFN, VOCAB, LAYERS, HEADS, HEAD_DIM = 256, 256, 96, 3, 4, 32  # Q4_K packs rows of 256
LAYER_TYPES = ("F32", "Q8_0", "Q4_K")  # layer 0 exact; Q4_K as in the real file


def _names(model):
    """{GGUF name: transformers name} for ``model``, from gguf's own table."""
    from gguf import MODEL_ARCH_NAMES, get_tensor_name_map

    return gguf_convert._gguf_names(
        gguf_convert.Path("tiny.gguf"), model, MODEL_ARCH_NAMES, get_tensor_name_map
    )


def random_q4_k(shape, rng):
    """Q4_K blocks of random bytes (the gguf package reads this type but cannot write it), each
    block's two float16 scales set to small finite values."""
    import numpy as np

    rows, columns = shape
    blocks = rng.integers(0, 256, size=(rows, columns // 256, 144), dtype=np.uint8)
    blocks[..., 0:2] = np.frombuffer(np.float16(0.01).tobytes(), dtype=np.uint8)  # d
    blocks[..., 2:4] = np.frombuffer(np.float16(0.005).tobytes(), dtype=np.uint8)  # dmin
    return blocks.reshape(rows, -1)


def write_tiny_gemma3(path, vocab=VOCAB):
    """Write a tiny Gemma 3 GGUF at ``path``; return {transformers name: the values written} (a Q4_K
    tensor's are random blocks instead)."""
    import numpy as np
    from gguf import GGMLQuantizationType, GGUFWriter, quants
    from transformers import AutoModelForCausalLM, Gemma3TextConfig

    config = Gemma3TextConfig(
        vocab_size=vocab, hidden_size=WIDTH, intermediate_size=FFN, num_hidden_layers=LAYERS,
        num_attention_heads=HEADS, num_key_value_heads=1, head_dim=HEAD_DIM, sliding_window=8,
    )  # fmt: skip
    shapes = {
        name: tuple(t.shape) for name, t in AutoModelForCausalLM.from_config(config).state_dict().items()
    }
    writer = GGUFWriter(str(path), "gemma3")
    writer.add_block_count(LAYERS)
    writer.add_context_length(64)
    writer.add_embedding_length(WIDTH)
    writer.add_feed_forward_length(FFN)
    writer.add_head_count(HEADS)
    writer.add_head_count_kv(1)
    writer.add_key_length(HEAD_DIM)
    writer.add_value_length(HEAD_DIM)
    writer.add_rope_freq_base(1_000_000.0)
    writer.add_layer_norm_rms_eps(1e-6)
    writer.add_sliding_window(8)
    writer.add_vocab_size(vocab)
    rng, written = np.random.default_rng(0), {}
    for gguf_name, hf_name in _names(AutoModelForCausalLM.from_config(config)).items():
        if hf_name == "lm_head.weight":
            continue  # tied to the embedding, as in the real file
        layer = int(gguf_name.split(".")[1]) if gguf_name.startswith("blk.") else 0
        kind = LAYER_TYPES[layer] if len(shapes[hf_name]) == 2 and gguf_name != "token_embd.weight" else "F32"
        values = (rng.standard_normal(shapes[hf_name]) * 0.3).astype(np.float32)
        if kind == "Q4_K" and shapes[hf_name][1] % 256:  # the output projection's rows are 128 long
            kind = "Q8_0"
        written[hf_name] = values
        quantised = GGMLQuantizationType[kind]
        packed = random_q4_k(values.shape, rng) if kind == "Q4_K" else quants.quantize(values, quantised)
        writer.add_tensor(gguf_name, packed, raw_dtype=quantised)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return written


@pytest.fixture(scope="module")
def tiny_gemma3(tmp_path_factory):
    pytest.importorskip("gguf")
    pytest.importorskip("transformers")
    path = tmp_path_factory.mktemp("gguf") / "tiny-gemma3.gguf"
    return path, write_tiny_gemma3(path)


def test_a_gemma3_file_converts_to_transformers_own_load(tiny_gemma3, monkeypatch):
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    path, written = tiny_gemma3
    monkeypatch.setattr(transformers.AutoTokenizer, "from_pretrained", lambda *args, **kwargs: None)
    said = []
    model, _ = gguf_convert.convert(path, lambda text=None: said.append(text))
    reference = transformers.AutoModelForCausalLM.from_pretrained(
        path.parent, gguf_file=path.name, dtype=torch.float32
    )
    assert model.config.model_type == reference.config.model_type == "gemma3_text"
    ours, theirs = model.state_dict(), reference.state_dict()
    assert sorted(ours) == sorted(theirs)
    for name, tensor in ours.items():
        assert torch.equal(tensor, theirs[name]), name
    for name, values in written.items():  # llama.cpp keeps Gemma's norms as 1 + weight
        if name.endswith("norm.weight"):
            assert torch.equal(ours[name], torch.from_numpy(values) - 1), name
    assert model.lm_head.weight is model.model.embed_tokens.weight
    ids = torch.tensor([[1, 5, 9, 12, 40, 41, 42, 7, 3, 2, 60, 61]])  # longer than the window of 8
    with torch.no_grad():
        assert torch.allclose(model(input_ids=ids).logits, reference(input_ids=ids).logits, atol=1e-5)
    assert any(text and text.startswith("tensor 1 of") for text in said)


def test_one_parse_of_the_file_serves_every_reading_within_read_once(tiny_gemma3, monkeypatch):
    """Parsing a GGUF's header is what a reading costs (13 s for Gemma 3's vocabulary): within
    ``read_once`` the conversion and transformers' own load share one reader, and after it the
    reader class is the package's own again."""
    import gguf

    transformers = pytest.importorskip("transformers")
    path, _ = tiny_gemma3
    monkeypatch.setattr(transformers.AutoTokenizer, "from_pretrained", lambda *args, **kwargs: None)
    parsed = []

    class Counted(gguf.GGUFReader):
        def __init__(self, *args, **kwargs):
            parsed.append(args[0])
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(gguf, "GGUFReader", Counted)

    def both() -> int:
        parsed.clear()
        gguf_convert.convert(path, lambda text=None: None)
        transformers.AutoModelForCausalLM.from_pretrained(path.parent, gguf_file=path.name)
        return len(parsed)

    assert both() >= 3  # settings, weights, and transformers' load each parse the file
    with gguf_convert.read_once(path):
        assert both() == 1
    assert gguf.GGUFReader is Counted
