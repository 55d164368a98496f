"""The two kinds of model: an encoder reads a text whole; a decoder predicts the next token."""

ENCODER, DECODER = "encoder", "decoder"


def check_kind(name: str, kind: str, expect: str) -> None:
    """Refuse a model of the wrong kind with a message that says what to choose instead."""
    if kind == expect:
        return
    if expect == DECODER:
        raise ValueError(
            f"{name} is an encoder: it has no language-model head, so it cannot predict the next "
            "token. Choose a decoder such as SmolLM2 (attention-lab models add smollm2)."
        )
    raise ValueError(
        f"{name} is a decoder (a causal language model); this needs an encoder such as the bundled MiniLM."
    )
