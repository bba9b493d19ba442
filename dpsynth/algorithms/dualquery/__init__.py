"""DualQuery (Gaboardi et al. 2014): the algorithm (``core``), its privacy accounting (``accounting``)
and the one place the CBC integer-program solver is chosen and configured (``solver``)."""
