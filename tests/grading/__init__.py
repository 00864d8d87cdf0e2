"""The grader's tests.

``SEED`` is the inputs' seed every test file that grades uses: the package's
results for a seed (``grader.prepared``, about a minute) are computed once a
test process, not once a file.
"""

SEED = 11
