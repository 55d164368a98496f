"""Every analysis of a real decoder, each over the model layer in ``core.decoder``: predictions
and generation, knockout and ranking, the logit lens, sinks, the induction test, activation and
attribution patching, and the inside of one head (``head``)."""
