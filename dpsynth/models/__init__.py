"""Post-processing: models estimated from noisy measurements, and sampling rows from them (no privacy cost)."""
