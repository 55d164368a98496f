"""The maths the articles teach, in NumPy: attention and its steps, scaling, masks, many heads,
positions, cost, tiled attention, associative memory, sampling, and summaries of attention weights."""
