"""The lab's own model: a tiny attention-only transformer trained on repeated random tokens
(``data``, ``model``, ``settings``, ``training``)."""
