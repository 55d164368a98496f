"""The attention benchmark: what it runs on (``device``), the implementations it times
(``runners``), and the sweep over sequence lengths (``sweep``)."""
