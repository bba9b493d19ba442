import numpy as np

import dpsynth
from dpsynth.config import parse_config


def test_release_tiny_table(tiny_raw_config, tiny_table):
    cfg = parse_config(tiny_raw_config)
    res = dpsynth.release(tiny_table, cfg, rng=np.random.default_rng(1))
    assert list(res.synthetic.columns) == list(tiny_table.columns)
    assert len(res.synthetic) == len(tiny_table)
    assert res.report["privacy"]["epsilon_spent"] == 1.0
