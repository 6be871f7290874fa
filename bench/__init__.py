"""posenc benchmark: `python -m bench` prints a table and writes bench/results.json.

Sections: encoding, score matrices, collisions, pages (AppTest run time and payload),
cold start and server memory (real server + headless Chromium).  Goals are checked here, never
by timed tests.
"""
