"""The slow loop references every fast path is held to, written from SPEC.md (docs/equations.md):
attention.py (every score and mechanism), decoders.py (the Bahdanau and Luong decoders),
lstmn.py (the LSTMN). They live with the tests: nothing in attnlab runs them."""
