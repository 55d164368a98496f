"""Edge attribution patching (core.interp.circuits, core.decoder.edges) on a tiny random model of
every supported family, against transformers' own model driven by hooks written here: gradients
by autograd on each block's input, each part's output read at the family's own modules, and
single edges patched by hand."""

from functools import reduce

import numpy as np
import pytest

from core import models
from core.decoder.adapter import adapter_of
from core.decoder.edges import Graph, edge_run
from core.interp.circuits import (
    Edge,
    answer_metric,
    check_memory,
    circuit_nodes,
    curve_counts,
    edge_scores,
    exact_effects,
    faithfulness,
    prune,
)
from core.interp.patching import prepare
from tests.tiny_models import FAMILY_TYPES, OUT_PROJECTIONS, PARTS, save_tiny_decoder

pytestmark = pytest.mark.models
torch = pytest.importorskip("torch")
CLEAN, CORRUPT = "the cat sat on the mat because the cat", "the dog sat on the mat because the dog"

# Written by hand: each family's query projection (from the attention), the norm before it (from
# the block), and where head h's query sits among the projection's outputs (head_dim d).
QUERIES = {
    "llama": ("q_proj", "input_layernorm", lambda h, d: slice(h * d, (h + 1) * d)),
    "qwen3": ("q_proj", "input_layernorm", lambda h, d: slice(h * d, (h + 1) * d)),
    "gemma2": ("q_proj", "input_layernorm", lambda h, d: slice(h * d, (h + 1) * d)),
    "gemma3_text": ("q_proj", "input_layernorm", lambda h, d: slice(h * d, (h + 1) * d)),
    "phi3": ("qkv_proj", "input_layernorm", lambda h, d: slice(h * d, (h + 1) * d)),
    "gpt2": ("c_attn", "ln_1", lambda h, d: slice(h * d, (h + 1) * d)),
    "gpt_neox": ("query_key_value", "input_layernorm", lambda h, d: slice(3 * h * d, (3 * h + 1) * d)),
}
SANDWICHED = ("gemma2", "gemma3_text")  # a norm after attention and after the MLP


@pytest.fixture(scope="module", params=FAMILY_TYPES)
def tiny(request, tmp_path_factory):
    folder = save_tiny_decoder(tmp_path_factory.mktemp(request.param), request.param)
    model = models.load_model(folder)
    return model, request.param, prepare(model, CLEAN, CORRUPT, " it", " was")


def part(model, path):
    return reduce(getattr, path.split("."), model.module)


def blocks(model, model_type):
    return part(model, PARTS[model_type][0])


def by_hand(model, model_type, pair, ids, change_final=None, grads=False):
    """A run of transformers' model over ``ids`` with hooks: (metric, block inputs, final norm's
    input, head writes (layers, heads, T, hidden), MLP writes (layers, T, hidden), the gradients
    of the metric with respect to the block inputs and the final norm's input)."""
    seen = {"blocks": [], "z": [], "attn": [], "mlp": []}
    handles = []

    def enter_block(index):
        def hook(_, args, kwargs):
            x = args[0] if args else kwargs["hidden_states"]
            if index == 0 and grads:
                x = x.detach().requires_grad_(True)
            seen["blocks"].append(x)
            return ((x, *args[1:]), kwargs) if args else (args, {**kwargs, "hidden_states": x})

        return hook

    def enter_final(_, args):
        seen["final"] = args[0] if change_final is None else args[0] + change_final
        return (seen["final"],)

    for i, block in enumerate(blocks(model, model_type)):
        handles.append(block.register_forward_pre_hook(enter_block(i), with_kwargs=True))
        out = OUT_PROJECTIONS[model_type](model.module, i)
        handles.append(out.register_forward_pre_hook(lambda _, args: seen["z"].append(args[0])))
        handles.append(out.register_forward_hook(lambda _, __, output: seen["attn"].append(output)))
        mlp = getattr(block, PARTS[model_type][2])
        handles.append(mlp.register_forward_hook(lambda _, __, output: seen["mlp"].append(output)))
    handles.append(part(model, PARTS[model_type][3]).register_forward_pre_hook(enter_final))
    try:
        with torch.enable_grad() if grads else torch.no_grad():
            logits = model.module(input_ids=torch.tensor([ids]), use_cache=False).logits
            m = logits[0, -1, pair.target.id] - logits[0, -1, pair.foil.id]
            taken = torch.autograd.grad(m, [*seen["blocks"], seen["final"]]) if grads else None
    finally:
        for handle in handles:
            handle.remove()
    heads, mlps = [], []
    for i, block in enumerate(blocks(model, model_type)):
        heads.append(head_writes(model, model_type, i, seen["z"][i][0], seen["attn"][i][0], block))
        out = seen["mlp"][i][0]
        mlps.append(block.post_feedforward_layernorm(out) if model_type in SANDWICHED else out)
    return (
        float(m.detach()),
        [b.detach() for b in seen["blocks"]],
        torch.stack(heads).detach(),
        torch.stack(mlps).detach(),
        taken,
    )


def head_writes(model, model_type, layer, z, total, block):
    """(heads, T, hidden): each head's z through its slice of the output projection (and, in Gemma
    2 and 3, the norm after attention with its scale from the whole output)."""
    projection = OUT_PROJECTIONS[model_type](model.module, layer)
    weight = projection.weight if model_type == "gpt2" else projection.weight.T  # (heads · d, hidden)
    heads = model.module.config.num_attention_heads
    d = z.shape[-1] // heads
    out = torch.stack([z[:, h * d : (h + 1) * d] @ weight[h * d : (h + 1) * d] for h in range(heads)])
    if model_type in SANDWICHED:
        norm = block.post_attention_layernorm
        out = out * (1 + norm.weight) * (total.pow(2).mean(-1, keepdim=True) + norm.eps).rsqrt()
    return out


def test_a_split_run_is_the_model_and_its_receivers_gradients_add_up(tiny):
    model, model_type, pair = tiny
    m, _, _, _, (*block_grads, final_grad) = by_hand(model, model_type, pair, pair.corrupt, grads=True)
    run = edge_run(model, pair.corrupt, normed_metric=answer_metric(model, pair), grads=True)
    assert run.metric == pytest.approx(m, abs=1e-4)
    graph = Graph.of(adapter_of(model.module))
    np.testing.assert_allclose(run.grads[graph.logits], final_grad[0], atol=1e-5)
    after = final_grad[0]
    for layer in reversed(range(graph.layers)):  # a block's input feeds its receivers and the next block
        summed = run.grads[graph.attention_inputs(layer)].sum(0) + run.grads[graph.mlp_input(layer)] + after
        np.testing.assert_allclose(summed, block_grads[layer][0], rtol=1e-4, atol=1e-5)
        after = block_grads[layer][0]


def test_senders_are_the_parts_the_model_writes(tiny):
    model, model_type, pair = tiny
    _, inputs, heads, mlps, _ = by_hand(model, model_type, pair, pair.clean)
    run = edge_run(model, pair.clean, normed_metric=answer_metric(model, pair))
    graph = Graph.of(adapter_of(model.module))
    np.testing.assert_allclose(run.outputs[0], inputs[0][0], atol=1e-6)
    for layer in range(graph.layers):
        first = graph.head(layer, 0)
        np.testing.assert_allclose(run.outputs[first : first + graph.heads], heads[layer], atol=1e-5)
        np.testing.assert_allclose(run.outputs[graph.mlp(layer)], mlps[layer], atol=1e-5)


@pytest.mark.parametrize("direction", ["denoise", "noise"])
def test_edges_into_the_logits_are_the_formula_on_the_final_norms_gradient(tiny, direction):
    model, model_type, pair = tiny
    clean, corrupt = (by_hand(model, model_type, pair, ids, grads=True) for ids in (pair.clean, pair.corrupt))
    source, base = (clean, corrupt) if direction == "denoise" else (corrupt, clean)
    gradient = base[4][-1][0].double()  # at the final norm's input, in the run patched into
    distance = clean[0] - corrupt[0]
    found = edge_scores(model, pair, "eap", direction)
    graph = found.graph
    expect = {0: source[1][0][0] - base[1][0][0]}
    for layer in range(graph.layers):
        expect[graph.mlp(layer)] = source[3][layer] - base[3][layer]
        for h in range(graph.heads):
            expect[graph.head(layer, h)] = source[2][layer, h] - base[2][layer, h]
    for sender, change in expect.items():
        by_formula = float((change.double() * gradient).sum()) / distance
        assert found.values[sender, graph.logits] == pytest.approx(by_formula, rel=1e-3, abs=1e-5)


def test_eap_ig_noising_walks_the_same_points_the_other_way(tiny):
    model, _, pair = tiny
    ig = edge_scores(model, pair, "eap-ig", "denoise", steps=2)
    ig_noise = edge_scores(model, pair, "eap-ig", "noise", steps=2)
    scale = np.abs(ig.values).max()  # each score sums products of that size: float32 rounds at it
    np.testing.assert_allclose(ig.values, -ig_noise.values, rtol=0, atol=1e-5 * scale)  # the other sign
    assert ig.steps == 2 and edge_scores(model, pair, "eap").steps == 1


def test_an_edges_exact_effect_is_a_patch_written_by_hand(tiny):
    model, model_type, pair = tiny
    found = edge_scores(model, pair, "eap")
    graph = found.graph
    clean, corrupt = (by_hand(model, model_type, pair, ids) for ids in (pair.clean, pair.corrupt))
    distance = clean[0] - corrupt[0]
    # A head's write straight into the logits: the final norm's input moved by the head's change.
    head = graph.head(graph.layers - 1, 1)
    change = clean[2][-1, 1] - corrupt[2][-1, 1]
    into_logits = (
        by_hand(model, model_type, pair, pair.corrupt, change_final=change)[0] - corrupt[0]
    ) / distance
    # The embeddings into the last layer's query of head 1, through its projection.
    query = graph.attention_inputs(graph.layers - 1).start + 1
    into_query = (
        query_patched(model, model_type, pair, graph, clean[1][0] - corrupt[1][0]) - corrupt[0]
    ) / distance
    got = exact_effects(model, found, [Edge(head, graph.logits, 0.0), Edge(0, query, 0.0)])
    assert got == pytest.approx([into_logits, into_query], abs=1e-5)


def query_patched(model, model_type, pair, graph, change):
    """The corrupted run's metric, head 1 of the last layer reading its query from its input + ``change``."""
    projection_name, norm_name, columns = QUERIES[model_type]
    block = blocks(model, model_type)[graph.layers - 1]
    attention = getattr(block, PARTS[model_type][1])
    projection, norm = getattr(attention, projection_name), getattr(block, norm_name)
    d = model.module.config.hidden_size // graph.heads
    d = getattr(model.module.config, "head_dim", None) or d
    seen, busy = {}, []

    def keep(_, args, kwargs):
        seen["x"] = args[0] if args else kwargs["hidden_states"]

    def patch(_, __, output):
        if busy:
            return None
        busy.append(1)
        moved = projection(norm(seen["x"] + change))
        busy.clear()
        out = output.clone()
        out[..., columns(1, d)] = moved[..., columns(1, d)]
        return out

    handles = [
        block.register_forward_pre_hook(keep, with_kwargs=True),
        projection.register_forward_hook(patch),
    ]
    try:
        with torch.no_grad():
            logits = model.module(input_ids=torch.tensor([pair.corrupt]), use_cache=False).logits
    finally:
        for handle in handles:
            handle.remove()
    return float(logits[0, -1, pair.target.id] - logits[0, -1, pair.foil.id])


def test_faithfulness_is_the_corrupted_run_with_no_edges_and_the_clean_with_all(tiny):
    model, _, pair = tiny
    found = edge_scores(model, pair, "eap")
    ends = faithfulness(model, found, [0, found.count])
    assert ends[0] == (0, pytest.approx(0.0, abs=1e-5))
    assert ends[1] == (found.count, pytest.approx(1.0, abs=1e-5))


def test_scores_sort_and_count_every_edge():
    graph = Graph(2, 4, 2)
    assert (graph.senders, graph.receivers) == (11, 19)
    # Layer 1's 8 query, key and value inputs read the embeddings; its MLP those and its 4 heads;
    # layer 2's 8 read 6 senders, its MLP 10; the logits all 11.
    assert graph.exists.sum() == 8 * 1 + 5 + 8 * 6 + 10 + 11
    assert graph.exists[graph.head(0, 0), graph.mlp_input(0)]
    assert not Graph(2, 4, 2, parallel=True).exists[graph.head(0, 0), graph.mlp_input(0)]
    assert not graph.exists[graph.head(1, 0), graph.attention_inputs(1)].any()
    assert graph.receiver_names[graph.attention_inputs(1)][4:6] == (("L2 KV1", "k"), ("L2 KV2", "k"))
    assert Graph(1, 2, 2).receiver_names[2] == ("L1 H1", "k")
    assert curve_counts(1000)[:2] == [0, 1] and curve_counts(1000)[-1] == 1000


def test_pruning_keeps_only_edges_on_a_path_from_the_embeddings_to_the_logits():
    graph = Graph(2, 2, 1)  # two query heads share one key/value head
    kept = np.zeros((graph.senders, graph.receivers), bool)
    q, k = graph.attention_inputs(1).start, graph.attention_inputs(1).start + 2
    kept[0, q] = True  # into L2 H1's query, which reaches nothing
    kept[graph.head(0, 0), graph.logits] = True  # from L1 H1, which nothing reaches
    assert not prune(graph, kept).any()
    kept[graph.head(1, 0), graph.logits] = True
    assert prune(graph, kept).sum() == 2  # the embeddings → L2 H1 → logits path
    kept[:] = False
    kept[0, k] = True  # the shared key feeds L2 H1 and L2 H2
    kept[graph.head(1, 1), graph.logits] = True
    assert prune(graph, kept).sum() == 2
    # L2 H1 shares the key but sends nothing on: not a node of the circuit
    assert circuit_nodes(graph, prune(graph, kept)) == ["embeddings", "L2 H2", "logits"]
    assert circuit_nodes(graph, prune(graph, np.zeros_like(kept))) == []


def test_a_real_gqa_circuit_names_only_heads_that_send_on(tiny):
    """On each tiny family (Llama's heads share key/value heads two by two), every head the nodes
    name sends a kept edge; a head that only shares its key/value head with a receiver is not one."""
    model, _, pair = tiny
    found = edge_scores(model, pair)
    graph = found.graph
    for n in (1, 3, 10):
        mask = found.circuit(n)
        names = circuit_nodes(graph, mask)
        senders = {graph.sender_names[s] for s in np.flatnonzero(mask.any(1))}
        assert set(names) - {"logits"} == senders and ("logits" in names) == bool(mask.any())


def test_bad_requests_say_what_to_change(tiny):
    model, _, pair = tiny
    with pytest.raises(ValueError, match="eap or eap-ig"):
        edge_scores(model, pair, "acdc")
    with pytest.raises(ValueError, match="1 to 64 steps"):
        edge_scores(model, pair, "eap-ig", steps=0)
    with pytest.raises(ValueError, match="denoise or noise"):
        edge_scores(model, pair, "eap", "sideways")
    found = edge_scores(model, pair, "eap")
    with pytest.raises(ValueError, match=f"0 to {found.count} edges"):
        faithfulness(model, found, [found.count + 1])
    with pytest.raises(ValueError, match=r"needs about .* GB for its gradients and 0\.0 GB is free"):
        check_memory(model, pair.length, 1000)
    check_memory(model, pair.length, None)  # free memory not known: no check
