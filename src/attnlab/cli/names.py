"""The names and numbers the parser shows that live in modules importing torch, copied here so
that building the parser (`attnlab --help`, every `attnlab X --help`) imports none of them:
importing any attnlab.data or attnlab.translation module imports its package, and with it
torch (about 2 s of a 2-core machine's start). tests/cli/test_startup.py holds each copy equal
to its source, so that the two cannot drift; a command imports its source when it runs.
"""

# attnlab.translation.alignment.METHODS's keys: the symmetrisation heuristics of `attnlab align`
SYMMETRISATIONS = ("intersection", "union", "grow-diag", "grow-diag-final", "grow-diag-final-and")

# attnlab.data.multi30k
MULTI30K_LANGUAGES = ("cs", "de", "en", "fr")
MULTI30K_URL = "https://raw.githubusercontent.com/multi30k/dataset/master/data/task1/raw"

# attnlab.data.rwth
RWTH_URL = ("https://raw.githubusercontent.com/lisasiyu/Cross-Align/"
            "e8b2710c69eeed03e570e4a252af9b4a3a4eef98/data")
RWTH_PAIRS = 508

# attnlab.data.wmt_news
WMT_NEWS_URL = ("https://raw.githubusercontent.com/Helsinki-NLP/OPUS-MT-testsets/"
                "ac0f19c0be3cb4e0d9450fcb2d7a9847c4bdd180/testsets/deu-eng")
WMT_NEWS_VALID, WMT_NEWS_TEST = "newstest2017", "newstest2018"

# attnlab.data.dates: RECENT_SHARE, NOT_A_DATE, and the default world WIDE's fields
DATES_RECENT_SHARE = 0.5
NOT_A_DATE = "not a date"
DATES_FIRST_YEAR, DATES_LAST_YEAR, DATES_NOT_DATES = 1000, 2099, 0.05
