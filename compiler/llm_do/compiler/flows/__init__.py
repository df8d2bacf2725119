"""Information flow at build time: the labels of capabilities (`labels`) and the lethal trifecta
over call paths (`trifecta`)."""
