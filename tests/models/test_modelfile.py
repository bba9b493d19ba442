"""Released models: the Model interface of every kind, the file format, exact conditioning.

Statistical tests use fixed seeds and chi-square critical values at 1e-6 (false-failure rate 1e-6 each).
"""

from __future__ import annotations

import io
import json
import re
import zipfile

import numpy as np
import pytest
from scipy import stats

import dpsynth
from dpsynth.config import parse_config
from dpsynth.modelfile import ModelFileError, ReleasedModel, load_model, model_from_bytes, sha256
from dpsynth.models.base import ZeroProbability, code_dtype, model_from_arrays, model_to_arrays
from dpsynth.models.factored import FactoredModel, Measurement, alias_table
from dpsynth.models.graphical import GraphicalModel
from dpsynth.models.mixture import MixtureModel, RecordsModel

CRIT = 1e-6


def _factored(seed: int = 0) -> FactoredModel:
    rng = np.random.default_rng(seed)
    model = FactoredModel((3, 5, 4, 2), 100.0)
    model.mw_update(Measurement((0, 1), rng.uniform(0, 20, (3, 5))))
    model.mw_update(Measurement((3,), np.array([70.0, 30.0])))
    return model


def _kinds():
    rec = np.array([[0, 1, 2, 0], [2, 4, 3, 1], [1, 0, 0, 1]])
    rng = np.random.default_rng(4)
    cliques = [(0, 1), (1, 2), (3,)]
    sizes = (3, 5, 4, 2)
    graphical = GraphicalModel(sizes, cliques, [rng.normal(0, 1, [sizes[a] for a in c]) for c in cliques],
                               total=100.0)
    return {
        "factored": _factored(),
        "graphical": graphical,
        "mixture": MixtureModel([_factored(1), _factored(2)], [0.25, 0.75]),
        "records": RecordsModel(rec, (3, 5, 4, 2), np.array([1.0, 2.0, 5.0])),
    }


def _joint(model, shape=(3, 5, 4, 2)) -> np.ndarray:
    """The model's full joint distribution, by conditioning on each cell (a check of probability())."""
    out = np.zeros(shape)
    for cell in np.ndindex(*shape):  # small test domain only
        w = [np.eye(s)[c] for s, c in zip(shape, cell)]
        out[cell] = model.probability(w)
    return out


# ------------------------------------------------------------------------------ alias table
@pytest.mark.parametrize("p", [
    np.array([1.0]), np.array([0.5, 0.5]), np.array([0.0, 1.0, 0.0]),
    np.random.default_rng(0).dirichlet(np.full(1000, 0.2)),
    1.0 / np.arange(1, 5001) ** 1.5,
])
def test_alias_table_is_exact(p):
    """Σ over the bins pointing at a cell reproduces its probability (to float rounding)."""
    p = p / p.sum()
    prob, alias = alias_table(p)
    implied = prob.copy()
    np.add.at(implied, alias, 1.0 - prob)
    assert np.allclose(implied / p.size, p, rtol=0, atol=1e-12)
    assert np.all((prob >= 0) & (prob <= 1))


def test_code_dtype_is_narrowest():
    assert code_dtype([2, 256]) == np.uint8 and code_dtype([257]) == np.uint16 and code_dtype([70_000]) == np.uint32


# ------------------------------------------------------------------------ interface, kinds
@pytest.mark.parametrize("kind", ["factored", "graphical", "mixture", "records"])
def test_arrays_round_trip_gives_the_same_draws(kind):
    model = _kinds()[kind]
    header, arrays = model_to_arrays(model)
    back = model_from_arrays(json.loads(json.dumps(header)), arrays)
    assert back.kind == kind
    a = model.sample(2000, rng=np.random.default_rng(5))
    b = back.sample(2000, rng=np.random.default_rng(5))
    assert np.array_equal(a, b) and a.dtype == np.uint8


@pytest.mark.parametrize("kind", ["factored", "graphical", "mixture", "records"])
def test_sampling_matches_the_joint(kind):
    """Chi-square goodness of fit of 40,000 draws against the model's joint (cells with mass > 0)."""
    model = _kinds()[kind]
    joint = _joint(model).reshape(-1)
    assert joint.sum() == pytest.approx(1.0)
    rows = 40_000
    codes = model.sample(rows, rng=np.random.default_rng(11))
    seen = np.bincount(np.ravel_multi_index(codes.T.astype(np.int64), (3, 5, 4, 2)), minlength=joint.size)
    live = joint > 0
    assert seen[~live].sum() == 0
    chi2 = float(((seen[live] - rows * joint[live]) ** 2 / (rows * joint[live])).sum())
    assert chi2 < stats.chi2.isf(CRIT, df=int(live.sum()) - 1)


@pytest.mark.parametrize("kind", ["factored", "graphical", "mixture", "records"])
def test_condition_is_bayes_rule(kind):
    """condition(w) has joint ∝ p(x)·Πw exactly; probability(w) is its normaliser."""
    model = _kinds()[kind]
    w = [np.array([1.0, 0.0, 1.0]), None, np.array([0.5, 1.0, 0.0, 0.25]), None]
    joint = _joint(model)
    weighted = joint * w[0][:, None, None, None] * w[2][None, None, :, None]
    assert model.probability(w) == pytest.approx(weighted.sum(), rel=1e-12)
    cond = model.condition(w)
    assert np.allclose(_joint(cond), weighted / weighted.sum(), atol=1e-12)


@pytest.mark.parametrize("kind", ["factored", "graphical", "mixture", "records"])
def test_condition_on_probability_zero_raises(kind):
    model = _kinds()[kind]
    w = [None, None, None, np.zeros(2)]
    with pytest.raises(ZeroProbability):
        model.condition(w)


# ----------------------------------------------------------------------------- the file
@pytest.fixture(scope="module")
def released(tmp_path_factory):
    raw = {
        "schema": {"columns": {
            "color": {"type": "categorical", "categories": ["red", "green", "blue"], "missing": "category"},
            "size": {"type": "numeric", "lower": 0, "upper": 10, "bins": 5},
            "age": {"type": "numeric", "edges": [0, 18, 40, 65, 100], "integer": True},
            "count": {"type": "integer", "lower": 1, "upper": 4},
        }},
        "privacy": {"epsilon": 2.0},
        "algorithm": {"name": "mwem", "params": {"iterations": 4, "variant": "paper"}},
        "workload": {"marginals": {"k": 2}},
    }
    cfg = parse_config(raw)
    rng = np.random.default_rng(0)
    n = 2000
    import pandas as pd

    color = rng.choice(["red", "green", "blue"], n)
    table = pd.DataFrame({
        "color": np.where(rng.random(n) < 0.1, None, color),
        "size": np.where(color == "red", rng.uniform(0, 4, n), rng.uniform(4, 10, n)),
        "age": rng.integers(0, 100, n),
        "count": rng.integers(1, 5, n),
    })
    return dpsynth.release(table, cfg, rng=np.random.default_rng(1))


def test_file_round_trip_is_byte_stable_and_reproduces_rows(released, tmp_path):
    data = released.model.to_bytes()
    assert data == released.model.to_bytes()  # no timestamps: the same model gives the same bytes
    path = tmp_path / "m.dpm"
    path.write_bytes(data)
    back = load_model(path)
    assert back.to_bytes() == data and back.sha256 == released.model.sha256 == released.report["model"]["sha256"]
    assert back.privacy == released.report["privacy"] and back.ledger == released.report["ledger"]
    assert [m.attrs for m in back.measurements] == [m.attrs for m in released.model.measurements]
    live = released.model.sample(5000, rng=np.random.default_rng(3))
    assert live.equals(back.sample(5000, rng=np.random.default_rng(3)))
    assert live.equals(dpsynth.load_model(path).sample(5000, rng=np.random.default_rng(3)))


def test_reloaded_rows_have_the_live_distribution(released):
    """Two-sample chi-square (homogeneity) over the (color, age-bin) cells: rows of the live model
    (seed 10) vs rows of the reloaded model (seed 20); false-failure rate 1e-6."""
    back = model_from_bytes(released.model.to_bytes())
    rows = 20_000
    domain = released.model.config.domain
    a = released.model.model.sample(rows, rng=np.random.default_rng(10))
    b = back.model.sample(rows, rng=np.random.default_rng(20))
    key = lambda c: np.ravel_multi_index((c[:, 0].astype(int), c[:, 2].astype(int)), domain.shape((0, 2)))
    table = np.stack([np.bincount(key(a), minlength=domain.cells((0, 2))),
                      np.bincount(key(b), minlength=domain.cells((0, 2)))])
    table = table[:, table.sum(0) > 0]
    chi2, _, dof, _ = stats.chi2_contingency(table)
    assert chi2 < stats.chi2.isf(CRIT, dof)


def test_synthetic_equals_the_chunks(released):
    """The CLI writes chunks(); library users read .synthetic: the same rows, on every call."""
    import pandas as pd

    for _ in range(2):
        rows = pd.concat([c.to_pandas() for c in released.chunks()], ignore_index=True)
        assert rows.equals(released.synthetic) and len(rows) == released.rows == released.report["output"]["rows"]


# ------------------------------------------------------------------------------ bad files
def _rezip(data: bytes, edit) -> bytes:
    """Rewrite the archive with ``edit(entries)`` applied (entries: name → bytes)."""
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        entries = {i.filename: zf.read(i) for i in zf.infolist()}
    edit(entries)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, blob in entries.items():
            zf.writestr(name, blob)
    return buf.getvalue()


def _manifest(entries) -> dict:
    return json.loads(entries["manifest.json"])


def _set_manifest(zipped, **changes) -> None:
    zipped["manifest.json"] = json.dumps({**_manifest(zipped), **changes}).encode()


def _bad_cases(data: bytes) -> dict[str, tuple[bytes, str]]:
    def newer(e):
        _set_manifest(e, schema_version=3)

    def tampered(e):
        e["config.json"] = e["config.json"].replace(b'"epsilon": 2.0', b'"epsilon": 20.0')

    def foreign(e):
        e.clear()
        e["hello.txt"] = b"hi"

    def pickled(e):  # an object array with consistent hashes: must be refused, never unpickled
        buf = io.BytesIO()
        np.save(buf, np.array([{"x": 1}], dtype=object), allow_pickle=True)
        e["arrays/model/factor_0.npy"] = buf.getvalue()
        digests = {k: sha256(v) for k, v in e.items() if k != "manifest.json"}
        from dpsynth.modelfile import _content_hash

        _set_manifest(e, entries=digests, model_sha256=_content_hash(digests))

    return {
        "truncated": (data[: len(data) // 2], "the model file is corrupt or truncated (unreadable zip archive)"),
        "not a zip": (b"age,sex\n1,F\n", "not a dpsynth model file (not a zip archive)"),
        "foreign zip": (_rezip(data, foreign), "not a dpsynth model file (no manifest.json)"),
        "newer": (_rezip(data, newer), ("the model was written by a newer dpsynth (model schema_version 3; "
                  f"this dpsynth {dpsynth.__version__} reads up to 2): upgrade dpsynth")),
        "tampered": (_rezip(data, tampered), "the model file is corrupt (checksum mismatch in config.json)"),
        "pickled": (_rezip(data, pickled), ("the model file is corrupt (Object arrays cannot be loaded when "
                    "allow_pickle=False)")),
    }


@pytest.mark.parametrize("case", ["truncated", "not a zip", "foreign zip", "newer", "tampered", "pickled"])
def test_bad_model_files_are_refused_in_one_line(released, tmp_path, case):
    blob, message = _bad_cases(released.model.to_bytes())[case]
    path = tmp_path / "bad.dpm"
    path.write_bytes(blob)
    with pytest.raises(ModelFileError, match="^" + re.escape(f"{path}: {message}") + "$") as info:
        load_model(path)
    assert info.value.exit_code == 65


@pytest.mark.parametrize("offset", [100, 150, 200, 250])
def test_corrupt_bytes_inside_an_entry_are_detected(released, offset):
    """A flipped byte inside a deflated entry fails the CRC-32 or the decompression itself (zlib.error):
    both are a one-line 'corrupt' error."""
    data = bytearray(released.model.to_bytes())
    at = data.index(b"arrays/model/factor_0.npy") + offset  # inside the compressed entry
    data[at] ^= 0xFF
    with pytest.raises(ModelFileError, match="corrupt"):
        model_from_bytes(bytes(data))


def test_released_model_is_a_model_of_its_config(released):
    assert isinstance(released.model, ReleasedModel)
    assert tuple(released.model.model.sizes) == released.model.config.domain.sizes


@pytest.mark.parametrize(("algorithm", "kind"), [("laplace", "graphical"), ("mwem", "graphical"), ("mwem:paper", "factored"),
                                                 ("dualquery", "records")])
def test_every_model_kind_survives_the_file(algorithm, kind, tiny_raw_config, tiny_table):
    raw = dict(tiny_raw_config, algorithm={"name": algorithm.split(":")[0], "params": {"iterations": 2} if
                                           algorithm.startswith("mwem") else {}})
    if algorithm == "mwem:paper":
        raw["algorithm"]["params"]["variant"] = "paper"
    if algorithm == "dualquery":
        raw["privacy"] = {"epsilon": 1.0, "delta": 1e-6}
    result = dpsynth.release(tiny_table, parse_config(raw), rng=np.random.default_rng(2))
    assert result.report["model"]["kind"] == kind
    back = model_from_bytes(result.model.to_bytes())
    assert back.sha256 == result.report["model"]["sha256"]
    assert back.sample(3000, rng=np.random.default_rng(1)).equals(result.model.sample(3000, rng=np.random.default_rng(1)))



@pytest.mark.parametrize(("privacy", "mode"), [
    ({"epsilon": 1.0, "neighbouring": "add-remove", "n": {"epsilon": 0.2}}, "noisy"),
    ({"epsilon": 1.0, "neighbouring": "add-remove", "n": "public"}, "public"),
    ({"epsilon": 1.0, "neighbouring": "replace-one"}, "public"),
])
def test_the_model_file_states_the_guarantee_of_its_release(privacy, mode, tiny_raw_config, tiny_table):
    """The model file's own guarantee statement, read back from its bytes: config.json says whether n was
    public (and the ε of its noisy count when not), release.json's privacy section is the report's, and the
    reloaded config has the same n.  A model that says "n public" for a release with n private overstates
    what is public (issue 24: no test read it)."""
    raw = {**tiny_raw_config, "privacy": privacy}
    cfg = parse_config(raw)
    result = dpsynth.release(tiny_table, cfg, rng=np.random.default_rng(3))
    data = result.model.to_bytes()
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        config_doc = json.loads(zf.read("config.json"))
        release_doc = json.loads(zf.read("release.json"))
    n_doc = config_doc["privacy"]["n"]
    assert n_doc == ("public" if mode == "public" else {"epsilon": 0.2})
    assert config_doc["privacy"]["neighbouring"] == privacy["neighbouring"]
    assert release_doc["privacy"] == result.report["privacy"]
    assert release_doc["privacy"]["n"]["mode"] == mode
    statement = release_doc["privacy"]["n"]["statement"]
    assert statement.startswith("n is private") if mode == "noisy" else "public" in statement
    back = model_from_bytes(data)
    assert back.config.privacy.n_public == cfg.privacy.n_public == (mode == "public")
    assert back.config.privacy.n_epsilon == cfg.privacy.n_epsilon
    assert back.privacy == result.report["privacy"]


# ----------------------------------------------------------------------------- ReleasedModel.save
def test_save_writes_the_cli_model_file(released, tmp_path):
    """``save(path, report=...)`` writes the bytes ``dpsynth release --model`` writes (the report linked)."""
    from dpsynth.data.io import json_bytes

    path = tmp_path / "m.dpm"
    assert released.model.save(path, report=released.report) == path
    cli_bytes = released.model.with_report(json_bytes(released.report)).to_bytes()
    assert path.read_bytes() == cli_bytes
    manifest = json.loads(zipfile.ZipFile(path).read("manifest.json"))
    assert manifest["report_sha256"] == sha256(json_bytes(released.report))
    plain = tmp_path / "plain.dpm"
    released.model.save(str(plain))
    assert plain.read_bytes() == released.model.to_bytes() and load_model(plain).report_sha256 is None
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.dpm", "plain.dpm"]  # no temporary file left


def test_save_keeps_an_existing_file_unless_forced(released, tmp_path):
    from dpsynth.errors import OutputError

    path = tmp_path / "m.dpm"
    path.write_bytes(b"old")
    with pytest.raises(OutputError, match=re.escape(f"output exists: {path} (use --force to overwrite)")):
        released.model.save(path)
    assert path.read_bytes() == b"old"
    released.model.save(path, force=True)
    assert load_model(path).sha256 == released.model.sha256
    with pytest.raises(OutputError, match=re.escape(f"cannot create output {tmp_path / 'no' / 'm.dpm'}: directory")):
        released.model.save(tmp_path / "no" / "m.dpm")


def test_save_is_atomic(released, tmp_path, monkeypatch):
    """A failure at the rename leaves the old file as it was and no temporary file behind."""
    from dpsynth.data import io as dio
    from dpsynth.errors import OutputError

    path = tmp_path / "m.dpm"
    path.write_bytes(b"old")

    def fail(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(dio.os, "replace", fail)
    with pytest.raises(OutputError, match=re.escape("cannot create output: No space left on device")):
        released.model.save(path, force=True)
    assert path.read_bytes() == b"old" and [p.name for p in tmp_path.iterdir()] == ["m.dpm"]
