"""The five steps of the Position panel, one page each: word order, sinusoidal encoding,
a learned table, RoPE clock hands, and RoPE past the trained length."""
